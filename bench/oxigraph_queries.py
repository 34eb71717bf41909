#!/usr/bin/env python3
"""The pyoxigraph counterpart of `tern bench-queries`, run in the peer venv.

    oxigraph_queries.py load --store DIR FILE.nt
    oxigraph_queries.py bench --store DIR --runs N [--warmup FILE]... [--timeout SECS]
                              --json OUT [--dump-dir DIR] QUERYFILE...

`bench` behaves like `tern bench-queries` and writes the same outputs: JSON
Lines records, `start`/`end` progress lines on stderr and sorted result dumps.
A run is timed from `Store.query` until the last result is drained (every
solution turned into a tuple of terms, every triple received).

pyoxigraph cannot stop a query, so --timeout is applied after the fact: a run
that took longer counts as a timeout (its results are kept, its later runs are
skipped). The harness (query_bench.py) kills a process stuck in one query.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import pyoxigraph as ox


def progress(event: str, phase: str, run: int, path: Path) -> None:
    print(f"{event}\t{phase}\t{run}\t{path}", file=sys.stderr, flush=True)


def execute(store: ox.Store, text: str, keep: bool):
    """(seconds, kind, variables, rows, lines or None) of one run."""
    t = time.perf_counter()
    result = store.query(text)
    kept = []
    if isinstance(result, ox.QuerySolutions):
        kind, variables = "select", [v.value for v in result.variables]
        n = 0
        for solution in result:
            values = tuple(solution)
            n += 1
            if keep:
                kept.append(values)
        elapsed = time.perf_counter() - t
        lines = ["\t".join("" if v is None else str(v) for v in row) for row in kept] if keep else None
    elif isinstance(result, ox.QueryBoolean):
        kind, variables, n = "ask", None, 1
        elapsed = time.perf_counter() - t
        lines = ["true" if bool(result) else "false"] if keep else None
    else:
        kind, variables, n = "graph", None, 0
        for triple in result:
            n += 1
            if keep:
                kept.append(triple)
        elapsed = time.perf_counter() - t
        lines = [str(triple) for triple in kept] if keep else None
    return elapsed, kind, variables, n, lines


def measure(store: ox.Store, path: Path, runs: int, timeout: float | None, dump: Path | None) -> dict:
    text = path.read_text()
    record = {"file": str(path), "name": path.name, "kind": None, "variables": None, "runs_ms": [],
              "median_ms": None, "min_ms": None, "rows": None, "rows_per_run": None, "error": None,
              "timeout": False, "dump": None}
    rows = []
    for run in range(1, runs + 1):
        progress("start", "run", run, path)
        try:
            elapsed, kind, variables, n, lines = execute(store, text, run == 1 and dump is not None)
        except Exception as e:  # a query error, reported like tern's
            progress("end", "run", run, path)
            record["error"] = f"{type(e).__name__}: {e}"
            break
        progress("end", "run", run, path)
        record["kind"], record["variables"] = kind, variables
        rows.append(n)
        if lines is not None:
            dump.write_text("".join(line + "\n" for line in sorted(lines)))
            record["dump"] = str(dump)
        if timeout is not None and elapsed > timeout:
            record["timeout"] = True
            record["error"] = f"query took {elapsed:.1f} s, over the {timeout:g} s timeout"
            break
        record["runs_ms"].append(elapsed * 1e3)
    record["rows"] = rows[0] if rows else None
    if any(n != rows[0] for n in rows):
        record["rows_per_run"] = rows
    if record["runs_ms"]:
        record["median_ms"] = statistics.median(record["runs_ms"])
        record["min_ms"] = min(record["runs_ms"])
    return record


def bench(args) -> None:
    store = ox.Store.read_only(str(args.store))
    if args.dump_dir:
        args.dump_dir.mkdir(parents=True, exist_ok=True)
    for path in args.warmup:
        progress("start", "warmup", 0, path)
        try:
            execute(store, path.read_text(), False)
        except Exception:  # reported when the same file is measured
            pass
        progress("end", "warmup", 0, path)
    with open(args.json, "w") as out:
        for i, path in enumerate(args.queries):
            dump = args.dump_dir / f"{i:05d}.tsv" if args.dump_dir else None
            out.write(json.dumps(measure(store, path, args.runs, args.timeout, dump)) + "\n")
            out.flush()


def load(args) -> None:
    store = ox.Store(str(args.store))
    store.bulk_load(path=str(args.file), format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    store.optimize()
    print(json.dumps({"triples": len(store), "version": ox.__version__}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    lp = sub.add_parser("load", help="bulk-load an N-Triples file into a new store")
    lp.add_argument("--store", type=Path, required=True)
    lp.add_argument("file", type=Path)
    bp = sub.add_parser("bench", help="measure query files")
    bp.add_argument("--store", type=Path, required=True)
    bp.add_argument("--runs", type=int, default=5)
    bp.add_argument("--warmup", type=Path, action="append", default=[])
    bp.add_argument("--timeout", type=float)
    bp.add_argument("--json", type=Path, required=True)
    bp.add_argument("--dump-dir", type=Path)
    bp.add_argument("queries", type=Path, nargs="+")
    args = ap.parse_args()
    {"load": load, "bench": bench}[args.command](args)


if __name__ == "__main__":
    main()
