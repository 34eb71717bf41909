#!/usr/bin/env python3
"""Query benchmark: tern vs Oxigraph (pyoxigraph, in-process), with result checks.

Suites:
  bsbm-explore  BSBM 1M, Explore use case: mix0000 is the warm-up, mix0001... measured
  bsbm-bi       BSBM 1M, Business Intelligence use case: same layout
  watdiv-basic  WatDiv SF10, the 20 basic templates x 20 instances; the first
                instance of each template is also run once as warm-up

Each engine gets one long-lived process per suite, which opens the index once,
runs the warm-up queries once and then every query --runs times in a row:
`tern bench-queries` and bench/oxigraph_queries.py (in the peer venv), which
write the same records. A query that errors or passes --timeout has its
remaining runs skipped. A process stuck in one query well past the timeout, or
crashed, is killed and restarted after that query, which is recorded as failed.

Per query: median latency of its runs; per query type (BSBM) or template
(WatDiv): the median of those medians; per BSBM use case: QMpH = 3600 s / mean
time of a query mix, a mix's time being the sum of its queries' medians (over
the queries both engines answered). Results are cross-checked: same number of
rows and the same multiset of rows, terms compared as N-Triples strings, with
blank-node labels masked and columns matched by variable name; where they
differ, numbers are also compared by value, then floats with a tolerance, to
tell lexical or rounding differences from wrong answers. Tables and differences
go to stdout (Markdown), everything to bench/results/query-<date>.json.
"""
import argparse
import collections
import datetime
import json
import math
import os
import queue
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from benchlib import BENCH, DEFAULT_DATA, DEFAULT_PEER_PYTHON, DEFAULT_TERN, SHARED, decompress, git_commit, \
    machine, tool_version

ENGINES = ("tern", "oxigraph")
SUITES = ("bsbm-explore", "bsbm-bi", "watdiv-basic")
DATASETS = {"bsbm-1m": "bsbm-1m/dataset.nt.zst", "watdiv-10": "watdiv-10/watdiv.10.nt.zst"}
SAMPLES = 5  # differing rows shown per side


@dataclass(eq=False)
class Query:
    file: Path
    name: str  # unique in its suite: mix0001/00-q01.rq, C1-00.rq
    group: str  # BSBM query number (q01) or WatDiv template (C1)
    mix: str | None


@dataclass
class Suite:
    name: str
    dataset: str
    queries: list[Query]
    warmup: list[Path]


def bsbm_suite(name: str, folder: Path, mixes: int | None) -> Suite:
    # Files are NN-qXX.rq: position in the mix, BSBM query number. The first
    # mix is the warm-up (mix0000 in ../shared's BSBM 1M, mix0001 in what
    # tools/bsbm/generate.sh writes).
    dirs = sorted(d for d in folder.iterdir() if d.is_dir() and d.name.startswith("mix"))
    warmup, measured = dirs[0], dirs[1:]
    if mixes is not None:
        measured = measured[:mixes]
    queries = [Query(f, f"{d.name}/{f.name}", f.stem.split("-")[1], d.name)
               for d in measured for f in sorted(d.glob("*.rq"))]
    return Suite(name, "bsbm-1m", queries, sorted(warmup.glob("*.rq")))


def watdiv_suite(folder: Path, work: Path) -> Suite:
    # One query per line in TEMPLATE.lines.rq; each becomes its own file.
    out = work / "watdiv-queries"
    out.mkdir(parents=True, exist_ok=True)
    queries, warmup = [], []
    for lines in sorted(folder.glob("*.lines.rq")):
        template = lines.name.split(".")[0]
        for i, text in enumerate(l for l in lines.read_text().splitlines() if l.strip()):
            f = out / f"{template}-{i:02d}.rq"
            f.write_text(text + "\n")
            queries.append(Query(f, f.name, template, None))
            if i == 0:
                warmup.append(f)
    return Suite("watdiv-basic", "watdiv-10", queries, warmup)


# --- running the engines --------------------------------------------------

