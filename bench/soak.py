#!/usr/bin/env python3
"""Soak test: many concurrent clients against an endpoint for minutes, with the
traffic an open endpoint gets (issue: hardening): BSBM explore queries, heavy
queries, clients that read slowly, clients that hang up early, and bad
requests. Each engine gets the same workload (same seed) in the same run, one
engine after the other; the server's resident memory is sampled every second.

    python3 bench/soak.py --engines tern,oxigraph,virtuoso            # 200 clients, 10 min each
    python3 bench/soak.py --engines tern --clients 50 --duration 60   # a short check

Actions per client, drawn with a seeded generator:
  light       a BSBM explore query (mixes 1-20 of ../shared/datasets/bsbm-1m), read whole (75%)
  heavy       an expensive query (cross product, sort of every triple), timeout=10 (5%)
  slow        a full scan read 16 KiB at a time, 0.2 s apart, for up to 5 s, then closed (5%)
  disconnect  a full scan, closed after its first bytes (5%)
  stuck       a full scan whose client reads nothing for 20 s, then hangs up (2%)
  bad         a malformed, over-deep, over-long or out-of-range request (10%)

Reported per engine: requests by action and outcome (status, or 'conn' for
connections that failed), light-query latency p50/p95/p99, resident memory
before (after a warm-up), at its peak and 5 s after the end, and whether the
server process lived. For tern the run checks the issue's targets: no crash,
no 5xx but 503/507, light p99 < 1 s, peak RSS <= 2 GiB, RSS after <= 1.2x
before. Everything goes to bench/results/soak-<date>.json.

Needs: a release `tern` (--tern); for the peers `bash bench/setup_peers.sh` and
`apt-get install virtuoso-opensource` (see http_query_bench.py).
"""
import argparse
import datetime
import http.client
import json
import random
import re
import statistics
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, DEFAULT_VENV, SHARED, git_commit, machine
from http_query_bench import SERVERS, prepare

HEAVY = [
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?o LIMIT 10",
    "SELECT ?p (COUNT(DISTINCT ?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
]
SCAN = "SELECT * WHERE { ?s ?p ?o }"
BAD = [
    "SELECT * WHERE { ?s ?p }",
    "SELECT * WHERE " + "{" * 1000 + "?s ?p ?o" + "}" * 1000,
    "SELECT * WHERE { " + " UNION ".join(["{ ?s ?p ?o }"] * 20000) + " }",
    "ASK { FILTER(" + "REGEX(" * 30 + '"a"' + ', "a")' * 30 + ") }",
]
HEAVY_TIMEOUT = 10
WEIGHTS = [("light", 73), ("heavy", 5), ("slow", 5), ("disconnect", 5), ("stuck", 2), ("bad", 10)]


def rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    m = re.search(r"VmRSS:\s+(\d+)", status)
    return int(m.group(1)) / 1024 if m else 0.0


def memory_mb(pid: int) -> tuple[float, float]:
    """(anonymous, file-backed) resident memory: the file-backed part is the
    mapped index, page cache the kernel takes back when it needs it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0, 0.0
    anon = re.search(r"RssAnon:\s+(\d+)", status)
    file = re.search(r"RssFile:\s+(\d+)", status)
    return (int(anon.group(1)) / 1024 if anon else 0.0, int(file.group(1)) / 1024 if file else 0.0)


def client_address(i: int) -> str:
    """Each simulated client connects from its own loopback address
    (127.1.x.y; Linux routes all of 127/8 to lo), so that per-client limits
    see 200 clients, as they would on a public endpoint, not one."""
    return f"127.1.{i // 250}.{i % 250 + 1}"


def cache_mb(server) -> dict[str, float]:
    """tern's decoded-block caches (bounded by --vocab-cache and --block-cache)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return {m.group(1): round(int(m.group(2)) / (1 << 20), 1)
            for m in re.finditer(r'tern_cache_bytes\{cache="(\w+)"\} (\d+)', text)}


class Endpoint:
    def __init__(self, server, source: str = "127.0.0.1"):
        self.port, self.path, self.extra = server.port, server.path, dict(server.extra)
        self.source = source

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(self.source, 0))

    def body(self, query: str, **params) -> str:
        return urllib.parse.urlencode({"query": query, **self.extra, **params})


