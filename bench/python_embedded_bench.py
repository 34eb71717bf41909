#!/usr/bin/env python3
"""The embedded Python API (`tern.Index`, crates/tern-python) against the
engine in-process in Rust (`tern bench-queries`) and against pyoxigraph, on
the same BSBM explore queries, interleaved, each engine on its own index of
the same data. Every Python row is materialized as terms (`list(...)` of the
result; for pyoxigraph each solution's terms as a tuple).

    python3 bench/python_embedded_bench.py   # with the bench venv's python

Needs the bench venv (`bench/setup_peers.sh`) with tern-client and the
`tern` package installed from a release wheel:
    pip install ./clients/python
    (cd crates/tern-python && maturin build --release -o /tmp/tern-wheels)
    pip install --force-reinstall --no-deps /tmp/tern-wheels/tern-*.whl
Not `maturin develop --release`: that puts the extension into the source
tree, where the test suite's `maturin develop` (tests/server/run.sh, an
opt-level 1 build) replaces it for every environment that points there.
The script prints which file it measured.
"""

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchlib import DEFAULT_DATA, DEFAULT_TERN, SHARED, git_commit, machine

RESULTS = Path(__file__).resolve().parent / "results"


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern-index", type=Path, default=DEFAULT_DATA / "http-bench/tern-bsbm-1m")
    ap.add_argument("--oxigraph-store", type=Path, default=DEFAULT_DATA / "http-bench/oxigraph-bsbm-1m")
    ap.add_argument("--queries", type=Path, default=SHARED / "datasets/bsbm-1m/queries-explore")
    ap.add_argument("--mixes", type=int, default=4, help="explore mixes (mix0001...) to run")
    ap.add_argument("--runs", type=int, default=5, help="runs of each query per engine and round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds interleaving the engines; medians are over all runs")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import pyoxigraph
    import tern

    print(f"tern extension: {tern._native.__file__}", file=sys.stderr)

    files = []
    for i in range(1, args.mixes + 1):
        files += sorted((args.queries / f"mix{i:04d}").glob("*.rq"))
    index = tern.Index(str(args.tern_index))
    store = pyoxigraph.Store.read_only(str(args.oxigraph_store))
    warm = [f.read_text() for f in sorted((args.queries / "mix0000").glob("*.rq"))]
    for text in warm:  # both engines' caches warm, as a running process has them
        list(index.query(text)) if not text.lstrip().upper().startswith("ASK") else index.query(text)
        list(store.query(text)) if "ASK" not in text.upper().split("{")[0] else store.query(text)

    def rust_round():
        """One run of the Rust engine in-process over every file: the
        times of each file's runs, and its row count."""
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "rust.jsonl"
            subprocess.run([str(args.tern), "bench-queries", "--index", str(args.tern_index), "--runs", str(args.runs),
                            *sum((["--warmup", str(f)] for f in sorted((args.queries / "mix0000").glob("*.rq"))), []),
                            "--json", str(out), *map(str, files)], check=True, capture_output=True)
            return {json.loads(line)["file"]: json.loads(line) for line in out.read_text().splitlines()}

    def run_tern(text):
        r = index.query(text)
        return 1 if isinstance(r, bool) else len(list(r))

    def run_oxigraph(text):
        r = store.query(text)
        if isinstance(r, bool):
            return 1
        if isinstance(r, pyoxigraph.QuerySolutions):
            return len([tuple(s) for s in r])
        return len(list(r))

    # Rounds interleave the engines, so that a noisy minute on this shared
    # machine falls on all of them: each round runs the Rust engine (its own
    # process) over every file, then the two Python engines file by file.
    times = {str(f): {"rust": [], "embedded": [], "pyoxigraph": []} for f in files}
    rows = {str(f): {} for f in files}
    for _ in range(args.rounds):
        for name, record in rust_round().items():
            times[name]["rust"] += record.get("runs_ms") or []
            rows[name]["rust"] = record.get("rows")
        for f in files:
            text = f.read_text()
            for engine, run in (("embedded", run_tern), ("pyoxigraph", run_oxigraph)):
                for _ in range(args.runs):
                    started = time.perf_counter()
                    rows[str(f)][engine] = run(text)
                    times[str(f)][engine].append((time.perf_counter() - started) * 1e3)

    records = []
    for f in files:
        t = times[str(f)]
        records.append({
            "query": f"{f.parent.name}/{f.name}",
            "rust_in_process_ms": statistics.median(t["rust"]) if t["rust"] else None,
            "python_embedded_ms": statistics.median(t["embedded"]),
            "pyoxigraph_ms": statistics.median(t["pyoxigraph"]),
            "rows": rows[str(f)],
        })
    speed_vs_rust = geomean([rec["rust_in_process_ms"] / rec["python_embedded_ms"] for rec in records if rec["rust_in_process_ms"]])
    vs_pyoxigraph = geomean([rec["pyoxigraph_ms"] / rec["python_embedded_ms"] for rec in records])
    by_type = {}
    for rec in records:
        kind = rec["query"].rsplit("-", 1)[1].removesuffix(".rq")
        by_type.setdefault(kind, []).append(rec)
    print(f"{'query type':10} {'rust ms':>9} {'embedded ms':>12} {'pyoxigraph ms':>14}")
    for kind, recs in sorted(by_type.items()):
        med = lambda key: statistics.median(r[key] for r in recs if r[key] is not None)
        print(f"{kind:10} {med('rust_in_process_ms'):9.3f} {med('python_embedded_ms'):12.3f} {med('pyoxigraph_ms'):14.3f}")
    print(f"embedded speed / in-process Rust speed (geomean): {speed_vs_rust:.2f}")
    print(f"embedded speed / pyoxigraph speed (geomean): {vs_pyoxigraph:.2f}")
    mismatched = [r["query"] for r in records if r["rows"]["embedded"] != r["rows"]["pyoxigraph"]]
    out = args.out or RESULTS / f"python-embedded-{datetime.now():%Y-%m-%d}.json"
    out.write_text(json.dumps({
        "benchmark": "python-embedded",
        "command": " ".join(sys.argv),
        "git_commit": git_commit(),
        "machine": machine(),
        "pyoxigraph": pyoxigraph.__version__,
        "tern_extension": tern._native.__file__,
        "runs": args.runs,
        "rounds": args.rounds,
        "queries": len(records),
        "embedded_over_rust_speed_geomean": speed_vs_rust,
        "embedded_over_pyoxigraph_speed_geomean": vs_pyoxigraph,
        "row_count_differences": mismatched,
        "records": records,
    }, indent=1) + "\n")
    print(f"{len(mismatched)} queries with other row counts (DESCRIBE is up to the engine); results in {out}")


if __name__ == "__main__":
    main()