def supervise(cmd: list[str], hard_limit: float) -> tuple[int, tuple[str, str] | None, str]:
    """Run cmd, following its start/end progress lines on stderr. Kill it if
    one execution runs past hard_limit seconds. Returns (exit code, the
    (phase, file) it was in when killed or when it died, other stderr)."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, errors="replace")
    lines: queue.Queue = queue.Queue()

    def read():
        for line in p.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    current, since, other, killed = None, 0.0, collections.deque(maxlen=40), False
    while True:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if current and not killed and time.monotonic() - since > hard_limit:
                p.kill()
                killed = True
            continue
        if line is None:
            break
        parts = line.split("\t", 3)
        if len(parts) == 4 and parts[0] == "start":
            current, since = (parts[1], parts[3]), time.monotonic()
        elif len(parts) == 4 and parts[0] == "end":
            current = None
        else:
            other.append(line)
    rc = p.wait()
    return rc, (current if rc != 0 else None), "\n".join(other)


def run_engine(engine: str, base_cmd: list[str], suite: Suite, args, work: Path) -> dict:
    """Records by query file; restarts the engine after a query that hangs or crashes it."""
    records: dict[str, dict] = {}
    remaining = [str(q.file) for q in suite.queries]
    warmup = [str(f) for f in suite.warmup]
    hard_limit = args.timeout + max(10.0, args.timeout / 2)
    attempt = 0
    started = time.perf_counter()
    while remaining:
        attempt += 1
        jsonl = work / f"{suite.name}-{engine}-{attempt}.jsonl"
        cmd = base_cmd + ["--runs", str(args.runs), "--timeout", str(args.timeout), "--json", str(jsonl),
                          "--dump-dir", str(work / f"{suite.name}-{engine}-dumps-{attempt}")]
        for f in warmup:
            cmd += ["--warmup", f]
        rc, stuck, stderr = supervise(cmd + remaining, hard_limit)
        if jsonl.exists():
            for line in jsonl.read_text().splitlines():
                rec = json.loads(line)
                records[rec["file"]] = rec
        if rc != 0:
            if stuck is None:
                sys.exit(f"{engine} failed ({rc}) outside any query:\n{' '.join(cmd[:12])} ...\n{stderr[-4000:]}")
            phase, f = stuck
            how = (f"killed by the harness after {hard_limit:.0f} s" if rc in (-9, 137)
                   else f"process died (exit {rc}): {stderr[-1000:].strip()}")
            print(f"  {engine}: {phase} {f}: {how}", file=sys.stderr)
            if phase == "warmup":
                warmup.remove(f)
            else:
                records[f] = {"file": f, "name": Path(f).name, "kind": None, "variables": None, "runs_ms": [],
                              "median_ms": None, "min_ms": None, "rows": None, "rows_per_run": None,
                              "error": how, "timeout": rc in (-9, 137), "dump": None}
                # Kept with the others, for --reuse.
                with open(work / f"{suite.name}-{engine}-killed.jsonl", "a") as out:
                    out.write(json.dumps(records[f]) + "\n")
        remaining = [f for f in remaining if f not in records]
    print(f"  {engine}: {len(records)} queries x {args.runs} runs in {time.perf_counter() - started:.0f} s"
          f" ({attempt} process{'es' if attempt > 1 else ''})", file=sys.stderr)
    return records


def read_records(work: Path, suite: Suite, engine: str) -> dict[str, dict]:
    """The records an earlier --keep run left in work, keyed by this suite's query files."""
    def key(f):  # mix0001/00-q01.rq, watdiv-queries/C1-00.rq: the same in every work directory
        return "/".join(Path(f).parts[-2:])
    found = {}
    for jsonl in sorted(work.glob(f"{suite.name}-{engine}-*.jsonl")):
        for line in jsonl.read_text().splitlines():
            rec = json.loads(line)
            found[key(rec["file"])] = rec
    if missing := [q.name for q in suite.queries if key(q.file) not in found]:
        sys.exit(f"{work}: no {engine} record for {len(missing)} {suite.name} queries, e.g. {missing[0]}")
    return {str(q.file): found[key(q.file)] for q in suite.queries}


