#!/usr/bin/env python3
"""How far the planner's row estimates are from the rows its operators
produced, over whole query suites: the "estimation error" figure.

Starts `tern serve` on each index, runs every query with `explain=true` (the
query runs to its end; the answer is its plan with estimated and actual rows
per operator) and computes, for every operator that has an estimate, its
q-error: max(est / actual, actual / est), both counted as at least 1 row. A
q-error of 1 is exact; 10 means ten times off, either way.

Operators whose output was cut short are left out: those under a LIMIT (or
an ASK) with no sort or group in between read only what the consumer asked
for, so their actual rows say nothing about the estimate.

    python3 bench/estimation_error.py \\
        --suite bsbm-10m-explore=/tmp/tern-bench-data/http-bench/tern-bsbm-10m:/tmp/bsbm-10m/queries-explore/mix0002 \\
        --suite biblio-1m=/tmp/tern-bench-data/http-bench/tern-biblio-1m:bench/robustness \\
        --out bench/results/estimation-error-<date>.json

A suite is NAME=INDEX:FOLDER[,FOLDER...]; each folder's *.rq files are run
once (after one unmeasured run of each, so the caches are warm).
"""

import argparse
import json
import math
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import git_commit, machine  # noqa: E402

# Operators that read their whole input before their first row: below them,
# a LIMIT above does not cut the input short.
BLOCKING = {"OrderBy", "Group", "TopK"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def explain(port: int, query: str, timeout: float) -> dict:
    data = urllib.parse.urlencode({"query": query, "explain": "true"}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/sparql", data=data)
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.load(r)


def is_ask(query: str) -> bool:
    """Whether the query form is ASK (after comments, PREFIX and BASE)."""
    body = re.sub(r"#[^\n]*", "", query)
    body = re.sub(r"(?is)^\s*((PREFIX\s+\S*\s*<[^>]*>|BASE\s*<[^>]*>)\s*)*", "", body)
    return body.upper().startswith("ASK")


def q_errors(node: dict, cut: bool, out: list) -> None:
    """Appends (operator, estimate, actual, q-error) of every node with an
    estimate whose output was read whole."""
    name = node.get("operator", "")
    if name == "Slice":
        cut = True
    elif name in BLOCKING:
        cut = False
    estimate = node.get("estimated_rows")
    if estimate is not None and not cut:
        actual = node.get("rows", 0)
        e, a = max(estimate, 1), max(actual, 1)
        out.append((name, estimate, actual, max(e / a, a / e)))
    for child in node.get("children", []):
        q_errors(child, cut, out)


def summary(errors: list) -> dict:
    if not errors:
        return {"operators": 0}
    qs = sorted(q for *_, q in errors)

    def pct(p: float) -> float:
        return round(qs[min(len(qs) - 1, int(p * len(qs)))], 2)

    return {
        "operators": len(qs),
        "median": round(statistics.median(qs), 2),
        "p90": pct(0.9),
        "max": round(qs[-1], 1),
        "geomean": round(math.exp(sum(math.log(q) for q in qs) / len(qs)), 2),
        "within_2x": round(sum(q <= 2 for q in qs) / len(qs), 3),
        "within_10x": round(sum(q <= 10 for q in qs) / len(qs), 3),
    }


def run_suite(tern: Path, name: str, index: Path, folders: list[Path], timeout: float) -> dict:
    port = free_port()
    log = open(f"/tmp/estimation-error-{name}.log", "wb")
    proc = subprocess.Popen(
        [str(tern), "serve", "--index", str(index), "--bind", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=log, stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"tern serve did not start; see {log.name}")
                time.sleep(0.1)
        queries = [f for folder in folders for f in sorted(folder.glob("*.rq"))]
        per_query, all_errors = [], []
        for f in queries:
            text = f.read_text()
            explain(port, text, timeout)  # warm
            plan = explain(port, text, timeout)["profile"]
            cut = is_ask(text)
            errors = []
            q_errors(plan, cut, errors)
            all_errors.extend(errors)
            worst = max(errors, key=lambda e: e[3], default=None)
            per_query.append({
                "query": str(f),
                **summary(errors),
                "worst": None if worst is None else
                {"operator": worst[0], "estimated": worst[1], "actual": worst[2]},
            })
        return {"index": str(index), "queries": len(queries), **summary(all_errors), "per_query": per_query}
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", type=Path,
                    default=Path.home() / ".cache/tern-target/release/tern")
    ap.add_argument("--suite", action="append", required=True, metavar="NAME=INDEX:FOLDER[,FOLDER]")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    results = {"benchmark": "estimation-error", "git_commit": git_commit(), "machine": machine(),
               "command": " ".join(sys.argv), "suites": {}}
    for spec in args.suite:
        name, rest = spec.split("=", 1)
        index, folders = rest.split(":", 1)
        result = run_suite(args.tern, name, Path(index), [Path(p) for p in folders.split(",")], args.timeout)
        results["suites"][name] = result
        print(f"{name}: {result['queries']} queries, {result['operators']} operators with estimates; "
              f"q-error median {result.get('median')}, p90 {result.get('p90')}, max {result.get('max')}, "
              f"geomean {result.get('geomean')}; within 2x {result.get('within_2x')}, "
              f"within 10x {result.get('within_10x')}")
        worst = sorted((q for q in result["per_query"] if q.get("max")), key=lambda q: -q["max"])[:5]
        for q in worst:
            print(f"  {Path(q['query']).name}: max {q['max']} ({q['worst']})")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
