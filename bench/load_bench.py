#!/usr/bin/env python3
"""Load benchmark: tern vs Oxigraph (pyoxigraph bulk loader).

For each data set, runs --runs rounds; each round loads the file once with
every selected engine, each into a fresh directory, in a separate process.
Interleaving the engines round by round (rather than all tern runs, then all
Oxigraph runs) spreads slow drifts of the machine (page cache, thermal, noisy
neighbours) over both engines alike.

Per run: wall time of the process, its peak RSS (ru_maxrss from wait4, which
covers the process and any children it waited for), and the apparent size of
the index directory (like `du -sb`). Medians per engine, and ratios, go to
stdout as Markdown and to a JSON file.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BENCH, DEFAULT_DATA, DEFAULT_PEER_PYTHON, DEFAULT_TERN, git_commit, machine, tool_version

ENGINES = ("tern", "oxigraph")

# Run in the peer venv. Closing the store before exiting makes sure RocksDB's
# shutdown work is inside the measured wall time, as it is for tern.
OXIGRAPH_CHILD = """
import json, sys, time, pyoxigraph as ox
t = time.perf_counter()
store = ox.Store(sys.argv[1])
store.bulk_load(path=sys.argv[2], format=ox.RdfFormat.N_TRIPLES)
store.flush()
del store
print(json.dumps({"inner_s": time.perf_counter() - t, "version": ox.__version__}))
"""

# Untimed: counting means a full scan, which is not part of loading.
OXIGRAPH_COUNT = "import sys, pyoxigraph as ox; print(len(ox.Store.read_only(sys.argv[1])))"


def measure(cmd: list[str]) -> dict:
    """Run cmd; return wall time, peak RSS and its output. Raise if it fails."""
    # Output goes to files, not pipes: we reap the child with wait4 ourselves
    # (to get its rusage), so nobody would be draining a pipe meanwhile.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{stderr[-4000:]}")
    return {"wall_s": wall, "peak_rss_bytes": usage.ru_maxrss * 1024, "stdout": stdout, "stderr": stderr}


def dir_bytes(path: Path) -> tuple[int, int]:
    """(apparent size, allocated size) of all files under path."""
    apparent = allocated = 0
    for root, _, files in os.walk(path):
        for f in files:
            st = os.lstat(os.path.join(root, f))
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return apparent, allocated


def count_lines(path: Path) -> int:
    # Also warms the page cache, so the first engine measured does not pay
    # for reading the input from disk while the others read it from memory.
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(64 << 20):
            n += chunk.count(b"\n")
    return n


def run_tern(args, data: Path, index: Path, check_count: bool) -> dict:
    cmd = [str(args.tern), "load", "--index", str(index), "--force"]
    if args.tern_memory:
        cmd += ["--memory", args.tern_memory]
    r = measure(cmd + [str(data)])
    r["summary"] = r.pop("stderr").strip()[-2000:]
    del r["stdout"]
    stats = json.loads(subprocess.run([str(args.tern), "stats", "--index", str(index), "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    r["reported_triples"] = stats["triples"]
    r["reported_index_bytes"] = stats["index_bytes"]
    return r


def run_oxigraph(args, data: Path, index: Path, check_count: bool) -> dict:
    r = measure([str(args.peer_python), "-c", OXIGRAPH_CHILD, str(index), str(data)])
    r.update(json.loads(r.pop("stdout")))
    del r["stderr"]
    if check_count:
        r["reported_triples"] = int(subprocess.run([str(args.peer_python), "-c", OXIGRAPH_COUNT, str(index)],
                                                   check=True, capture_output=True, text=True).stdout)
    return r


RUNNERS = {"tern": run_tern, "oxigraph": run_oxigraph}


def bench_dataset(args, name: str, data: Path) -> dict:
    triples = count_lines(data)
    print(f"{name}: {triples:,} triples", file=sys.stderr)
    runs = {e: [] for e in args.engines}
    for rnd in range(args.runs):
        for engine in args.engines:
            parent = Path(tempfile.mkdtemp(prefix=f"{engine}-", dir=args.tmp))
            try:
                # A path that does not exist yet: each engine creates its own layout.
                index = parent / "index"
                r = RUNNERS[engine](args, data, index, check_count=(rnd == 0))
                os.sync()  # so one run's dirty pages are not written back during the next
                r["disk_bytes"], r["disk_alloc_bytes"] = dir_bytes(index)
            finally:
                shutil.rmtree(parent, ignore_errors=True)
            reported = r.get("reported_triples")
            if reported is not None and reported != triples:
                print(f"WARNING: {engine} reports {reported:,} triples, input has {triples:,} lines",
                      file=sys.stderr)
            r["triples_per_s"] = triples / r["wall_s"]
            runs[engine].append(r)
            print(f"  round {rnd + 1} {engine}: {r['wall_s']:.1f} s, "
                  f"{r['peak_rss_bytes'] / 2**20:.0f} MiB RSS, {r['disk_bytes'] / 2**20:.0f} MiB on disk",
                  file=sys.stderr)

    med = {e: {k: statistics.median(r[k] for r in rs)
               for k in ("wall_s", "peak_rss_bytes", "disk_bytes", "triples_per_s")}
           for e, rs in runs.items()}
    result = {"file": str(data), "triples": triples, "runs": runs, "median": med}
    if "tern" in med and "oxigraph" in med:
        t, o = med["tern"], med["oxigraph"]
        result["ratios"] = {
            "speedup_vs_oxigraph": o["wall_s"] / t["wall_s"],  # > 1: tern loads faster
            "rss_tern_over_oxigraph": t["peak_rss_bytes"] / o["peak_rss_bytes"],
            "disk_tern_over_oxigraph": t["disk_bytes"] / o["disk_bytes"],
        }
    return result


def markdown(results: dict) -> str:
    mib = 2**20
    lines = ["| data set | engine | triples | load time (s) | triples/s | peak RSS (MiB) | on disk (MiB) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, res in results.items():
        for engine, m in res["median"].items():
            lines.append(f"| {name} | {engine} | {res['triples']:,} | {m['wall_s']:.1f} | "
                         f"{m['triples_per_s']:,.0f} | {m['peak_rss_bytes'] / mib:,.0f} | {m['disk_bytes'] / mib:,.0f} |")
    ratios = {n: r["ratios"] for n, r in results.items() if "ratios" in r}
    if ratios:
        lines += ["", "| data set | speed (oxigraph time / tern time) | RSS tern/oxigraph | disk tern/oxigraph |",
                  "|---|---:|---:|---:|"]
        for name, q in ratios.items():
            lines.append(f"| {name} | {q['speedup_vs_oxigraph']:.2f}x | {q['rss_tern_over_oxigraph']:.2f} | "
                         f"{q['disk_tern_over_oxigraph']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-memory", help="passed to `tern load --memory`")
    ap.add_argument("--peer-python", type=Path, default=DEFAULT_PEER_PYTHON,
                    help="python with pyoxigraph, from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of: tern,oxigraph")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="directory filled by make_data.py (default: %(default)s)")
    ap.add_argument("--tmp", type=Path, help="where the index directories go (default: --data)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="bsbm-1m only")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/load-<date>.json)")
    args = ap.parse_args()

    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if unknown := set(args.engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    if "tern" in args.engines and not os.access(args.tern, os.X_OK):
        ap.error(f"no tern binary at {args.tern} (build it with `cargo build --release`, or pass --tern)")
    if "oxigraph" in args.engines and not os.access(args.peer_python, os.X_OK):
        ap.error(f"no {args.peer_python}: run bench/setup_peers.sh first")
    args.tmp = args.tmp or args.data
    datasets = ["bsbm-1m"] + ([] if args.quick else ["bsbm-10m"])
    for name in datasets:
        if not (args.data / f"{name}.nt").exists():
            ap.error(f"missing {args.data / name}.nt: run bench/make_data.py first")

    started = datetime.datetime.now()
    results = {name: bench_dataset(args, name, args.data / f"{name}.nt") for name in datasets}

    report = {
        "started": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "runs_per_engine": args.runs,
        "engines": {
            "tern": {"binary": str(args.tern), "version": tool_version([str(args.tern), "--version"]),
                     "memory": args.tern_memory} if "tern" in args.engines else None,
            "oxigraph": {"version": results[datasets[0]]["runs"]["oxigraph"][0]["version"],
                         "api": "pyoxigraph Store.bulk_load (lenient=False)"} if "oxigraph" in args.engines else None,
        },
        "git_commit": git_commit(),
        "datasets": results,
    }
    out = args.out or BENCH / "results" / f"load-{started:%Y-%m-%d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(results))
    print(f"\nresults written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