def prepare(args, dataset: str, work: Path, engines: list[str]) -> dict[str, list[str]]:
    """Decompress the data set if needed, build both engines' indexes; the command prefix per engine."""
    data = args.data / f"{dataset}.nt"
    if not data.exists():
        print(f"decompressing {dataset} to {data}", file=sys.stderr)
        args.data.mkdir(parents=True, exist_ok=True)
        decompress(args.shared / "datasets" / DATASETS[dataset], data)
    cmds = {}
    if "tern" in engines:
        index = work / f"tern-{dataset}"
        subprocess.run([str(args.tern), "load", "--index", str(index), "--force", str(data)], check=True,
                       capture_output=True)
        cmds["tern"] = [str(args.tern), "bench-queries", "--index", str(index)]
    if "oxigraph" in engines:
        store = work / f"oxigraph-{dataset}"
        shutil.rmtree(store, ignore_errors=True)
        child = str(BENCH / "oxigraph_queries.py")
        out = subprocess.run([str(args.peer_python), child, "load", "--store", str(store), str(data)], check=True,
                             capture_output=True, text=True).stdout
        args.oxigraph_version = json.loads(out)["version"]
        cmds["oxigraph"] = [str(args.peer_python), child, "bench", "--store", str(store)]
    print(f"{dataset}: indexes built", file=sys.stderr)
    return cmds


# --- comparing results ----------------------------------------------------

TERM = re.compile(r'<[^>]*>|_:\S+|"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?')
XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC = {XSD + t for t in ("integer", "decimal", "float", "double", "int", "long", "short", "byte",
                             "nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger",
                             "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte")}
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"\^\^<([^>]*)>')


def mask_bnodes(cell: str) -> str:
    return TERM.sub(lambda m: "_:*" if m.group(0).startswith("_:") else m.group(0), cell)


def by_value(cell: str) -> str:
    """Numeric literals replaced by their value: xsd:float compared as 32-bit,
    xsd:double as 64-bit floats, the rest as decimals."""
    def canon(m):
        lexical, datatype = m.group(1), m.group(2)
        if datatype not in NUMERIC:
            return m.group(0)
        try:
            v = Decimal(lexical)
        except InvalidOperation:
            return m.group(0)
        if not v.is_finite():
            return f"num:{v}"
        if datatype == XSD + "float":
            return "num:f" + struct.pack("<f", float(v)).hex()
        if datatype == XSD + "double":
            return "num:d" + float(v).hex()
        return f"num:{v.normalize()}"
    return LITERAL.sub(canon, cell)


def close(a: collections.Counter, b: collections.Counter, rel: float = 1e-5) -> bool:
    """Equal but for floats and doubles within `rel` of each other."""
    def split(line):
        values = []

        def cut(m):
            if m.group(2) in (XSD + "float", XSD + "double"):
                try:
                    values.append(float(m.group(1)))
                    return "num"
                except ValueError:
                    pass
            return m.group(0)
        return LITERAL.sub(cut, line), values

    def groups(c):
        g = collections.defaultdict(list)
        for line in c.elements():
            skeleton, values = split(line)
            g[skeleton].append(values)
        return {k: sorted(v) for k, v in g.items()}
    ga, gb = groups(a), groups(b)
    return ga.keys() == gb.keys() and all(
        len(ga[k]) == len(gb[k]) and all(math.isclose(x, y, rel_tol=rel) for va, vb in zip(ga[k], gb[k])
                                         for x, y in zip(va, vb)) for k in ga)


def load_rows(rec: dict, columns: list[str] | None) -> list[str]:
    lines = Path(rec["dump"]).read_text().splitlines() if rec.get("dump") else []
    if columns is not None and rec["variables"] != columns:
        pos = [rec["variables"].index(v) for v in columns]
        lines = ["\t".join(cells[i] for i in pos) for cells in (l.split("\t") for l in lines)]
    return lines


