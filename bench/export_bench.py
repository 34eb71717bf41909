#!/usr/bin/env python3
"""Export throughput of `tern serve` next to Oxigraph's server, same data,
same client (`curl -o /dev/null`), interleaved in one run.

Queries: (a) SELECT ?s ?p ?o WHERE { ?s ?p ?o } as TSV, CSV and JSON;
(b) a CONSTRUCT with a three-triple template over the same pattern as
Turtle. Each uncompressed and with each content coding the server offers.
Reported: MB/s of uncompressed payload, rows/s, bytes on the wire, and the
server's peak RSS during the request next to its idle RSS.

Usage: bench/export_bench.py [--sizes 1m,10m] [--encodings identity,gzip,...]
       [--no-peers] [--out bench/results/export-DATE.json]
Needs: a release `tern` ($CARGO_TARGET_DIR/release/tern), curl, zstd, and for
the peer `bash bench/setup_peers.sh` plus `pip install oxigraph` in its venv
(done here when missing). Stdlib only.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHARED = REPO.parent / "shared"
DATA = Path(os.environ.get("TERN_BENCH_DATA", "/tmp/tern-bench-data"))
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/tern-target"))
VENV = Path(os.environ.get("TERN_BENCH_VENV", Path.home() / ".cache/tern-bench-venv"))

SELECT = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
CONSTRUCT = (
    "PREFIX ex: <http://example.org/export/> "
    "CONSTRUCT { ?s ex:p ?p . ?s ex:o ?o . ?s ex:triple ?p } WHERE { ?s ?p ?o }"
)
CASES = [
    ("select", SELECT, "tsv", "text/tab-separated-values"),
    ("select", SELECT, "csv", "text/csv"),
    ("select", SELECT, "json", "application/sparql-results+json"),
    ("construct", CONSTRUCT, "turtle", "text/turtle"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler:
    """Peak RSS of a process while a request runs (sampled every 20 ms)."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, rss(pid), threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss(self.pid))
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def wait_port(port, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def curl(url, query, accept, encoding):
    cmd = ["curl", "-sS", "-o", "/dev/null", "-G", "--data-urlencode", f"query={query}",
           "-H", f"Accept: {accept}", "-w", "%{http_code} %{size_download} %{time_total} %{time_starttransfer}"]
    if encoding != "identity":
        cmd += ["-H", f"Accept-Encoding: {encoding}"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), int(out[1]), float(out[2]), float(out[3])


def dataset(size):
    nt = DATA / f"bsbm-{size}.nt"
    if not nt.exists():
        src = SHARED / "datasets" / f"bsbm-{size}" / "dataset.nt.zst"
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run(["zstd", "-q", "-d", "--long=27", "-f", "-o", str(nt) + ".tmp", str(src)], check=True)
        Path(str(nt) + ".tmp").rename(nt)
    return nt


def tern_server(size, nt):
    tern = TARGET / "release" / "tern"
    index = DATA / f"export-tern-{size}"
    if not (index / "index.json").exists():
        subprocess.run([tern, "load", "--index", index, "--force", nt], check=True, capture_output=True)
    port = free_port()
    log = open(DATA / f"export-tern-{size}.log", "w")
    proc = subprocess.Popen([tern, "serve", "--index", index, "--port", str(port), "--timeout", "3600"],
                            stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, proc)
    return proc, f"http://127.0.0.1:{port}/sparql", DATA / f"export-tern-{size}.log"


def oxigraph_server(size, nt):
    oxigraph = VENV / "bin" / "oxigraph"
    if not oxigraph.exists():
        subprocess.run(["bash", str(BENCH / "setup_peers.sh")], check=True)
        subprocess.run([VENV / "bin" / "python", "-m", "pip", "install", "--quiet", "oxigraph"], check=True)
    location = DATA / f"export-oxigraph-{size}"
    if not location.exists():
        subprocess.run([oxigraph, "load", "--location", location, "--file", nt], check=True, capture_output=True)
    port = free_port()
    proc = subprocess.Popen([oxigraph, "serve-read-only", "--location", location, "--bind", f"127.0.0.1:{port}",
                             "--timeout-s", "3600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc)
    return proc, f"http://127.0.0.1:{port}/query"


def last_access(log_path):
    """rows and payload bytes of the last query in tern's access log."""
    lines = [l for l in open(log_path) if "tern::access" in l and "rows=" in l]
    fields = dict(re.findall(r"(\w+)=([^ ]+)", lines[-1])) if lines else {}
    return int(fields.get("rows", 0)), int(fields.get("payload_bytes", 0))


def run(args):
    results = []
    for size in args.sizes:
        nt = dataset(size)
        servers = {"tern": tern_server(size, nt)}
        if not args.no_peers:
            p, url = oxigraph_server(size, nt)
            servers["oxigraph"] = (p, url, None)
        try:
            time.sleep(1)
            idle = {name: rss(s[0].pid) for name, s in servers.items()}
            payload = {}
            for kind, query, fmt, accept in CASES:
                for encoding in args.encodings:
                    # Interleaved: the same case on each engine in turn.
                    for name, (proc, url, log) in servers.items():
                        if name != "tern" and encoding != "identity":
                            continue  # Oxigraph's server does not compress.
                        with RssSampler(proc.pid) as sampler:
                            status, wire, secs, ttfb = curl(url, query, accept, encoding)
                        rows, raw = last_access(log) if log else (None, None)
                        if encoding == "identity":
                            payload[(name, kind, fmt)] = wire
                        raw = raw or payload.get((name, kind, fmt), wire)
                        row = {
                            "size": size, "engine": name, "query": kind, "format": fmt, "encoding": encoding,
                            "status": status, "seconds": secs, "first_byte_s": ttfb, "wire_bytes": wire,
                            "payload_bytes": raw, "rows": rows, "payload_mb_s": raw / secs / 1e6,
                            "rows_s": rows / secs if rows else None,
                            "idle_rss_mb": idle[name] / 2**20, "peak_rss_mb": sampler.peak / 2**20,
                        }
                        results.append(row)
                        print(f"{size:>4} {name:9} {kind:9} {fmt:6} {encoding:8} {status} "
                              f"{row['payload_mb_s']:7.1f} MB/s  {wire / 1e6:8.1f} MB wire  "
                              f"{(row['rows_s'] or 0) / 1e3:7.0f} krows/s  RSS {row['idle_rss_mb']:.0f} -> "
                              f"{row['peak_rss_mb']:.0f} MB", flush=True)
        finally:
            for proc, _, _ in servers.values():
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1m", type=lambda s: s.split(","))
    ap.add_argument("--encodings", default="identity,gzip,deflate,br,zstd", type=lambda s: s.split(","))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    results = run(args)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = {"commit": commit, "cores": os.cpu_count(), "results": results}
    out = args.out or BENCH / "results" / f"export-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