def request(endpoint: Endpoint, query: str, read, socket_timeout: float = 60, raw_body: str | None = None,
            **params):
    """Sends a form POST; `read(response)` consumes the answer. Returns
    (status or 'conn', seconds)."""
    started = time.monotonic()
    conn = endpoint.connect(socket_timeout)
    try:
        body = raw_body if raw_body is not None else endpoint.body(query, **params)
        conn.request("POST", endpoint.path, body=body, headers={
            "Content-Type": "application/x-www-form-urlencoded",
            # BSBM's explore mix has DESCRIBE and CONSTRUCT queries too.
            "Accept": "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"})
        response = conn.getresponse()
        read(response)
        return response.status, time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return "conn", time.monotonic() - started
    finally:
        conn.close()


def read_all(response):
    while response.read(1 << 16):
        pass


def read_slowly(response):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and response.read(16 << 10):
        time.sleep(0.2)


def read_first(response):
    response.read(1024)


def read_nothing(response):
    """A client that never reads: the server's socket buffer fills and its
    query must give back its worker (and, for tern, be parked)."""
    time.sleep(20)


def client(server, index, light, seed, deadline, out):
    endpoint = Endpoint(server, client_address(index))
    rng = random.Random(seed)
    kinds, weights = zip(*WEIGHTS)
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        if kind == "light":
            status, took = request(endpoint, rng.choice(light), read_all)
        elif kind == "heavy":
            status, took = request(endpoint, rng.choice(HEAVY), read_all, socket_timeout=30, timeout=str(HEAVY_TIMEOUT))
        elif kind == "slow":
            status, took = request(endpoint, SCAN, read_slowly)
        elif kind == "disconnect":
            status, took = request(endpoint, SCAN, read_first)
        elif kind == "stuck":
            status, took = request(endpoint, SCAN, read_nothing)
        else:
            i = rng.randrange(len(BAD) + 2)
            if i < len(BAD):
                status, took = request(endpoint, BAD[i], read_all)
            elif i == len(BAD):
                status, took = request(endpoint, "ASK {}", read_all, timeout="1e20")
            else:
                status, took = request(endpoint, "", read_all, raw_body="query=ASK%20%7B%22%FF%22%7D")
        out.append((kind, status, took))


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def soak(args, engine: str, light: list[str]) -> dict:
    with SERVERS[engine](args) as server:
        pid = server.proc.pid
        # Warm-up: the same workload with a tenth of the clients for a tenth
        # of the time (at most 60 s), so that "before" has the caches a served
        # workload fills (decoded vocabulary and permutation blocks, mapped
        # index pages) and "after" measures what the load itself leaves.
        warm_deadline = time.monotonic() + min(60.0, args.duration / 10)
        warm = [threading.Thread(target=client, args=(server, 240 + i, light, args.seed - i, warm_deadline, []),
                                 daemon=True) for i in range(max(1, args.clients // 10))]
        for t in warm:
            t.start()
        for t in warm:
            t.join()
        time.sleep(6)
        before = rss_mb(pid)
        before_parts = memory_mb(pid)
        caches_before = cache_mb(server) if engine == "tern" else None
        samples, out, stop = [], [], threading.Event()

        def sample():
            while not stop.is_set():
                samples.append((time.monotonic(), rss_mb(pid)))
                time.sleep(1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = time.monotonic() + args.duration
        threads = [threading.Thread(target=client, args=(server, i, light, args.seed + i, deadline, out), daemon=True)
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(args.duration + 120)
        time.sleep(5)
        after = rss_mb(pid)
        after_parts = memory_mb(pid)
        caches_after = cache_mb(server) if engine == "tern" else None
        stop.set()
        alive = server.proc.poll() is None
    by_outcome: dict[str, dict[str, int]] = {}
    for kind, status, _ in out:
        by_outcome.setdefault(kind, {}).setdefault(str(status), 0)
        by_outcome[kind][str(status)] += 1
    light_ok = [took for kind, status, took in out if kind == "light" and status == 200]
    # A heavy query that runs past the timeout it asked for gets 504: that is
    # the answer the client requested, not a server fault, as long as it comes
    # on time (heavy_504_s shows it does).
    server_errors = sum(1 for kind, status, _ in out if isinstance(status, int) and status >= 500
                        and status not in (503, 507) and not (kind == "heavy" and status == 504))
    heavy_timeouts = [took for kind, status, took in out if kind == "heavy" and status == 504]
    result = {
        "engine": engine, "requests": len(out), "by_outcome": by_outcome, "alive": alive,
        "server_errors_other_than_503_507": server_errors,
        "heavy_504_s": {p: round(percentile(heavy_timeouts, p), 2) if heavy_timeouts else None for p in (50, 99)},
        "light_ms": {p: round(1000 * percentile(light_ok, p), 1) if light_ok else None for p in (50, 95, 99)},
        "rss_mb": {"before": round(before, 1), "peak": round(max(v for _, v in samples), 1) if samples else None,
                   "after": round(after, 1),
                   "anon_file_before": [round(v, 1) for v in before_parts],
                   "anon_file_after": [round(v, 1) for v in after_parts],
                   "caches_before": caches_before, "caches_after": caches_after},
        "rss_samples": [round(v, 1) for _, v in samples],
    }
    if engine == "tern":
        result["checks"] = {
            "alive": alive,
            "no 5xx but 503/507": server_errors == 0,
            "light p99 < 1 s": bool(light_ok) and percentile(light_ok, 99) < 1.0,
            "no light query refused with 503": by_outcome.get("light", {}).get("503", 0) == 0,
            "timeouts honoured (heavy 504 p99 < timeout + 2 s)":
                not heavy_timeouts or percentile(heavy_timeouts, 99) < HEAVY_TIMEOUT + 2,
            "peak RSS <= 2 GiB": (result["rss_mb"]["peak"] or 0) <= 2048,
            "RSS after <= 1.2x before": after <= 1.2 * before,
        }
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="tern")
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--duration", type=float, default=600, help="seconds per engine")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN)
    ap.add_argument("--oxigraph", type=Path, default=DEFAULT_VENV / "bin" / "oxigraph")
    ap.add_argument("--shared", type=Path, default=SHARED)
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA / "soak")
    ap.add_argument("--timeout", type=float, default=60, help="the servers' query timeout")
    ap.add_argument("--tern-args", default="--server-memory 1G",
                    help="extra flags of tern serve (default: %(default)s, the budget of all queries' "
                         "materialized state that the 2 GiB target leaves after caches and buffers)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    args.engines = args.engines.split(",")
    args.tern_args = args.tern_args.split()
    args.dataset = "bsbm-1m"
    args.data_nt = {"bsbm-1m": DEFAULT_DATA / "bsbm-1m.nt"}
    prepare(args, "bsbm-1m")
    folder = args.shared / "datasets/bsbm-1m/queries-explore"
    light = [f.read_text() for d in sorted(folder.glob("mix00[01]?"))[1:21] for f in sorted(d.glob("*.rq"))]
    results = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": git_commit(),
               "tern_args": args.tern_args,
               "machine": machine(), "clients": args.clients, "duration_s": args.duration,
               "weights": dict(WEIGHTS), "engines": []}
    for engine in args.engines:
        print(f"soak: {engine}, {args.clients} clients for {args.duration:.0f} s", file=sys.stderr)
        results["engines"].append(soak(args, engine, light))
    out = args.out or BENCH / "results" / f"soak-{datetime.date.today()}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    print("| engine | requests | alive | 5xx (not 503/507) | light p50 / p95 / p99 ms | RSS before / peak / after MB |")
    print("|---|---:|---|---:|---|---|")
    for r in results["engines"]:
        light_ms, rss = r["light_ms"], r["rss_mb"]
        print(f"| {r['engine']} | {r['requests']} | {r['alive']} | {r['server_errors_other_than_503_507']} | "
              f"{light_ms[50]} / {light_ms[95]} / {light_ms[99]} | {rss['before']} / {rss['peak']} / {rss['after']} |")
    for r in results["engines"]:
        print(f"\n{r['engine']}: " + json.dumps(r["by_outcome"]))
        for check, ok in r.get("checks", {}).items():
            print(f"  {'ok  ' if ok else 'FAIL'} {check}")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