def same(a: collections.Counter, b: collections.Counter, key) -> bool:
    return collections.Counter(map(key, a.elements())) == collections.Counter(map(key, b.elements()))


def compare(query: Query, t: dict, o: dict) -> dict | None:
    """None if both engines agree, else what differs."""
    diff = {"query": query.name, "file": str(query.file), "tern_rows": t["rows"], "oxigraph_rows": o["rows"]}
    for engine, rec in (("tern", t), ("oxigraph", o)):
        if rec.get("rows_per_run"):
            diff.setdefault("notes", []).append(f"{engine} rows vary between runs: {rec['rows_per_run']}")
    if t["error"] or o["error"]:
        diff["tern_error"], diff["oxigraph_error"] = t["error"], o["error"]
        if t["rows"] is None and o["rows"] is None:
            return {**diff, "kind": "both failed"}
        if t["rows"] is None:
            return {**diff, "kind": "tern timeout" if t["timeout"] else "tern error"}
        if o["rows"] is None:
            return {**diff, "kind": "oxigraph timeout" if o["timeout"] else "oxigraph error"}
        for engine, rec in (("tern", t), ("oxigraph", o)):
            if rec["error"]:
                diff.setdefault("notes", []).append(
                    f"{engine}: {len(rec['runs_ms'])} run(s) within the timeout, then: {rec['error']}")
    if t["kind"] != o["kind"]:
        return {**diff, "kind": f"result kinds differ: tern {t['kind']}, oxigraph {o['kind']}"}
    columns = None
    if t["kind"] == "select":
        if sorted(t["variables"]) != sorted(o["variables"]):
            return {**diff, "kind": "different variables", "tern_variables": t["variables"],
                    "oxigraph_variables": o["variables"]}
        columns = sorted(t["variables"])
    tl, ol = load_rows(t, columns), load_rows(o, columns)
    masked = any("_:" in l for l in tl + ol)
    tc = collections.Counter(map(mask_bnodes, tl))
    oc = collections.Counter(map(mask_bnodes, ol))
    if tc == oc and t["rows"] == o["rows"]:
        return {**diff, "kind": "same results, but a run failed or varied"} if diff.get("notes") else None
    if t["rows"] != o["rows"]:
        diff["kind"] = "row count"
    elif same(tc, oc, by_value):
        diff["kind"] = "numbers: same values, other lexical forms"
    elif close(tc, oc):
        diff["kind"] = "numbers: floats differ in the last digits (rounding)"
    else:
        diff["kind"] = "rows"
    if masked:
        diff.setdefault("notes", []).append("blank-node labels masked")
    text = query.file.read_text()
    if re.search(r"order\s+by", text, re.I) and re.search(r"\b(limit|offset)\b", text, re.I):
        diff.setdefault("notes", []).append("ORDER BY with LIMIT/OFFSET: ties may select other rows")
    if columns:
        diff["columns"] = columns
    diff["only_tern"] = sorted((tc - oc).elements())[:SAMPLES]
    diff["only_oxigraph"] = sorted((oc - tc).elements())[:SAMPLES]
    diff["only_tern_count"] = sum((tc - oc).values())
    diff["only_oxigraph_count"] = sum((oc - tc).values())
    return diff


# --- summaries ------------------------------------------------------------

