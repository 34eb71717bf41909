#!/usr/bin/env python3
"""Scale suite (issue 21): how tern's load and query figures grow with the data,
e.g. BSBM at 1M, 10M and 100M triples, one data set after another.

    python3 bench/scale_bench.py --data bsbm-1m=../shared/datasets/bsbm-1m/dataset.nt.zst \\
        bsbm-10m=/tmp/bsbm-10m/dataset.nt.zst bsbm-100m=/tmp/bsbm-100m/dataset.nt.zst
    python3 bench/scale_bench.py --quick --data bsbm-1m=../shared/datasets/bsbm-1m/dataset.nt.zst

Data sets are NAME=FILE, any file `tern load` reads (.zst too: the load time then
includes decompressing). A NAME starting with `watdiv` gets the WatDiv basic suite
(--watdiv-queries, as in http_query_bench.py), a NAME starting with `biblio` the
biblio-robust suite (bench/robustness: one query per shape, on the skewed
bibliography bench/biblio.py writes: `python3 bench/biblio.py OUT.nt --triples N`),
any other the BSBM explore and BI
suites, from the mixes ../shared/tools/bsbm/generate.sh wrote next to FILE
(queries-explore/mixNNNN/PP-qQQ.rq, queries-bi/...; --queries NAME=DIR for another
directory). Give each size its own mixes: their parameters are drawn from its data.

Per data set, in order:
1. Load: `tern load --index WORK/tern-NAME FILE` into a fresh directory: wall time,
   peak RSS (ru_maxrss from wait4, load_bench.measure), user+system CPU (the
   children's rusage around it), triples (`tern stats --json`), bytes on disk and
   per triple, triples/s. With --reuse an existing index is kept and the load
   figures are missing (null), not zero.
2. Serve: `tern serve --index ... --bind 127.0.0.1 --port P --timeout T`, started by
   http_query_bench.TernServer: time until it accepts connections, RSS then, and the
   peak RSS while the suites ran (VmHWM, reset through /proc/PID/clear_refs once
   started; read at the end).
3. Query: per suite, the warm-up mix once (untimed), then each query --runs times
   in a row over one persistent connection (http_query_bench.Client: form POST,
   SPARQL JSON or N-Triples, latency until the body is read and parsed). A failed or
   timed-out run fails the query and skips its other runs. Per query: the median
   run, and the server's CPU per run, from its utime+stime (/proc/PID/stat) before
   and after its runs, over the runs: clock ticks, so 10 ms resolution (per query
   type the ticks of all its instances' runs are summed first); and, finer, the sum
   of its threads' time on CPU (/proc/PID/task/*/schedstat, ns; misses threads that
   exit meanwhile). Per query type: the median over its instances; per suite:
   QMpH = 3600 s x mixes / sum of the medians of the queries answered
   (http_query_bench.summarize).
4. Characterize: after its timed runs, each answered query once more with
   explain=true (untimed; a numbered trailing comment makes the server parse it
   anew, where its parse cache would answer the timed runs' text):
   parse, plan, execute and total ms, result rows, and from the operator profile
   the rows out of scans (Scan, PathScan), the blocks the scans went through, the
   lookups of lookup joins (IndexJoin, SemiJoin, AntiJoin, BindLeftJoin) and the
   rows out of all operators. What the server does not expose is listed in the
   report's "not_exposed".

Output: Markdown on stdout: a load table, a serving table, per suite a curve table
(median ms per query type at each data set, smallest first, the ratio of each to
the smallest, and QMpH) and the characterization of the largest data set; the JSON
report (every run, per query its profile figures, per query type the first
instance's whole profile tree) goes to bench/results/scale-<date>.json (--out),
rewritten after each data set. --quick: the first data set only, one mix per BSBM
suite, one run.
"""
import argparse
import datetime
import http.client
import itertools
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import types
import urllib.parse
from pathlib import Path

from benchlib import BENCH, DEFAULT_TERN, SHARED, git_commit, machine, stop_on_sigterm, tool_version
from http_query_bench import (BIBLIO_QUERIES, JSON_RESULTS, Client, TernServer, biblio_suite, is_graph_query,
                              new_record, slim, summarize)
