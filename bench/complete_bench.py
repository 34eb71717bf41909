#!/usr/bin/env python3
"""Latency of the workbench's IRI completion (`GET /complete`) on a large
index: starts `tern serve --index DIR`, asks for completions of prefixes of
increasing length in every context (as a user's typing would), and reports
the server's time (the `ms` of each answer) and the client's round trip,
median, p95 and max per context.

    python3 bench/complete_bench.py --index /tmp/tern-bench-data/http-bench/tern-bsbm-10m

The prefixes are taken from the data: the namespaces of the index's
predicates and a sample of subject and class IRIs, cut at every few
characters after their namespace."""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

from benchlib import DEFAULT_TERN, git_commit, machine

RESULTS = Path(__file__).resolve().parent / "results"


def get(url: str):
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as r:
        body = r.read()
    return json.loads(body), (time.perf_counter() - started) * 1e3


def query(base: str, text: str) -> list:
    data = urllib.parse.urlencode({"query": text}).encode()
    req = urllib.request.Request(base + "/sparql", data, {"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())["results"]["bindings"]


def prefixes_of(iris: list[str], cuts=(0, 2, 5)) -> list[str]:
    """Each IRI cut after its namespace (up to the last / or #) plus a few
    characters: what a user has typed on the way to it."""
    out = []
    for iri in iris:
        m = re.match(r"(.*[/#])", iri)
        ns = m.group(1) if m else iri
        for extra in cuts:
            out.append(iri[: len(ns) + extra])
    return sorted(set(out))


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN)
    ap.add_argument("--port", type=int, default=7391)
    ap.add_argument("--sample", type=int, default=20, help="IRIs per context to derive prefixes from")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    server = subprocess.Popen([str(args.tern), "serve", "--index", str(args.index), "--port", str(args.port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(600):
            try:
                get(base + "/status")
                break
            except OSError:
                time.sleep(0.1)
        k = args.sample
        iris = {
            "predicate": [b["p"]["value"] for b in query(base, f"SELECT DISTINCT ?p WHERE {{ ?s ?p ?o }} LIMIT {k}")],
            "class": [b["c"]["value"] for b in query(base, f"SELECT DISTINCT ?c WHERE {{ ?s a ?c }} LIMIT {k}")],
            "subject": [b["s"]["value"] for b in query(base, f"SELECT ?s WHERE {{ ?s a ?c }} LIMIT {k}")],
        }
        iris["object"] = iris["class"]
        iris["any"] = iris["subject"]
        report = {}
        for context, sample in iris.items():
            server_ms, client_ms, answered = [], [], []
            for prefix in prefixes_of(sample):
                for _ in range(3):  # the first look may read cold blocks
                    url = base + "/complete?" + urllib.parse.urlencode({"prefix": prefix, "context": context, "limit": 20})
                    body, wall = get(url)
                    server_ms.append(body["ms"])
                    client_ms.append(wall)
                answered.append(len(body["completions"]))
            report[context] = {
                "prefixes": len(answered),
                "requests": len(server_ms),
                "server_ms": {"median": statistics.median(server_ms), "p95": pct(server_ms, 0.95), "max": max(server_ms)},
                "client_ms": {"median": statistics.median(client_ms), "p95": pct(client_ms, 0.95), "max": max(client_ms)},
                "mean_completions": statistics.mean(answered),
            }
            r = report[context]
            print(f"{context:10} {r['prefixes']:3} prefixes  server median {r['server_ms']['median']:.2f} ms "
                  f"p95 {r['server_ms']['p95']:.2f} max {r['server_ms']['max']:.2f}  "
                  f"round trip median {r['client_ms']['median']:.2f} ms p95 {r['client_ms']['p95']:.2f}")
        status, _ = get(base + "/status")
    finally:
        server.terminate()
        server.wait(30)
    out = args.out or RESULTS / f"complete-{datetime.now():%Y-%m-%d}.json"
    out.write_text(json.dumps({
        "benchmark": "complete",
        "command": " ".join(sys.argv),
        "git_commit": git_commit(),
        "machine": machine(),
        "index": str(args.index),
        "triples": status["index"]["triples"],
        "contexts": report,
    }, indent=1) + "\n")
    print(f"results written to {out}")


if __name__ == "__main__":
    main()