def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def summarize(suite: Suite, recs: dict[str, dict[str, dict]], engines: list[str]) -> dict:
    ok = [q for q in suite.queries if all(recs[e][str(q.file)]["median_ms"] is not None for e in engines)]
    groups = collections.defaultdict(list)
    for q in suite.queries:
        groups[q.group].append(q)
    per_group = {}
    for g, qs in sorted(groups.items()):
        row = {"queries": len(qs)}
        for e in engines:
            ms = [recs[e][str(q.file)]["median_ms"] for q in qs]
            done = [m for m in ms if m is not None]
            row[e] = {"median_ms": round(statistics.median(done), 3) if done else None,
                      "failed": len(ms) - len(done)}
        if len(engines) == 2:
            row["speedup"] = geomean([recs["oxigraph"][str(q.file)]["median_ms"] / recs["tern"][str(q.file)]["median_ms"]
                                      for q in qs if q in ok])
        per_group[g] = row
    out = {"queries": len(suite.queries), "answered_by_all": len(ok), "groups": per_group,
           "failed": {e: sum(recs[e][str(q.file)]["median_ms"] is None for q in suite.queries) for e in engines},
           "total_s": {e: sum(recs[e][str(q.file)]["median_ms"] for q in ok) / 1e3 for e in engines}}
    if len(engines) == 2:
        out["speedup_geomean"] = geomean([recs["oxigraph"][str(q.file)]["median_ms"] / recs["tern"][str(q.file)]["median_ms"]
                                          for q in ok])
    mixes = sorted({q.mix for q in suite.queries if q.mix})
    if mixes:
        out["mixes"] = len(mixes)
        out["qmph"] = {e: 3600 * len(mixes) / out["total_s"][e] if out["total_s"][e] else None for e in engines}
        out["qmph_over"] = f"{len(ok)} of {len(suite.queries)} queries (those all engines answered)"
    return out


def fmt_ms(x):
    return "—" if x is None else f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def median_cells(row: dict, engines: list[str]) -> list[str]:
    """Per engine, a query type's median latency and how many of its queries failed."""
    return [fmt_ms(row[e]["median_ms"]) + (f" ({row[e]['failed']} failed)" if row[e]["failed"] else "")
            for e in engines]


def markdown(results: dict, engines: list[str]) -> str:
    two = len(engines) == 2
    lines = ["| suite | queries | " + " | ".join(f"{e} failed" for e in engines) + " | "
             + " | ".join(f"{e} QMpH" for e in engines) + " | " + " | ".join(f"{e} total (s)" for e in engines)
             + (" | speed (geomean oxigraph/tern) | result differences |" if two else " |"),
             "|---|---:|" + "---:|" * (3 * len(engines)) + ("---:|---:|" if two else "")]
    for name, res in results.items():
        s = res["summary"]
        q = s.get("qmph", {})
        lines.append(f"| {name} | {s['queries']} | " + " | ".join(str(s["failed"][e]) for e in engines) + " | "
                     + " | ".join(f"{q[e]:,.0f}" if q.get(e) else "—" for e in engines) + " | "
                     + " | ".join(f"{s['total_s'][e]:.1f}" for e in engines)
                     + (f" | {s['speedup_geomean']:.2f}x | {len(res['differences'])} |" if two and s["speedup_geomean"]
                        else f" | — | {len(res['differences'])} |" if two else " |"))
    for name, res in results.items():
        lines += ["", f"**{name}**: median latency (ms) per query type, the median over its instances of "
                  "each instance's median run", "",
                  "| query | n | " + " | ".join(engines) + (" | speed |" if two else " |"),
                  "|---|---:|" + "---:|" * len(engines) + ("---:|" if two else "")]
        for g, row in res["summary"]["groups"].items():
            cells = median_cells(row, engines)
            sp = row.get("speedup")
            lines.append(f"| {g} | {row['queries']} | " + " | ".join(cells)
                         + (f" | {sp:.2f}x |" if sp else " | — |" if two else " |"))
    return "\n".join(lines)


def report_differences(results: dict) -> str:
    out = []
    for name, res in results.items():
        if not res["differences"]:
            continue
        by_kind = collections.Counter(d["kind"] for d in res["differences"])
        out.append(f"\n## {name}: {len(res['differences'])} queries differ "
                   f"({', '.join(f'{k}: {n}' for k, n in by_kind.items())})")
        for d in res["differences"]:
            out.append(f"- {d['query']} [{d['kind']}] rows: tern {d['tern_rows']}, oxigraph {d['oxigraph_rows']}")
            for key in ("tern_error", "oxigraph_error"):
                if d.get(key):
                    out.append(f"    {key}: {d[key][:300]}")
            for note in d.get("notes", []):
                out.append(f"    note: {note}")
            if d.get("columns"):
                out.append(f"    columns: {' '.join('?' + c for c in d['columns'])}")
            for side in ("only_tern", "only_oxigraph"):
                if d.get(side):
                    out.append(f"    {side} ({d[side + '_count']} rows), e.g.:")
                    out += [f"      {r[:300]}" for r in d[side][:2 if d["kind"].startswith("numbers") else SAMPLES]]
    return "\n".join(out)


