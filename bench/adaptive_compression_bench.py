#!/usr/bin/env python3
"""Adaptive compression against the fixed fast level, for a client whose
bandwidth is the bottleneck: `curl --limit-rate` (20 MB/s by default)
downloads the same SELECT as TSV from one `tern serve`, with
`compression=fixed` and `compression=adaptive` (the default) interleaved,
per coding. Reported per run: bytes on the wire, payload bytes (the TSV,
as the server's access log counts them) and the payload rate the client
got (payload / wall time); then medians and the adaptive/fixed ratios.
Also once without a rate limit: adaptive must not cost a fast client.

    python3 bench/adaptive_compression_bench.py --index /tmp/tern-bench-data/http-bench/tern-bsbm-10m

The query is `SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT N` (`--rows`), so a run
takes a few seconds at the limited rate.
"""

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchlib import DEFAULT_DATA, DEFAULT_TERN, git_commit, machine

RESULTS = Path(__file__).resolve().parent / "results"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc):
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"tern serve exited with {proc.returncode}")
        try:
            subprocess.run(["curl", "-sf", "-o", "/dev/null", url.replace("/sparql", "/status")], check=True)
            return
        except subprocess.CalledProcessError:
            time.sleep(0.2)
    raise SystemExit("tern serve did not start")


def payload_of_last(log: Path) -> int:
    """payload_bytes of the last query in the server's access log."""
    for line in reversed(log.read_text().splitlines()):
        m = re.search(r"payload_bytes=(\d+)", line)
        if m and "tern::access" in line:
            return int(m.group(1))
    raise SystemExit("no access line with payload_bytes")


def download(url, query, encoding, mode, limit, log):
    cmd = ["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{time_total}",
           "-H", "Accept: text/tab-separated-values", "-H", f"Accept-Encoding: {encoding}",
           "--data-urlencode", f"query={query}", "--data-urlencode", f"compression={mode}", url]
    if limit:
        cmd[1:1] = ["--limit-rate", limit]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    wire, seconds = int(out[0]), float(out[1])
    time.sleep(0.3)  # the access line is written when the body ends
    payload = payload_of_last(log)
    return {"wire_bytes": wire, "payload_bytes": payload, "seconds": seconds,
            "payload_mb_s": payload / seconds / 1e6, "wire_mb_s": wire / seconds / 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, default=DEFAULT_DATA / "http-bench/tern-bsbm-10m")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--limit-rate", default="20M", help="curl --limit-rate for the slow client")
    ap.add_argument("--encodings", default="zstd,gzip", type=lambda s: s.split(","))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}/sparql"
    query = f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o }} LIMIT {args.rows}"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "serve.log"
        with open(log, "w") as log_file:
            proc = subprocess.Popen([str(args.tern), "serve", "--index", str(args.index), "--port", str(port)],
                                    stdout=log_file, stderr=subprocess.STDOUT)
        try:
            wait_ready(url, proc)
            download(url, query, "identity", "fixed", None, log)  # warm caches
            runs = []
            for limit in (args.limit_rate, None):
                for encoding in args.encodings:
                    for i in range(args.runs):
                        for mode in ("fixed", "adaptive"):
                            r = download(url, query, encoding, mode, limit, log)
                            r.update(limit=limit or "none", encoding=encoding, mode=mode, run=i)
                            runs.append(r)
                            print(f"{limit or 'unlimited':>9} {encoding:5} {mode:8} wire {r['wire_bytes'] / 1e6:8.1f} MB  "
                                  f"payload {r['payload_mb_s']:7.1f} MB/s  ({r['seconds']:.1f} s)", file=sys.stderr)
        finally:
            proc.terminate()
            proc.wait(30)

    summary = []
    for limit in (args.limit_rate, "none"):
        for encoding in args.encodings:
            med = {}
            for mode in ("fixed", "adaptive"):
                sel = [r for r in runs if r["limit"] == limit and r["encoding"] == encoding and r["mode"] == mode]
                med[mode] = {k: statistics.median(r[k] for r in sel) for k in ("wire_bytes", "payload_mb_s")}
            summary.append({
                "limit": limit, "encoding": encoding, "fixed": med["fixed"], "adaptive": med["adaptive"],
                "wire_bytes_adaptive_over_fixed": med["adaptive"]["wire_bytes"] / med["fixed"]["wire_bytes"],
                "payload_rate_adaptive_over_fixed": med["adaptive"]["payload_mb_s"] / med["fixed"]["payload_mb_s"],
            })
    print(f"{'client':>9} {'coding':6} {'wire MB fixed':>14} {'adaptive':>9} {'ratio':>6} "
          f"{'payload MB/s fixed':>19} {'adaptive':>9} {'ratio':>6}")
    for s in summary:
        print(f"{s['limit']:>9} {s['encoding']:6} {s['fixed']['wire_bytes'] / 1e6:14.1f} "
              f"{s['adaptive']['wire_bytes'] / 1e6:9.1f} {s['wire_bytes_adaptive_over_fixed']:6.2f} "
              f"{s['fixed']['payload_mb_s']:19.1f} {s['adaptive']['payload_mb_s']:9.1f} "
              f"{s['payload_rate_adaptive_over_fixed']:6.2f}")
    out = args.out or RESULTS / f"adaptive-compression-{datetime.now():%Y-%m-%d}.json"
    out.write_text(json.dumps({
        "benchmark": "adaptive-compression", "command": " ".join(sys.argv), "git_commit": git_commit(),
        "machine": machine(), "index": str(args.index), "query": query, "limit_rate": args.limit_rate,
        "summary": summary, "runs": runs,
    }, indent=1) + "\n")
    print(f"results in {out}")


if __name__ == "__main__":
    main()
