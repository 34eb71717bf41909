#!/usr/bin/env python3
"""Query-time inference against materialization, over HTTP, in one run: Tern
answering OWL-RL queries over the stored data (rewriting each query, nothing
derived is stored) next to Tern, Oxigraph, Virtuoso and Fuseki over the materialized
data (every entailed triple stored, queries answered without inference).

Data: bench/university.py, a LUBM-like data set (--universities N, about 101 K
stored triples each, 1.7 times as many materialized; the default 100 gives ~10.1 M
stored and ~16.9 M materialized) with an ontology exercising every rule of
docs/inference.md. The generator writes both files, the materialized one by a
forward chainer of its own. Files are generated once into --work and reused.

Engines (http_query_bench.py's servers and client; started once, stopped by pid at
the end, also on Ctrl-C and errors):
  tern-inferred      tern serve over the stored file; every query is sent with the
                     protocol parameter inference=owl-rl
  tern-materialized  tern serve over the materialized file (no inference)
  oxigraph           oxigraph serve-read-only over the materialized file
  virtuoso           Virtuoso 7.2 (private instance as in ../shared/PEERS.md), the
                     materialized file in one named graph, queried with
                     default-graph-uri; no inference rules are enabled
  fuseki             Apache Jena Fuseki (the newest jena-fuseki-server jar in ~/.m2, on
                     Java 21+ from /usr/lib/jvm/temurin*, -Xmx --fuseki-heap) over a TDB2
                     store of the materialized file, read-only, --timeout as its limit per
                     query (endpoint /ds/sparql); Jena's best configuration for these
                     queries: its RDFS reasoner covers only part of the OWL-RL rules they
                     need. In the default --engines when Java and the jar are found (else
                     left out, with a message); named in --engines, a missing jar is
                     fetched with mvn

Load (timed, before the queries, one engine at a time): `tern load` of each file,
`oxigraph load` (and `oxigraph optimize`, timed apart), Virtuoso's bulk loader
(ld_dir, rdf_loader_run, checkpoint) into a fresh database, Jena's `tdb2.tdbloader
--loader=parallel` into a fresh TDB2 store; with --no-load, only the stores missing
from --work are built (an engine new to an earlier run's data); with the generator's
times, the report shows how long each engine takes from the stored data to a
queryable store (the materialized engines need the materialization first; the
generator's chainer is plain Python, so its time is an upper bound on what a
dedicated reasoner would take).

Queries: bench/inference/*.rq (one per rule or combination, and two LUBM joins;
each file says what it exercises). All of them once per engine as warm-up, then
--runs measured runs, interleaved per query (tern-inferred, tern-materialized,
oxigraph, virtuoso, fuseki, tern-inferred, ...). Per query: the median of its runs per
engine, tern-inferred / tern-materialized (the cost of inferring at query time in
the same engine) and tern-inferred / the fastest peer (above 1: tern is slower),
with their geometric means. Results are cross-checked between every pair of engines
(http_query_bench.compare): the materialized engines must agree with each other,
and tern-inferred with them, since the closure is what its rewriting must answer.

Markdown tables to stdout, everything (every run, load and generation times,
differences with sample rows) to bench/results/inference-<date>.json.

Needs: a release `tern` (--tern), `bash bench/setup_peers.sh`, `apt-get install
virtuoso-opensource`, for fuseki a Java 21+ and the jar (`mvn -q dependency:get
-Dartifact=org.apache.jena:jena-fuseki-server:RELEASE -Dtransitive=false`, as in
../shared/PEERS.md) (or --engines without them). Stdlib only.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import university
from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, DEFAULT_VENV, fetch_fuseki_jar, find_fuseki_jar, find_java, \
    fuseki_command, fuseki_version, stop_on_sigterm, tdb2_load, tool_version
from http_query_bench import OxigraphServer, Server, TernServer, VirtuosoServer, check_programs, graph_of, \
    report_differences, report_header, run_suite, virtuoso_dir
from query_bench import Query, Suite, fmt_ms, geomean, publish

ENGINES = ("tern-inferred", "tern-inferred-unkept", "tern-materialized", "oxigraph", "virtuoso", "fuseki")
PEERS = ("oxigraph", "virtuoso", "fuseki")
LABEL = {"tern-inferred": "tern inferred", "tern-inferred-unkept": "tern inferred, nothing kept",
         "tern-materialized": "tern materialized", "oxigraph": "Oxigraph",
         "virtuoso": "Virtuoso", "fuseki": "Fuseki"}
QUERIES = BENCH / "inference"


def for_dataset(args, dataset: str):
    """args with another dataset (the servers find their store by args.dataset)."""
    return types.SimpleNamespace(**{**vars(args), "dataset": dataset})


class TernInferred(TernServer):
    """tern serve over the stored data; every request asks for owl-rl."""
    name = "tern-inferred"
    extra = {"inference": "owl-rl"}

    def __init__(self, args):
        super().__init__(for_dataset(args, args.stored))


class TernInferredUnkept(TernInferred):
    """tern-inferred keeping no derived rows between queries (--extent-cache 0): what
    every query costs on a snapshot no earlier query read, as after each write."""
    name = "tern-inferred-unkept"

    def __init__(self, args):
        super().__init__(types.SimpleNamespace(**{**vars(args), "tern_args": ["--extent-cache", "0"]}))


class TernMaterialized(TernServer):
    name = "tern-materialized"

    def __init__(self, args):
        super().__init__(for_dataset(args, args.materialized))


class FusekiServer(Server):
    """Fuseki over the TDB2 store load() built of the dataset (read-only); its server
    state (FUSEKI_BASE) stays in --work too."""
    name = "fuseki"
    path = "/ds/sparql"

    def __enter__(self):
        a = self.args
        self.start(fuseki_command(a.java, a.fuseki_jar, a.fuseki_heap, self.port, a.work / f"fuseki-{a.dataset}",
                                  a.timeout), a.work / "fuseki-serve.log",
                   env={**os.environ, "FUSEKI_BASE": str(a.work / "fuseki-base")})
        return self


SERVERS = {"tern-inferred": TernInferred, "tern-inferred-unkept": TernInferredUnkept, "tern-materialized": TernMaterialized, "oxigraph": OxigraphServer,
           "virtuoso": VirtuosoServer, "fuseki": FusekiServer}


# --- data and loading ------------------------------------------------------

def generate(args) -> dict:
    """Both files, generated unless they are in --work with their statistics."""
    stored, materialized = args.data_nt[args.stored], args.data_nt[args.materialized]
    stats_file = args.work / f"{args.stored}.json"
    if stored.exists() and materialized.exists() and stats_file.exists():
        stats = json.loads(stats_file.read_text())
        print(f"reusing {stored.name} and {materialized.name} (generated {stats.get('generated')})", file=sys.stderr)
        return stats
    print(f"generating {args.universities} universities (seed {args.seed}) into {args.work}", file=sys.stderr)
    stats = university.generate(stored, materialized, args.universities, args.seed, args.jobs)
    stats["generated"] = datetime.datetime.now().isoformat(timespec="seconds")
    stats_file.write_text(json.dumps(stats, indent=1) + "\n")
    print(f"  {stats['stored']:,} stored, {stats['materialized']:,} materialized triples; generation "
          f"{stats['generation_s']} s, materialization {stats['materialization_s']} s", file=sys.stderr)
    return stats


def timed(cmd: list[str]) -> float:
    t = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    return round(time.monotonic() - t, 2)


def tern_triples(args, dataset: str) -> int | None:
    r = subprocess.run([str(args.tern), "stats", "--json", "--index", str(args.work / f"tern-{dataset}")],
                       capture_output=True, text=True)
    return json.loads(r.stdout).get("triples") if r.returncode == 0 else None


def load(args, stats: dict) -> dict:
    """Builds every engine's store from scratch, one at a time, timed (wall clock of
    the loading processes); with --no-load only those missing from --work. Checks
    tern's triple counts against the generator's."""
    out = {}

    def build(engine: str, store: Path) -> bool:
        return engine in args.engines and not (args.no_load and store.exists())

    for engine, dataset in (("tern-inferred", args.stored), ("tern-materialized", args.materialized)):
        if build(engine, args.work / f"tern-{dataset}"):
            s = timed([str(args.tern), "load", "--index", str(args.work / f"tern-{dataset}"), "--force", "-q",
                       str(args.data_nt[dataset])])
            n = tern_triples(args, dataset)
            expected = stats["stored" if dataset == args.stored else "materialized"]
            out[engine] = {"file": args.data_nt[dataset].name, "load_s": s, "triples": n}
            if n != expected:
                print(f"WARNING: {engine} holds {n} triples, the generator wrote {expected}", file=sys.stderr)
            print(f"  {engine}: tern load {s} s ({n:,} triples)", file=sys.stderr)
    nt = args.data_nt[args.materialized]
    store = args.work / f"oxigraph-{args.materialized}"
    if build("oxigraph", store):
        shutil.rmtree(store, ignore_errors=True)
        s = timed([str(args.oxigraph), "load", "--location", str(store), "--file", str(nt)])
        o = timed([str(args.oxigraph), "optimize", "--location", str(store)])
        out["oxigraph"] = {"file": nt.name, "load_s": s, "optimize_s": o}
        print(f"  oxigraph: load {s} s, optimize {o} s", file=sys.stderr)
    if build("virtuoso", virtuoso_dir(args, args.materialized)):
        shutil.rmtree(virtuoso_dir(args, args.materialized), ignore_errors=True)
        t = time.monotonic()
        with VirtuosoServer(for_dataset(args, args.materialized)) as v:  # a fresh database loads on its first start
            start_and_load = round(time.monotonic() - t, 2)
            s = round(v.inner.load_s, 2)
        out["virtuoso"] = {"file": nt.name, "load_s": s, "start_and_load_s": start_and_load,
                           "graph": graph_of(args.materialized)}
        print(f"  virtuoso: load {s} s (with the first start {start_and_load} s)", file=sys.stderr)
    store = args.work / f"fuseki-{args.materialized}"
    if build("fuseki", store):
        s = tdb2_load(args.java, args.fuseki_jar, args.fuseki_heap, store, nt)
        out["fuseki"] = {"file": nt.name, "load_s": s}
        print(f"  fuseki: tdb2.tdbloader {s} s", file=sys.stderr)
    return out


def check_closure(args) -> dict:
    """Everything tern answers under owl-rl over the stored data (CONSTRUCT of
    `?s ?p ?o`, by `tern query`) against the generator's materialized file, as sets of
    N-Triples lines; lines with blank nodes (the ontology's, stored in both) are left
    out, their labels differ. Holds both in memory: for small data sets."""
    out = args.work / f"{args.stored}-tern-closure.nt"
    t = time.monotonic()
    with open(out, "w") as f:
        subprocess.run([str(args.tern), "query", "--index", str(args.work / f"tern-{args.stored}"), "--inference",
                        "owl-rl", "--format", "ntriples", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"],
                       stdout=f, stderr=subprocess.DEVNULL, check=True)
    elapsed = round(time.monotonic() - t, 2)

    def lines(path: Path) -> set[str]:
        with open(path) as f:
            return {ln for ln in f if "_:" not in ln}
    tern, materialized = lines(out), lines(args.data_nt[args.materialized])
    found = {"tern_s": elapsed, "tern_triples": len(tern), "materialized_triples": len(materialized),
             "only_tern": len(tern - materialized), "only_materialized": len(materialized - tern),
             "only_tern_sample": sorted(tern - materialized)[:10],
             "only_materialized_sample": sorted(materialized - tern)[:10]}
    print(f"closure check: tern {len(tern):,} triples, materialized {len(materialized):,}; only tern "
          f"{found['only_tern']:,}, only materialized {found['only_materialized']:,}", file=sys.stderr)
    for key in ("only_tern_sample", "only_materialized_sample"):
        for ln in found[key][:3]:
            print(f"  {key.removesuffix('_sample')}: {ln.strip()}", file=sys.stderr)
    return found


# --- summary and tables ----------------------------------------------------

def summarize(records: list[dict], engines: list[str]) -> dict:
    """Per query: each engine's median, tern-inferred / tern-materialized and
    tern-inferred / the fastest peer's; their geometric means."""
    med = lambda r, e: r[e].get("median_ms") if e in r else None
    per_query = []
    for r in records:
        inferred, materialized = med(r, "tern-inferred"), med(r, "tern-materialized")
        peers = {p: med(r, p) for p in PEERS if med(r, p) is not None}
        best = min(peers, key=peers.get) if peers else None
        row = {"query": r["query"], "rows": next((r[e]["rows"] for e in engines if r[e].get("rows") is not None), None),
               "median_ms": {e: med(r, e) for e in engines}, "fastest_peer": best,
               "inferred_over_materialized": round(inferred / materialized, 3) if inferred and materialized else None,
               "inferred_over_fastest_peer": round(inferred / peers[best], 3) if inferred and best else None,
               "materialized_over_fastest_peer": round(materialized / peers[best], 3) if materialized and best
               else None}
        unkept = med(r, "tern-inferred-unkept")
        row["unkept_over_materialized"] = round(unkept / materialized, 3) if unkept and materialized else None
        row["unkept_over_fastest_peer"] = round(unkept / peers[best], 3) if unkept and best else None
        per_query.append(row)
    out = {"queries": len(records), "per_query": per_query,
           "failed": {e: sum(med(r, e) is None for r in records) for e in engines}}
    for key in ("inferred_over_materialized", "inferred_over_fastest_peer", "materialized_over_fastest_peer",
                "unkept_over_materialized", "unkept_over_fastest_peer"):
        ratios = [q[key] for q in per_query if q[key] is not None]
        out[key] = {"geomean": round(geomean(ratios), 3) if ratios else None, "queries": len(ratios),
                    "worst": max(((q[key], q["query"]) for q in per_query if q[key] is not None), default=None)}
    return out


def answer_differences(differences: list[dict]) -> list[str]:
    """The queries where two engines answered and their answers differ (failures
    and timeouts are in the table already)."""
    return [q["query"] for q in differences
            if any(all(n is not None for n in d["rows"].values()) for d in q["pairs"])]


def ratio(x) -> str:
    return "—" if x is None else f"{x:.2f}"


def markdown(report: dict) -> str:
    engines = list(report["engines"])
    data, loads = report["data"], report["load"]
    lines = [f"**Data**: {data['universities']} universities (seed {data['seed']}): {data['stored']:,} stored "
             f"triples, {data['materialized']:,} materialized ({data['entailed']:,} entailed); generator "
             f"(Python): generation {data['generation_s']:,} s, materialization {data['materialization_s']:,} s.",
             "", "| engine | loads | triples | load (s) | with the materialization (s) |", "|---|---|---:|---:|---:|"]
    for e in engines:
        if e not in loads:
            continue
        ld = loads[e]
        stored = e.startswith("tern-inferred")
        extra = (f" + optimize {ld['optimize_s']:,}" if "optimize_s" in ld else "") + \
            (f" (first start included: {ld['start_and_load_s']:,})" if "start_and_load_s" in ld else "")
        total = ld["load_s"] + ld.get("optimize_s", 0) + (0 if stored else data["materialization_s"])
        lines.append(f"| {LABEL[e]} | {'stored' if stored else 'materialized'} | "
                     f"{data['stored' if stored else 'materialized']:,} | {ld['load_s']:,}{extra} | "
                     f"{'—' if stored else f'{total:,.1f}'} |")
    res = report["suite"]
    s = res["summary"]
    peers = [LABEL[e] for e in engines if e in PEERS]
    fastest = (f"the fastest of {', '.join(peers[:-1])} and {peers[-1]}" if len(peers) > 1
               else peers[0] if peers else "no peer")
    lines += ["", f"**Queries**: median latency (ms) of {report['runs']} runs; inferred / materialized = tern "
              "with inference over tern on the materialized data; vs fastest peer = tern inferred over "
              f"{fastest} (above 1: tern is slower)", "",
              "| query | rows | " + " | ".join(LABEL[e] for e in engines)
              + " | inferred / materialized | fastest peer | inferred / fastest peer | materialized / fastest peer |",
              "|---|---:|" + "---:|" * len(engines) + "---:|---|---:|---:|"]
    by_query = {r["query"]: r for r in res["records"]}

    def cell(rec):
        if rec.get("median_ms") is not None:
            return fmt_ms(rec["median_ms"])
        return "timeout" if rec.get("timeout") else "failed" if rec.get("error") else "—"

    for q in s["per_query"]:
        r = by_query[q["query"]]
        rows = "—" if q["rows"] is None else f"{q['rows']:,}"
        lines.append(f"| {q['query'].removesuffix('.rq')} | {rows} | "
                     + " | ".join(cell(r[e]) for e in engines)
                     + f" | {ratio(q['inferred_over_materialized'])} | {LABEL.get(q['fastest_peer'], '—')} | "
                     f"{ratio(q['inferred_over_fastest_peer'])} | {ratio(q['materialized_over_fastest_peer'])} |")
    g = {k: s[k]["geomean"] for k in ("inferred_over_materialized", "inferred_over_fastest_peer",
                                      "materialized_over_fastest_peer")}
    if s.get("unkept_over_materialized", {}).get("geomean") is not None:
        lines += ["", "With nothing kept between queries (tern-inferred-unkept, `--extent-cache 0`: every query "
                  "as on a snapshot no earlier query read): geometric means unkept / materialized "
                  f"{ratio(s['unkept_over_materialized']['geomean'])}, unkept / fastest peer "
                  f"{ratio(s['unkept_over_fastest_peer']['geomean'])}; per query: "
                  + ", ".join(f"{q['query'].removesuffix('.rq')} {ratio(q['unkept_over_materialized'])} / "
                              f"{ratio(q['unkept_over_fastest_peer'])}" for q in s["per_query"]) + "."]
    lines += ["", f"Geometric means: inferred / materialized {ratio(g['inferred_over_materialized'])}, "
              f"inferred / fastest peer {ratio(g['inferred_over_fastest_peer'])}, materialized / fastest peer "
              f"{ratio(g['materialized_over_fastest_peer'])}. Failed: "
              + ", ".join(f"{LABEL[e]} {n}" for e, n in s["failed"].items())
              + f". Queries where engines that answered disagree: {len(answer_differences(res['differences']))}"
              + f" ({', '.join(answer_differences(res['differences'])) or 'none'})."]
    if report.get("closure_check"):
        c = report["closure_check"]
        lines += ["", f"Closure check (CONSTRUCT of everything under owl-rl on tern-inferred against the materialized "
                  f"file, blank-node lines aside): tern {c['tern_triples']:,} triples, materialized "
                  f"{c['materialized_triples']:,}; only in tern's {c['only_tern']:,}, only in the file "
                  f"{c['only_materialized']:,}."]
    return "\n".join(lines)


# --- main -------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--universities", type=int, default=100,
                    help="size of the data set, ~101 K stored triples each (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=1, help="the generator's worker processes (default: %(default)s)")
    ap.add_argument("--engines", help="comma-separated subset of: " + ",".join(ENGINES)
                    + " (default: all; fuseki only when Java 21+ and its jar are found)")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per query and engine (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=120,
                    help="per query, in seconds, all engines (default: %(default)s)")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-commit", help="the commit the tern binary was built from, for the report")
    ap.add_argument("--oxigraph", type=Path, default=DEFAULT_VENV / "bin/oxigraph",
                    help="oxigraph CLI, from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA / "inference",
                    help="data files, stores and server logs (default: %(default)s)")
    ap.add_argument("--virtuoso-buffers", type=int, default=340000,
                    help="Virtuoso's NumberOfBuffers, 8 KiB pages (default: %(default)s, 2.6 GiB)")
    ap.add_argument("--fuseki-heap", default="4G",
                    help="Fuseki's -Xmx, for its load and its server (default: %(default)s, as in PEERS.md)")
    ap.add_argument("--no-load", action="store_true",
                    help="reuse the stores an earlier run built in --work; only missing ones are built (and timed)")
    ap.add_argument("--check-closure", action="store_true",
                    help="also compare everything tern-inferred answers (CONSTRUCT of ?s ?p ?o under owl-rl) with "
                    "the materialized file, triple by triple (small data sets: both are held in memory)")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/inference-<date>.json)")
    ap.add_argument("--report", type=Path, metavar="RESULTS",
                    help="do not run: print the tables and differences of an earlier result file")
    args = ap.parse_args()

    if args.report:
        report = json.loads(args.report.read_text())
        print(markdown(report))
        diffs = report_differences({"inference": report["suite"]})
        print(diffs if diffs else "\nNo result differences.")
        return
    args.java = find_java()
    if args.engines is None:
        # Fuseki is a peer by default only where it is installed: fetching its jar is
        # left to an explicit --engines.
        args.engines, missing = list(ENGINES), None
        if args.java is None:
            missing = "no Java 21+ under /usr/lib/jvm/temurin*"
        elif find_fuseki_jar() is None:
            missing = "no jena-fuseki-server jar in ~/.m2 (name fuseki in --engines to fetch it with mvn)"
        if missing:
            args.engines.remove("fuseki")
            print(f"fuseki left out: {missing}; see ../shared/PEERS.md", file=sys.stderr)
    else:
        args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if unknown := set(args.engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    args.engines = [e for e in ENGINES if e in args.engines]
    check_programs(ap, args)
    if "fuseki" in args.engines:
        if args.java is None:
            ap.error("fuseki needs a Java 21+ under /usr/lib/jvm/temurin* (see ../shared/PEERS.md)")
        try:
            args.fuseki_jar = fetch_fuseki_jar()
        except (OSError, subprocess.CalledProcessError) as e:
            ap.error(f"no jena-fuseki-server jar in ~/.m2, and mvn could not fetch it: {e}")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)

    stop_on_sigterm()
    started = datetime.datetime.now()
    name = f"university-{args.universities}" + (f"-seed{args.seed}" if args.seed != 1 else "")
    args.stored, args.materialized = name, f"{name}-materialized"
    args.data_nt = {d: args.work / f"{d}.nt" for d in (args.stored, args.materialized)}
    args.dataset = args.materialized  # the peers' store
    data = generate(args)
    loads = load(args, data)
    closure = check_closure(args) if args.check_closure and "tern-inferred" in args.engines else None

    queries = [Query(f, f.name, f.stem, None) for f in sorted(QUERIES.glob("*.rq"))]
    suite = Suite("inference", args.materialized, queries, [q.file for q in queries])
    print(f"{len(queries)} queries, all of them once as warm-up, then {args.runs} runs each", file=sys.stderr)
    res = run_suite(suite, args, SERVERS)
    res["summary"] = summarize(res["records"], args.engines)

    report = {
        **report_header("inference", started, args),
        "command": " ".join(sys.argv),
        "data": {**data, "files": {d: str(p) for d, p in args.data_nt.items()}},
        "load": loads,
        "closure_check": closure,
        "engines": {e: {} for e in args.engines},
        "suite": {k: res[k] for k in ("summary", "servers", "elapsed_s", "load_average_before", "load_average_after",
                                      "warmup_failures", "differences", "records")},
    }
    versions = {"tern": tool_version([str(args.tern), "--version"]),
                "oxigraph": tool_version([str(args.oxigraph), "--version"]),
                "virtuoso": tool_version(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"]),
                "fuseki": fuseki_version(args.fuseki_jar) if "fuseki" in args.engines else None}
    for e in args.engines:
        report["engines"][e] = {"version": versions["tern" if e.startswith("tern") else e],
                                "store": args.stored if e.startswith("tern-inferred") else args.materialized,
                                **({"request_parameters": {"inference": "owl-rl"}}
                                   if e.startswith("tern-inferred") else {})}
    out = args.out or BENCH / "results" / f"inference-{started:%Y-%m-%d}.json"
    publish(report, out, markdown(report), report_differences({"inference": report["suite"]}))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the servers were stopped)")