def slim(rec: dict) -> dict:
    """A record for the report: times rounded to the microsecond, empty fields left out."""
    out = {}
    for k, v in rec.items():
        if k in ("file", "name", "dump", "variables") or v is None or v is False or v == []:
            continue
        if k in ("median_ms", "min_ms"):
            v = round(v, 3)
        elif k == "runs_ms":
            v = [round(x, 3) for x in v]
        out[k] = v
    return out


def to_json(o, depth: int = 0) -> str:
    """Indented JSON down to depth 4, one line per entry below (so a query is one line)."""
    if depth < 4 and isinstance(o, (dict, list)) and o:
        pad = " " * (depth + 1)
        items = ([f"{pad}{json.dumps(k)}: {to_json(v, depth + 1)}" for k, v in o.items()] if isinstance(o, dict)
                 else [pad + to_json(v, depth + 1) for v in o])
        opening, closing = "{}" if isinstance(o, dict) else "[]"
        return opening + "\n" + ",\n".join(items) + "\n" + " " * depth + closing
    return json.dumps(o, ensure_ascii=False)


def publish(report: dict, out: Path, tables: str, differences: str) -> None:
    """Writes the JSON report to `out` and prints the tables and the result differences."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_json(report) + "\n")
    print(tables)
    print(differences if differences else "\nNo result differences.")
    print(f"\nresults written to {out}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--peer-python", type=Path, default=DEFAULT_PEER_PYTHON,
                    help="python with pyoxigraph, from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of: tern,oxigraph")
    ap.add_argument("--suites", default=",".join(SUITES), help=f"comma-separated subset of: {','.join(SUITES)}")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per query (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=60, help="per execution, in seconds (default: %(default)s)")
    ap.add_argument("--explore-mixes", type=int, help="measure only the first N explore mixes (default: all 100)")
    ap.add_argument("--bi-mixes", type=int, help="measure only the first N BI mixes (default: all 20)")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared/ directory (default: %(default)s)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="plain N-Triples inputs, decompressed here if missing (default: %(default)s)")
    ap.add_argument("--tmp", type=Path, help="where indexes and result dumps go (default: --data)")
    ap.add_argument("--keep", action="store_true", help="keep the indexes, records and dumps")
    ap.add_argument("--reuse", type=Path, metavar="DIR",
                    help="do not run: compare and summarize the records kept in DIR by an earlier --keep run")
    ap.add_argument("--reuse-oxigraph", type=Path, metavar="DIR",
                    help="run tern only; take Oxigraph's records from DIR (an earlier --keep run, same settings)")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/query-<date>.json)")
    args = ap.parse_args()

    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    if unknown := set(args.engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    if unknown := set(suites) - set(SUITES):
        ap.error(f"unknown suite(s): {', '.join(sorted(unknown))}")
    # Engines whose records come from an earlier run, and from where.
    reused = {e: args.reuse for e in args.engines} if args.reuse else {}
    if args.reuse_oxigraph and "oxigraph" in args.engines:
        reused["oxigraph"] = args.reuse_oxigraph
    metas = {e: json.loads((d / "meta.json").read_text()) for e, d in reused.items()}
    to_run = [e for e in args.engines if e not in reused]
    if "tern" in to_run and not os.access(args.tern, os.X_OK):
        ap.error(f"no tern binary at {args.tern} (build it with `cargo build --release -p tern-cli`, or pass --tern)")
    if "oxigraph" in to_run and not os.access(args.peer_python, os.X_OK):
        ap.error(f"no {args.peer_python}: run bench/setup_peers.sh first")
    if metas:
        meta = next(iter(metas.values()))
        if to_run and (meta["runs"], meta["timeout_s"]) != (args.runs, args.timeout):
            ap.error(f"the reused records have --runs {meta['runs']} --timeout {meta['timeout_s']:g}: use the same")
        args.runs, args.timeout = meta["runs"], meta["timeout_s"]
    args.oxigraph_version = metas["oxigraph"]["oxigraph_version"] if "oxigraph" in metas else None
    if "tern" in metas:
        args.tern_version, args.tern = metas["tern"]["tern_version"], Path(metas["tern"]["tern_binary"])
        args.commit = metas["tern"]["git_commit"]
        started = datetime.datetime.fromisoformat(metas["tern"]["started"])
    else:
        args.tern_version = tool_version([str(args.tern), "--version"]) if "tern" in to_run else None
        args.commit = git_commit()
        started = datetime.datetime.now()
    args.tmp = args.tmp or args.data
    args.tmp.mkdir(parents=True, exist_ok=True)
    work = args.reuse or Path(tempfile.mkdtemp(prefix="query-bench-", dir=args.tmp))

    datasets_dir = args.shared / "datasets"
    all_suites = {
        "bsbm-explore": lambda: bsbm_suite("bsbm-explore", datasets_dir / "bsbm-1m/queries-explore", args.explore_mixes),
        "bsbm-bi": lambda: bsbm_suite("bsbm-bi", datasets_dir / "bsbm-1m/queries-bi", args.bi_mixes),
        "watdiv-basic": lambda: watdiv_suite(datasets_dir / "watdiv-10/queries-basic", work),
    }
    results, prepared = {}, {}
    try:
        for name in suites:
            suite = all_suites[name]()
            recs = {e: read_records(d, suite, e) for e, d in reused.items()}
            if to_run:
                if suite.dataset not in prepared:
                    prepared[suite.dataset] = prepare(args, suite.dataset, work, to_run)
                    (work / "meta.json").write_text(json.dumps({
                        "started": started.isoformat(timespec="seconds"), "git_commit": args.commit,
                        "runs": args.runs, "timeout_s": args.timeout, "oxigraph_version": args.oxigraph_version,
                        "tern_binary": str(args.tern), "tern_version": args.tern_version}))
                print(f"{name}: {len(suite.queries)} queries, {len(suite.warmup)} warm-up", file=sys.stderr)
                for e in to_run:
                    recs[e] = run_engine(e, prepared[suite.dataset][e], suite, args, work)
            differences = []
            if len(args.engines) == 2:
                for q in suite.queries:
                    d = compare(q, recs["tern"][str(q.file)], recs["oxigraph"][str(q.file)])
                    if d:
                        differences.append(d)
            results[name] = {
                "dataset": suite.dataset,
                "summary": summarize(suite, recs, args.engines),
                "differences": differences,
                "queries": [{"query": q.name, "group": q.group,
                             **{e: slim(recs[e][str(q.file)]) for e in args.engines}} for q in suite.queries],
            }
    finally:
        if args.keep or args.reuse:
            print(f"indexes, records and dumps kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    report = {
        "started": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "runs": args.runs,
        "timeout_s": args.timeout,
        "engines": {
            "tern": {"binary": str(args.tern), "version": args.tern_version,
                     "api": "tern bench-queries (Engine::query, results drained and decoded)"}
            if "tern" in args.engines else None,
            "oxigraph": {"version": args.oxigraph_version,
                         "api": "pyoxigraph Store.read_only(...).query, results drained (tuple(solution))",
                         **({"records_from_run_started": metas["oxigraph"]["started"]} if args.reuse_oxigraph else {})}
            if "oxigraph" in args.engines else None,
        },
        "git_commit": args.commit,
        "suites": results,
    }
    out = args.out or BENCH / "results" / f"query-{started:%Y-%m-%d}.json"
    publish(report, out, markdown(results, args.engines), report_differences(results))


if __name__ == "__main__":
    main()