from load_bench import dir_bytes, measure
from query_bench import bsbm_suite, fmt_ms, to_json, watdiv_suite

CLK_TCK = os.sysconf("SC_CLK_TCK")
EXPLAINED = itertools.count(1)  # numbers the comment that makes each explained text new to the parse cache
SCANS = {"Scan", "PathScan"}
LOOKUP_JOINS = {"IndexJoin", "SemiJoin", "AntiJoin", "BindLeftJoin"}  # their profile's blocks_read counts lookups
TIMES = ("parse_ms", "plan_ms", "execute_ms", "total_ms")
COUNTS = ("rows", "scan_rows", "blocks_read", "lookups", "operator_rows", "memory_peak_bytes")
NOT_EXPOSED = [
    "blocks decoded vs found in the block cache: a Scan's blocks_read counts every block it went through, cached or not",
    "blocks (or bytes) read by lookup joins: their profile gives the number of lookups only",
    "CPU time per query: not reported; measured from outside, the server process's utime+stime (clock ticks) "
    "and its threads' schedstat time, HTTP and serialization included",
    "I/O per query (page faults, bytes read from disk)",
    "the work of a DESCRIBE's descriptions and of a FILTER (NOT) EXISTS pattern: the profile shows the Describe or "
    "Filter node with its input only, not the scans they do",
]


def parse_pairs(ap, items: list[str], what: str) -> dict[str, Path]:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            ap.error(f"{what}: expected NAME=PATH, not {item!r}")
        out[name] = Path(path).expanduser().resolve()
    return out


# --- load -----------------------------------------------------------------

def load(args, name: str, data: Path, index: Path) -> dict | None:
    """Builds the index (None when --reuse keeps an existing one)."""
    if args.reuse and index.exists():
        print(f"{name}: reusing {index}, no load figures", file=sys.stderr)
        return None
    shutil.rmtree(index, ignore_errors=True)
    cmd = [str(args.tern), "load", "--index", str(index)]
    if args.tern_memory:
        cmd += ["--memory", args.tern_memory]
    cmd.append(str(data))
    print(f"{name}: loading {data}", file=sys.stderr)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = measure(cmd)  # reaps the child with wait4: its times are added to RUSAGE_CHILDREN
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.sync()  # the index's dirty pages are written back now, not during the queries
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"cmd": cmd, "wall_s": round(r["wall_s"], 3), "peak_rss_bytes": r["peak_rss_bytes"],
            "cpu_user_s": round(user, 3), "cpu_system_s": round(system, 3), "cpu_s": round(user + system, 3),
            "output": r["stderr"].strip()[-2000:]}


def index_stats(args, index: Path) -> dict:
    s = json.loads(subprocess.run([str(args.tern), "stats", "--index", str(index), "--json"], check=True,
                                  capture_output=True, text=True).stdout)
    apparent, allocated = dir_bytes(index)
    return {"triples": s["triples"], "statements_read": s.get("statements_read"), "distinct_terms": s.get("distinct_terms"),
            "index_bytes": s["index_bytes"], "disk_bytes": apparent, "disk_alloc_bytes": allocated,
            "bytes_per_triple": round(apparent / max(1, s["triples"]), 2),
            "tern_bytes_per_triple": s.get("bytes_per_triple"), "build_s": s.get("total_seconds"),
            "phases": s.get("phases")}


# --- the server process -----------------------------------------------------

def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def thread_cpu_ns(pid: int) -> dict[str, int]:
    """Time on CPU of each live thread, in ns (/proc/PID/task/TID/schedstat): finer
    than clock ticks, but a thread that exits takes its time with it."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return out


def cpu_ns_since(pid: int, before: dict[str, int]) -> int:
    return sum(ns - before.get(tid, 0) for tid, ns in thread_cpu_ns(pid).items())


def status_bytes(pid: int, key: str) -> int | None:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return None


def reset_peak_rss(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: VmHWM := VmRSS (Linux 4.0+)
        return True
    except OSError:
        return False


# --- queries --------------------------------------------------------------

def explain(client: Client, text: str) -> dict:
    """One untimed run with explain=true: the server's timings and, summed from
    the operator profile, what the scans and lookup joins did."""
    body = urllib.parse.urlencode({"query": text.rstrip("\n") + f"\n# scale_bench explain {next(EXPLAINED)}\n", "explain": "true"})
    try:
        conn = client.connection()
        conn.request("POST", client.server.path, body=body.encode(),
                     headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": JSON_RESULTS})
        resp = conn.getresponse()
        data = resp.read()
        if resp.will_close:
            client.drop()
    except (OSError, http.client.HTTPException) as e:
        client.drop()
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    if resp.status != 200:
        return {"error": f"HTTP {resp.status}: {data[:300].decode('utf-8', 'replace').strip()}"}
    report = json.loads(data)
    out = {k: report.get(k) for k in ("rows", "queue_ms", "memory_peak_bytes") + TIMES}
    out.update(operators=0, operator_rows=0, scans=0, scan_rows=0, blocks_read=0, lookup_joins=0, lookups=0)

    def walk(node):
        out["operators"] += 1
        out["operator_rows"] += node["rows"]
        if node["operator"] in SCANS:
            out["scans"] += 1
            out["scan_rows"] += node["rows"]
            out["blocks_read"] += node.get("blocks_read") or 0
        elif node["operator"] in LOOKUP_JOINS:
            out["lookup_joins"] += 1
            out["lookups"] += node.get("blocks_read") or 0
        for child in node["children"]:
            walk(child)

    walk(report["profile"])
    out["profile"] = report["profile"]
    return out


def run_suite(args, server, client: Client, suite) -> dict:
    pid, t0 = server.proc.pid, time.monotonic()
    warmup_failures = []
    for f in suite.warmup:
        text = f.read_text()
        r = client.execute(text, is_graph_query(text))
        if r["error"]:
            warmup_failures.append({"query": f"{f.parent.name}/{f.name}", "error": r["error"]})
    print(f"  {suite.name}: warm-up ({len(suite.warmup)} queries) in {time.monotonic() - t0:.0f} s, "
          f"{len(warmup_failures)} failed", file=sys.stderr)
    records, cpu_start, done_mix = [], cpu_ticks(pid), None
    for i, q in enumerate(suite.queries):
        if q.mix != done_mix:
            done_mix = q.mix
            print(f"  {q.mix} ({i}/{len(suite.queries)} queries, {time.monotonic() - t0:.0f} s)", file=sys.stderr)
        text = q.file.read_text()
        graph = is_graph_query(text)
        rec, rows = new_record(), []
        ticks, threads = cpu_ticks(pid), thread_cpu_ns(pid)
        for _ in range(args.runs):
            r = client.execute(text, graph)
            if r["error"]:
                rec.update(error=r["error"], timeout=r["timeout"], failed_run_ms=round(r["ms"], 3))
                break
            rec["runs_ms"].append(r["ms"])
            rows.append(r["rows"])
        rec["cpu_ns"], rec["cpu_ticks"] = cpu_ns_since(pid, threads), cpu_ticks(pid) - ticks
        tried = len(rows) + bool(rec["error"])
        rec["cpu_ms_per_run"] = round(rec["cpu_ticks"] * 1e3 / CLK_TCK / tried, 3)
        rec["thread_cpu_ms_per_run"] = round(rec["cpu_ns"] / 1e6 / tried, 3)
        if rec["error"]:
            if rec["runs_ms"]:
                rec["error"] = f"{len(rec['runs_ms'])} run(s) answered, then: {rec['error']}"
        else:
            rec.update(median_ms=statistics.median(rec["runs_ms"]), min_ms=min(rec["runs_ms"]), rows=rows[0])
            if len(set(rows)) > 1:
                rec["rows_per_run"] = rows
            rec["explain"] = explain(client, text)
        records.append({"query": q.name, "group": q.group, "mix": q.mix, "tern": slim(rec)})
    elapsed = time.monotonic() - t0
    summary = summarize(records, ["tern"])
    summary["characterization"] = characterize(records)
    print(f"  {suite.name}: {len(records)} queries x {args.runs} runs in {elapsed:.0f} s, "
          f"{summary['failed']['tern']} failed", file=sys.stderr)
    # The whole profile tree of each query type's first instance only; the sums of all.
    seen = set()
    for r in records:
        ex = r["tern"].get("explain")
        if ex and "profile" in ex and r["group"] in seen:
            del ex["profile"]
        elif ex and "profile" in ex:
            seen.add(r["group"])
    return {"summary": summary, "elapsed_s": round(elapsed, 1), "cpu_s": (cpu_ticks(pid) - cpu_start) / CLK_TCK,
            "warmup_failures": warmup_failures, "records": records}


def characterize(records: list[dict]) -> dict:
    """Per query type: the median over its answered instances of each explain
    figure, and the server CPU per run over all their runs."""
    out = {}
    for g in sorted({r["group"] for r in records}):
        recs = [r["tern"] for r in records if r["group"] == g and r["tern"].get("median_ms") is not None]
        ex = [r["explain"] for r in recs if "error" not in r.get("explain", {"error": 1})]
        row = {k: statistics.median(e[k] for e in ex) for k in TIMES + COUNTS if ex and None not in (e[k] for e in ex)}
        runs = sum(len(r["runs_ms"]) for r in recs)
        row["cpu_ms_per_run"] = round(sum(r["cpu_ticks"] for r in recs) * 1e3 / CLK_TCK / runs, 3) if runs else None
        row["thread_cpu_ms_per_run"] = round(sum(r["cpu_ns"] for r in recs) / 1e6 / runs, 3) if runs else None
        row["explain_failed"] = len(recs) - len(ex)
        out[g] = row
    return out


def serve_and_query(args, name: str, suites: list) -> dict:
    ns = types.SimpleNamespace(tern=args.tern, work=args.work, dataset=name, timeout=args.timeout,
                               tern_args=args.tern_args)  # TernServer serves WORK/tern-NAME
    t = time.monotonic()
    with TernServer(ns) as server:
        pid, start_s = server.proc.pid, time.monotonic() - t
        serving = {"cmd": server.cmd, "pid": pid, "start_s": round(start_s, 2),
                   "rss_after_start_bytes": status_bytes(pid, "VmRSS"), "peak_rss_reset": reset_peak_rss(pid)}
        print(f"{name}: serving (pid {pid}, port {server.port}) after {start_s:.1f} s", file=sys.stderr)
        # Rows counted as they come: a skewed data set's answers reach gigabytes.
        client = Client(server, args.timeout, max(10.0, args.timeout / 2), count_only=True)
        results = {s.name: run_suite(args, server, client, s) for s in suites}
        serving["peak_rss_bytes"] = status_bytes(pid, "VmHWM")
        serving["rss_at_end_bytes"] = status_bytes(pid, "VmRSS")
        serving["reconnects"] = client.reconnects
        client.drop()
    return {"serving": serving, "suites": results}


def suites_for(args, name: str, data: Path) -> list:
    if name.startswith("watdiv"):
        return [watdiv_suite(args.watdiv_queries, args.work / name)]
    if name.startswith("biblio"):  # the triple count only names the suite's dataset; the file is the data
        return [biblio_suite(BIBLIO_QUERIES, 0)]
    folder = args.queries.get(name, data.parent)
    return [bsbm_suite("bsbm-explore", folder / "queries-explore", args.explore_mixes),
            bsbm_suite("bsbm-bi", folder / "queries-bi", args.bi_mixes)]


# --- report ---------------------------------------------------------------

def mib(b) -> str:
    return "—" if b is None else f"{b / 2**20:,.0f}"


def num(x, fmt="{:,.0f}") -> str:
    return "—" if x is None else fmt.format(x)


def ratio(x, base) -> str:
    return "—" if x is None or not base else f"{x / base:.2f}"


def markdown(datasets: dict) -> str:
    names = sorted(datasets, key=lambda n: datasets[n]["index"]["triples"])
    lines = ["| data set | triples | load wall (s) | triples/s | load peak RSS (MiB) | load CPU user+sys (s) | "
             "on disk (MiB) | bytes/triple |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        ix, ld = datasets[n]["index"], datasets[n]["load"] or {}
        lines.append(f"| {n} | {ix['triples']:,} | {num(ld.get('wall_s'), '{:,.1f}')} | {num(ld.get('triples_per_s'))} "
                     f"| {mib(ld.get('peak_rss_bytes'))} | {num(ld.get('cpu_s'), '{:,.1f}')} | {mib(ix['disk_bytes'])} "
                     f"| {ix['bytes_per_triple']:.1f} |")
    lines += ["", "| data set | server start (s) | RSS after start (MiB) | peak RSS while querying (MiB) | "
              "server CPU in the suites (s) | queries failed |", "|---|---:|---:|---:|---:|---:|"]
    for n in names:
        s, suites = datasets[n]["serving"], datasets[n]["suites"].values()
        lines.append(f"| {n} | {s['start_s']:.1f} | {mib(s['rss_after_start_bytes'])} | {mib(s['peak_rss_bytes'])} | "
                     f"{sum(x['cpu_s'] for x in suites):,.1f} | {sum(x['summary']['failed']['tern'] for x in suites)} |")
    for suite in dict.fromkeys(s for n in names for s in datasets[n]["suites"]):
        sets = [n for n in names if suite in datasets[n]["suites"]]
        sums = [datasets[n]["suites"][suite]["summary"] for n in sets]
        base = sets[0]
        lines += ["", f"**{suite}**: median latency (ms) per query type (median over its instances of each one's "
                  f"median run); ratios: each data set over {base}", "",
                  "| query | " + " | ".join(f"{n} (ms)" for n in sets) + "".join(f" | {n} / {base}" for n in sets[1:])
                  + " |", "|---|" + "---:|" * (2 * len(sets) - 1)]
        for g in sorted({g for s in sums for g in s["groups"]}):
            ms = [s["groups"].get(g, {}).get("tern", {}).get("median_ms") for s in sums]
            fails = [s["groups"].get(g, {}).get("tern", {}).get("failed") for s in sums]
            cells = [fmt_ms(m) + (f" ({f} failed)" if f else "") for m, f in zip(ms, fails)]
            lines.append(f"| {g.upper()} | " + " | ".join(cells) + "".join(f" | {ratio(m, ms[0])}" for m in ms[1:]) + " |")
        qmph = [s["qmph"]["tern"] for s in sums]
        if any(qmph):
            lines.append("| **QMpH** | " + " | ".join(num(q) for q in qmph)
                         + "".join(f" | {ratio(q, qmph[0])}" for q in qmph[1:]) + " |")
        lines.append("| mixes, queries answered | " + " | ".join(f"{s['mixes']}, {s['answered_by_all']}/{s['queries']}"
                                                                for s in sums) + " |" * len(sets[1:]) + " |")
    big = names[-1]
    for suite, res in datasets[big]["suites"].items():
        lines += ["", f"**{suite} on {big}**: per query type, the median over its instances of one explain=true "
                  "run each; server CPU per timed run, the mean over all its instances' runs", "",
                  "| query | parse ms | plan ms | execute ms | result rows | scan rows | blocks read | lookups | "
                  "rows through operators | peak memory (bytes) | CPU ms/run (ticks) | CPU ms/run (threads) |",
                  "|---|" + "---:|" * 11]
        for g, c in res["summary"]["characterization"].items():
            lines.append(f"| {g.upper()} | " + " | ".join(num(c.get(k), "{:,.2f}") for k in TIMES[:3]) + " | "
                         + " | ".join(num(c.get(k)) for k in COUNTS) + f" | {num(c['cpu_ms_per_run'], '{:,.1f}')} "
                         f"| {num(c['thread_cpu_ms_per_run'], '{:,.2f}')} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, metavar="NAME=FILE", help="data sets, smallest first")
    ap.add_argument("--queries", nargs="*", default=[], metavar="NAME=DIR",
                    help="a BSBM data set's query mixes (default: the directory of its FILE)")
    ap.add_argument("--watdiv-queries", type=Path, default=SHARED / "datasets/watdiv-10/queries-basic",
                    help="WatDiv basic templates, *.lines.rq (default: %(default)s)")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-memory", help="passed to `tern load --memory`")
    ap.add_argument("--tern-args", type=shlex.split, default=[], metavar="'ARGS'",
                    help="more `tern serve` arguments, as one string (--tern-args='--workers 2')")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tern-scale"),
                    help="the indexes (tern-NAME) and the server log (default: %(default)s)")
    ap.add_argument("--reuse", action="store_true", help="keep an existing index: no load figures for it")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per query (default: %(default)s)")
    ap.add_argument("--explore-mixes", type=int, default=10, help="measured explore mixes (default: %(default)s)")
    ap.add_argument("--bi-mixes", type=int, default=4, help="measured BI mixes (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=120, help="per query, seconds (default: %(default)s)")
    ap.add_argument("--quick", action="store_true", help="the first data set only, one mix per BSBM suite, one run")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/scale-<date>.json)")
    args = ap.parse_args()

    data = parse_pairs(ap, args.data, "--data")
    args.queries = parse_pairs(ap, args.queries, "--queries")
    if args.quick:
        data = dict(list(data.items())[:1])
        args.runs, args.explore_mixes, args.bi_mixes = 1, 1, 1
    if not os.access(args.tern, os.X_OK):
        ap.error(f"no tern binary at {args.tern} (build it with `cargo build --release`, or pass --tern)")
    for name, path in data.items():  # before any load: a missing query directory should not wait for one
        if not path.is_file():
            ap.error(f"{name}: no file {path}")
        folder = args.queries.get(name, path.parent)
        need = ([args.watdiv_queries] if name.startswith("watdiv") else [BIBLIO_QUERIES] if name.startswith("biblio")
                else [folder / "queries-explore", folder / "queries-bi"])
        for d in need:
            if not d.is_dir():
                ap.error(f"{name}: no query directory {d} (--queries {name}=DIR, --watdiv-queries DIR)")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    stop_on_sigterm()

    started = datetime.datetime.now()
    out = args.out or BENCH / "results" / f"scale-{started:%Y-%m-%d}.json"
    report = {"benchmark": "scale", "started": started.isoformat(timespec="seconds"), "machine": machine(),
              "git_commit": git_commit(), "command": " ".join(sys.argv),
              "tern": {"binary": str(args.tern), "version": tool_version([str(args.tern), "--version"])},
              "runs": args.runs, "timeout_s": args.timeout, "quick": args.quick,
              "mixes": {"bsbm-explore": args.explore_mixes, "bsbm-bi": args.bi_mixes},
              "clock_ticks_per_s": CLK_TCK, "not_exposed": NOT_EXPOSED, "datasets": {}}
    for name, path in data.items():
        suites = suites_for(args, name, path)
        index = args.work / f"tern-{name}"
        loaded = load(args, name, path, index)
        stats = index_stats(args, index)
        if loaded:
            loaded["triples_per_s"] = round(stats["triples"] / loaded["wall_s"])
            print(f"{name}: {stats['triples']:,} triples in {loaded['wall_s']:.1f} s, "
                  f"{mib(loaded['peak_rss_bytes'])} MiB peak RSS, {stats['bytes_per_triple']:.1f} bytes/triple",
                  file=sys.stderr)
        report["datasets"][name] = {"file": str(path), "queries": {s.name: str(s.queries[0].file.parent.parent)
                                                                    for s in suites if s.queries},
                                    "load": loaded, "index": stats, **serve_and_query(args, name, suites)}
        report["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(to_json(report) + "\n")  # after each data set: a long run keeps what it measured
    print(markdown(report["datasets"]))
    print(f"\nresults written to {out}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the server was stopped)")
