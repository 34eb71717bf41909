#!/usr/bin/env python3
"""Fairness benchmark: many concurrent clients, light and heavy queries (the SaGe
web-preemption experiment, side by side).

Engines, each serving the same WatDiv SF10 N-Triples file, one at a time:
  tern-rr     tern serve --workers W --quantum Q (round-robin time quanta)
  tern-fcfs   tern serve --workers W --quantum 0 (first come, first served)
  virtuoso    Virtuoso 7 (Debian virtuoso-opensource), a private instance set up
              as in ../shared/PEERS.md, one HTTP thread per client
  tern-paged  the tern-rr server, but the clients ask for pages (quantum=Q) and
              follow the Tern-Next continuation tokens themselves

Workload: the WatDiv stress queries (12,500, one per line) are shuffled with a
seed and cut into per-client slices; every query position is then made heavy
with probability --heavy-share, drawing from a small pool of long-running
queries on the same data (unselective friendOf/follows joins with GROUP BY,
COUNT, ORDER BY), because the stress queries alone finish in milliseconds and
show no convoy effect. Client i gets the same slice in every run and for every
engine, so runs differ only in the engine and in how many clients run at once.

Each client is a process that sends its queries one after the other over real
HTTP (SPARQL JSON results), reads every response to its end and counts the rows.
Per query it records: time to the response headers, time to the first row (the
first binding in the body, or the end of the response if there is none), total
time, rows, HTTP status and errors. Per run: each client's workload completion
time, throughput, errors, and for tern the scheduler's counters from /metrics.

Separately, on the tern-rr server with a single client, the heavy queries and
some light ones are fetched page by page (quantum=Q) to measure the preemption
overhead (Tern-Suspend-Us, Tern-Resume-Us) against the quantum and the
continuation token sizes (Tern-Token-Bytes).

Everything, including every per-query record, goes to
bench/results/fairness-<date>.json; a Markdown table goes to stdout, and with
--plots, PNG plots to bench/ (matplotlib, from the venv in --plot-python).
"""
import argparse
import datetime
import http.client
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, SHARED, decompress, git_commit, machine, tool_version

ENGINES = ("tern-rr", "tern-fcfs", "virtuoso", "tern-paged")
STRESS = SHARED / "datasets/watdiv-10/stress/queries.lines.rq"
DATASET = SHARED / "datasets/watdiv-10/watdiv.10.nt.zst"
GRAPH = "http://watdiv.example/sf10"  # Virtuoso's graph; tern has the data in its default graph
ACCEPT = "application/sparql-results+json"
TERN_PORT, VIRTUOSO_SQL_PORT, VIRTUOSO_HTTP_PORT = 7181, 1111, 8890

PREFIXES = ("PREFIX wsdbm: <http://db.uwaterloo.ca/~galuc/wsdbm/> "
            "PREFIX foaf: <http://xmlns.com/foaf/> ")
# The heavy tail: unselective joins over friendOf (445 K triples) and follows
# (329 K) with aggregates or ORDER BY on top, each 1.5-4 s in tern alone on this
# machine (checked with --check-heavy on every engine before a run). They are
# chosen to return few rows, so that they cost server work, not transfer.
HEAVY = {
    "friends2-likes-by-product-age3": "SELECT ?p (COUNT(*) AS ?n) WHERE { ?a foaf:age wsdbm:AgeGroup3 . "
    "?a wsdbm:friendOf ?b . ?b wsdbm:friendOf ?c . ?c wsdbm:likes ?p } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT 20",
    "friends2-likes-by-product-age6": "SELECT ?p (COUNT(*) AS ?n) WHERE { ?a foaf:age wsdbm:AgeGroup6 . "
    "?a wsdbm:friendOf ?b . ?b wsdbm:friendOf ?c . ?c wsdbm:likes ?p } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT 20",
    "follows2-likes-count-age5": "SELECT (COUNT(*) AS ?n) WHERE { ?a foaf:age wsdbm:AgeGroup5 . "
    "?a wsdbm:follows ?b . ?b wsdbm:follows ?c . ?c wsdbm:likes ?p }",
    "follows-triangle-same-like": "SELECT ?a ?b ?c WHERE { ?a wsdbm:follows ?b . ?b wsdbm:follows ?c . "
    "?c wsdbm:follows ?a . ?c wsdbm:likes ?p . ?a wsdbm:likes ?p } ORDER BY ?a ?b ?c",
    "follows-friend-by-gender": "SELECT ?b (COUNT(*) AS ?n) WHERE { ?a wsdbm:gender wsdbm:Gender0 . "
    "?a wsdbm:follows ?b . ?b wsdbm:friendOf ?c . ?c wsdbm:gender wsdbm:Gender1 } "
    "GROUP BY ?b ORDER BY DESC(?n) ?b LIMIT 10",
}

# Only for the paged overhead sample (not in the clients' workload): queries that
# stream many pages, so that suspensions happen in several operator states
# (scan, index join, LIMIT, ORDER BY and DISTINCT with stashed state).
OVERHEAD_EXTRA = {
    "page-scan-friendOf": "SELECT ?a ?b WHERE { ?a wsdbm:friendOf ?b }",
    "page-join-follows-likes": "SELECT ?a ?b ?p WHERE { ?a wsdbm:follows ?b . ?b wsdbm:likes ?p }",
    "page-join-follows2-limit": "SELECT ?a ?b ?c WHERE { ?a foaf:age wsdbm:AgeGroup3 . ?a wsdbm:follows ?b . "
    "?b wsdbm:follows ?c } LIMIT 200000",
    "page-order-friendOf": "SELECT ?a ?b WHERE { ?a wsdbm:friendOf ?b } ORDER BY ?b ?a LIMIT 200000",
    "page-distinct-follows-likes": "SELECT DISTINCT ?b ?c WHERE { ?a foaf:age wsdbm:AgeGroup3 . "
    "?a wsdbm:follows ?b . ?b wsdbm:likes ?c }",
}


# ---------------------------------------------------------------- workload

def build_workload(seed: int, clients: int, per_client: int, heavy_share: float) -> list[list[dict]]:
    """Per-client lists of queries, the same for every engine and client count.

    Slices are contiguous runs of the shuffled stress file, so that client i's
    slice does not depend on how many clients run. Heavy queries replace light
    ones at seeded random positions (each position independently, so clients
    differ in how many heavy queries they get, as real users do); the heavy
    query at a position cycles through the pool so all of them are used."""
    lines = [l.strip() for l in STRESS.read_text().splitlines() if l.strip()]
    order = list(range(len(lines)))
    random.Random(seed).shuffle(order)
    assert clients * per_client <= len(lines), "not enough stress queries"
    names = sorted(HEAVY)
    pick = random.Random(seed + 1)
    heavy_count = 0
    workload = []
    for c in range(clients):
        slice_ = []
        for j in range(per_client):
            if pick.random() < heavy_share:
                name = names[heavy_count % len(names)]
                heavy_count += 1
                slice_.append({"id": f"heavy:{name}", "kind": "heavy", "query": PREFIXES + HEAVY[name]})
            else:
                n = order[c * per_client + j]
                slice_.append({"id": f"stress:{n}", "kind": "light", "query": lines[n]})
        workload.append(slice_)
    return workload


# ---------------------------------------------------------------- HTTP client

class Endpoint:
    """Where and how to send a query: host, port, path and extra form fields."""

    def __init__(self, port: int, path: str, extra: dict | None = None, paged_quantum: str | None = None,
                 resume_port: int | None = None):
        self.port, self.path, self.extra, self.paged_quantum = port, path, extra or {}, paged_quantum
        # Where continuation tokens go (another server with the same key and
        # index); the first page's server when None.
        self.resume_port = resume_port


def post(endpoint: Endpoint, fields: dict, timeout: float):
    """Sends a form POST; returns the open connection and the response (headers read)."""
    port = endpoint.resume_port if "next" in fields and endpoint.resume_port else endpoint.port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    body = urllib.parse.urlencode({**fields, **endpoint.extra})
    conn.request("POST", endpoint.path, body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Accept": ACCEPT})
    return conn, conn.getresponse()


def read_body(resp) -> tuple[bytes, float | None]:
    """Reads a whole SPARQL JSON body; returns it and the monotonic time at
    which its first binding arrived (None if it has none). Looking for the first
    '{' after "bindings":[ is enough because the writers put nothing else there."""
    parts, seen, first, looking = [], b"", None, True
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        parts.append(chunk)
        if looking:
            seen += chunk
            i = seen.find(b'"bindings"')
            j = seen.find(b"[", i) if i >= 0 else -1
            rest = seen[j + 1:].lstrip() if j >= 0 else b""
            if rest[:1] == b"{":
                first, looking = time.monotonic(), False
            elif rest[:1] == b"]" or len(seen) > 1 << 20:
                looking = False  # no rows (or not SPARQL JSON): stop looking
    return b"".join(parts), first


def count_rows(body: bytes):
    """Rows of a SPARQL JSON result (1 for ASK), the continuation token if the
    body has one, or raises ValueError for a body that is not complete JSON
    (e.g. cut off by a timeout)."""
    doc = json.loads(body)
    if "boolean" in doc:
        return 1, doc.get("next")
    return len(doc["results"]["bindings"]), doc.get("next")


def run_query(endpoint: Endpoint, query: str, timeout: float) -> dict:
    """One query, plain or paged, read to its end. Times are in seconds from
    sending the (first) request."""
    rec = {"status": None, "rows": None, "error": None, "pages": 0}
    t0 = time.monotonic()
    first_row = headers_at = None
    fields = {"query": query}
    if endpoint.paged_quantum:
        fields["quantum"] = endpoint.paged_quantum
        rec["page_s"], rec["suspend_us"], rec["resume_us"], rec["token_bytes"] = [], [], [], []
        rec["resumed_from"] = []
    rows = 0
    try:
        while True:
            t_page = time.monotonic()
            conn, resp = post(endpoint, fields, timeout)
            headers_at = headers_at or time.monotonic()
            rec["status"] = resp.status
            body, first = read_body(resp)
            token = resp.getheader("Tern-Next")
            if endpoint.paged_quantum:
                rec["page_s"].append(time.monotonic() - t_page)
                for h, k in (("Tern-Suspend-Us", "suspend_us"), ("Tern-Resume-Us", "resume_us"),
                             ("Tern-Token-Bytes", "token_bytes")):
                    if resp.getheader(h) is not None:
                        rec[k].append(float(resp.getheader(h)))
                if resp.getheader("Tern-Resumed-From") is not None:
                    rec["resumed_from"].append(resp.getheader("Tern-Resumed-From"))
            if resp.getheader("X-SQL-State"):  # Virtuoso's "anytime" partial result
                rec["error"] = f"partial: {resp.getheader('X-SQL-State')} {resp.getheader('X-SQL-Message')}"
            conn.close()
            rec["pages"] += 1
            if resp.status != 200:
                rec["error"] = f"HTTP {resp.status}: {body[:300].decode('utf-8', 'replace')}"
                break
            first_row = first_row or first
            n, in_band = count_rows(body)
            rows += n
            token = token or in_band
            if not (endpoint.paged_quantum and token):
                break
            fields = {"next": token, "quantum": endpoint.paged_quantum}
        if rec["error"] is None:
            rec["rows"] = rows
    except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
        rec["error"] = f"{type(e).__name__}: {e}"
    end = time.monotonic()
    rec["total_s"] = round(end - t0, 6)
    rec["headers_s"] = round(headers_at - t0, 6) if headers_at else None
    # A query without rows has its "first result" (the empty answer) at its end.
    rec["first_s"] = round(first_row - t0, 6) if first_row else (rec["total_s"] if rec["error"] is None else None)
    return rec


def client_main(c: int, queries: list[dict], endpoint: Endpoint, timeout: float, start, out) -> None:
    """A client process: waits for the common start, then runs its slice."""
    start.wait()
    t_start = time.monotonic()
    records = []
    for pos, q in enumerate(queries):
        t = time.monotonic()
        rec = run_query(endpoint, q["query"], timeout)
        rec.update(client=c, pos=pos, id=q["id"], kind=q["kind"], start_s=round(t - t_start, 6))
        records.append(rec)
    out.put((c, time.monotonic() - t_start, records))


def run_clients(endpoint: Endpoint, workload: list[list[dict]], n: int, timeout: float) -> dict:
    """Runs clients 0..n-1 at once; returns per-client completion times and all
    query records."""
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=client_main, args=(c, workload[c], endpoint, timeout, start, out))
             for c in range(n)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every process reach the start line
    t0 = time.monotonic()
    start.set()
    results = [out.get() for _ in procs]
    wall = time.monotonic() - t0
    for p in procs:
        p.join()
    results.sort()
    return {"clients": n, "wall_s": wall, "completion_s": [r[1] for r in results],
            "records": [rec for r in results for rec in r[2]]}


# ---------------------------------------------------------------- servers

def wait_http(port: int, proc: subprocess.Popen, timeout: float = 180) -> None:
    """Waits until something accepts connections on port (and proc still runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {port} after {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    """Stops a server we started, by its pid."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Tern:
    """A tern server process with a quantum (None: FCFS)."""

    def __init__(self, args, quantum: str):
        self.args, self.quantum = args, quantum

    def __enter__(self):
        a = self.args
        self.log = open(a.work / f"tern-serve-{self.quantum}.log", "ab")
        self.proc = subprocess.Popen(
            [str(a.tern), "serve", "--index", str(a.work / "tern-index"), "--port", str(TERN_PORT),
             "--workers", str(a.workers), "--quantum", self.quantum, "--max-queued", "1000",
             "--timeout", str(a.timeout)], stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        wait_http(TERN_PORT, self.proc)
        return self

    def endpoint(self, paged_quantum=None) -> Endpoint:
        return Endpoint(TERN_PORT, "/sparql", paged_quantum=paged_quantum)

    def metrics(self) -> dict:
        """tern's scheduler counters from /metrics (the lines without labels)."""
        conn = http.client.HTTPConnection("127.0.0.1", TERN_PORT, timeout=30)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        found = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
                try:
                    found[parts[0]] = float(parts[1])
                except ValueError:
                    pass
        return found

    def __exit__(self, *exc):
        stop(self.proc)
        self.log.close()


def set_ini(text: str, settings: dict[tuple[str, str], str]) -> str:
    """Sets key = value in the given [section]s of an ini text, adding the keys
    that are missing (commented-out lines are left alone)."""
    out, section, missing = [], None, dict(settings)

    def flush():
        for (s, k), v in list(missing.items()):
            if s == section:
                out.append(f"{k} = {v}")
                del missing[(s, k)]

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            flush()
            section = stripped.strip("[]")
        key = stripped.split("=", 1)[0].strip() if "=" in stripped and not stripped.startswith(";") else None
        if key and (section, key) in settings:
            out.append(f"{key} = {settings[(section, key)]}")
            missing.pop((section, key), None)
        else:
            out.append(line)
    flush()
    assert not missing, missing
    return "\n".join(out) + "\n"


class Virtuoso:
    """A private Virtuoso instance in work/virtuoso (PEERS.md): loads args.nt
    into the graph once, then serves it until the context ends (checkpoint, then
    SIGTERM by pid). Other benchmarks pass their own directory, graph and ports
    (http_query_bench.py); args needs .nt and .timeout (MaxQueryExecutionTime)."""

    def __init__(self, args, directory: Path | None = None, graph: str = GRAPH,
                 sql_port: int = VIRTUOSO_SQL_PORT, http_port: int = VIRTUOSO_HTTP_PORT,
                 buffers: int = 340000):
        self.args = args
        # 8 KiB pages of its buffer pool (NumberOfBuffers; MaxDirtyBuffers is 3/4 of it).
        self.buffers = buffers
        self.dir = directory or args.work / "virtuoso"
        self.graph, self.sql_port, self.http_port = graph, sql_port, http_port
        self.load_s = None  # the bulk load's time (ld_dir, rdf_loader_run, checkpoint), when this start loaded

    def isql(self, sql: str, timeout: float = 3600) -> str:
        r = subprocess.run(["isql-vt", f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={sql}"],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0 or "*** Error" in r.stdout + r.stderr:
            raise RuntimeError(f"isql {sql!r}: {r.stdout} {r.stderr}")
        return r.stdout

    def write_ini(self) -> Path:
        d, nt = self.dir, self.args.nt
        ini = set_ini(Path("/etc/virtuoso-opensource-7/virtuoso.ini").read_text(), {
            ("Database", "DatabaseFile"): f"{d}/virtuoso.db", ("Database", "ErrorLogFile"): f"{d}/virtuoso.log",
            ("Database", "LockFile"): f"{d}/virtuoso.lck", ("Database", "TransactionFile"): f"{d}/virtuoso.trx",
            ("Database", "xa_persistent_file"): f"{d}/virtuoso.pxa",
            ("TempDatabase", "DatabaseFile"): f"{d}/virtuoso-temp.db",
            ("TempDatabase", "TransactionFile"): f"{d}/virtuoso-temp.trx",
            ("Parameters", "ServerPort"): f"127.0.0.1:{self.sql_port}",
            ("Parameters", "DirsAllowed"): f"., /usr/share/virtuoso-opensource-7/vad, {nt.parent}",
            ("Parameters", "NumberOfBuffers"): str(self.buffers),
            ("Parameters", "MaxDirtyBuffers"): str(self.buffers * 3 // 4),
            ("HTTPServer", "ServerPort"): f"127.0.0.1:{self.http_port}",
            # One HTTP thread per client (the default 10 would queue clients 11..50
            # in front of the server, which is not what is measured here).
            ("HTTPServer", "ServerThreads"): "64", ("HTTPServer", "MaxClientConnections"): "64",
            ("HTTPServer", "MaxKeepAlives"): "64",
            ("SPARQL", "ResultSetMaxRows"): "100000000",
            ("SPARQL", "MaxQueryExecutionTime"): str(self.args.timeout),
        })
        path = d / "virtuoso.ini"
        path.write_text(ini)
        return path

    def __enter__(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        ini = self.write_ini()
        self.log = open(self.dir / "stdout.log", "ab")
        self.proc = subprocess.Popen(["virtuoso-t", "+foreground", "+configfile", str(ini)], cwd=self.dir,
                                     stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        wait_http(self.http_port, self.proc)
        wait_http(self.sql_port, self.proc)
        marker = self.dir / "loaded"
        if not marker.exists() or marker.read_text() != str(self.args.nt):
            t = time.monotonic()
            nt = self.args.nt
            self.isql(f"ld_dir('{nt.parent}', '{nt.name}', '{self.graph}'); rdf_loader_run(); checkpoint;")
            self.load_s = time.monotonic() - t
            print(f"virtuoso: loaded {nt} in {self.load_s:.0f} s", file=sys.stderr)
            marker.write_text(str(nt))
        return self

    def endpoint(self, paged_quantum=None) -> Endpoint:
        return Endpoint(self.http_port, "/sparql", {"default-graph-uri": self.graph})

    def metrics(self) -> dict:
        return {}

    def __exit__(self, *exc):
        try:
            self.isql("checkpoint;", timeout=300)
        except Exception as e:  # still stop the server
            print(f"virtuoso checkpoint: {e}", file=sys.stderr)
        stop(self.proc)
        self.log.close()


def server_for(engine: str, args):
    return {"tern-rr": lambda: Tern(args, args.quantum), "tern-fcfs": lambda: Tern(args, "0"),
            "tern-paged": lambda: Tern(args, args.quantum), "virtuoso": lambda: Virtuoso(args)}[engine]()


# ---------------------------------------------------------------- measurement

def prepare(args) -> None:
    """Decompresses the data if needed and builds tern's index once."""
    args.work.mkdir(parents=True, exist_ok=True)
    if not args.nt.exists():
        decompress(DATASET, args.nt)
    index = args.work / "tern-index"
    if not index.exists():
        subprocess.run([str(args.tern), "load", "--index", str(index), str(args.nt)], check=True,
                       stdout=subprocess.DEVNULL)


def check_heavy(args) -> dict:
    """Runs every heavy query once, alone, on every engine: its time, rows and
    error, so that the pool only holds queries that all engines can finish."""
    found = {}
    for engine in args.engines:
        with server_for(engine, args) as server:
            ep = server.endpoint(args.quantum if engine == "tern-paged" else None)
            for name, q in sorted(HEAVY.items()):
                rec = run_query(ep, PREFIXES + q, args.timeout + 60)
                found.setdefault(name, {})[engine] = {k: rec[k] for k in ("total_s", "rows", "error", "pages")}
                print(f"check {engine:10} {name:34} {rec['total_s']:7.2f} s rows {rec['rows']} "
                      f"{rec['error'] or ''}", file=sys.stderr)
    return found


def overhead_sample(server, workload: list[list[dict]], quantum: str, light: int, timeout: float) -> list[dict]:
    """Fetches every heavy query, the OVERHEAD_EXTRA queries and the first
    `light` light queries of client 0 page by page, one at a time, to measure
    suspend/resume/token costs. (The heavy queries mostly end in their first
    page, hence the extra ones that stream many pages.)"""
    ep = server.endpoint(paged_quantum=quantum)
    queries = [{"id": f"heavy:{n}", "kind": "heavy", "query": PREFIXES + q} for n, q in sorted(HEAVY.items())]
    queries += [{"id": f"extra:{n}", "kind": "extra", "query": PREFIXES + q} for n, q in OVERHEAD_EXTRA.items()]
    queries += [q for q in workload[0] if q["kind"] == "light"][:light]
    out = []
    for q in queries:
        rec = run_query(ep, q["query"], timeout)
        rec.update(id=q["id"], kind=q["kind"])
        out.append(rec)
    return out


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure(args, workload) -> dict:
    """All runs: for each repetition, each engine (its server started once),
    each client count. Engines alternate inside a repetition; client counts go
    up. A short warm-up (10 light queries, one client) precedes each server's runs."""
    runs, overhead = [], None
    warm = [q for q in workload[0] if q["kind"] == "light"][:10]
    for rep in range(args.reps):
        for engine in args.engines:
            with server_for(engine, args) as server:
                paged = args.quantum if engine == "tern-paged" else None
                ep = server.endpoint(paged)
                for q in warm:
                    run_query(ep, q["query"], args.timeout)
                for n in args.clients:
                    before, load_before = server.metrics(), load_average()
                    run = run_clients(ep, workload, n, args.timeout + 120)
                    after = server.metrics()
                    run.update(engine=engine, rep=rep, load_before=load_before, load_after=load_average(),
                               metrics_delta={k: after[k] - before.get(k, 0) for k in after
                                              if k.endswith("_total")})
                    runs.append(run)
                    print(summary_line(run), file=sys.stderr)
                if engine == "tern-rr" and overhead is None and args.overhead_light >= 0:
                    overhead = overhead_sample(server, workload, args.quantum, args.overhead_light, args.timeout)
    return {"runs": runs, "overhead": overhead}


# ---------------------------------------------------------------- reporting

def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def pct(xs, p):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def run_stats(run: dict) -> dict:
    """The figures of one engine x client-count run."""
    recs = run["records"]
    per_client_first = [mean(r["first_s"] for r in recs if r["client"] == c) for c in range(run["clients"])]
    light = [r for r in recs if r["kind"] == "light"]
    return {
        "engine": run["engine"], "rep": run["rep"], "clients": run["clients"], "queries": len(recs),
        "heavy": sum(r["kind"] == "heavy" for r in recs),
        "completion_mean_s": mean(run["completion_s"]), "completion_max_s": max(run["completion_s"]),
        "first_mean_s": mean(r["first_s"] for r in recs),
        "first_client_mean_s": mean(per_client_first),
        "first_light_mean_s": mean(r["first_s"] for r in light),
        "first_light_p95_s": pct([r["first_s"] for r in light], 95),
        "throughput_qps": len(recs) / run["wall_s"], "wall_s": run["wall_s"],
        "errors": sum(r["error"] is not None for r in recs),
        "yields": run["metrics_delta"].get("tern_quanta_yielded_total"),
    }


def summary_line(run: dict) -> str:
    s = run_stats(run)
    return (f"{s['engine']:10} rep {s['rep']} clients {s['clients']:3}: completion {s['completion_mean_s']:7.2f} s, "
            f"first result {s['first_mean_s']:.3f} s (light {s['first_light_mean_s']:.3f} s), "
            f"{s['throughput_qps']:.1f} q/s, errors {s['errors']}, wall {s['wall_s']:.0f} s, "
            f"load {run['load_before']}")


def aggregate(runs: list[dict]) -> list[dict]:
    """Per engine x clients: the median over repetitions of each figure."""
    groups = {}
    for run in runs:
        groups.setdefault((run["engine"], run["clients"]), []).append(run_stats(run))
    rows = []
    for (engine, n), stats in groups.items():
        row = {"engine": engine, "clients": n, "reps": len(stats)}
        for k, v in stats[0].items():
            if k not in row and k != "rep":
                vals = [s[k] for s in stats if s[k] is not None]
                row[k] = statistics.median(vals) if vals else None
        row["errors"] = sum(s["errors"] for s in stats)
        rows.append(row)
    order = {e: i for i, e in enumerate(ENGINES)}
    return sorted(rows, key=lambda r: (order[r["engine"]], r["clients"]))


def row_differences(runs: list[dict]) -> list[dict]:
    """Queries whose row count differs between engines (or between runs of one
    engine), over all answered (error-free) executions."""
    counts = {}
    for run in runs:
        for r in run["records"]:
            if r["error"] is None:
                counts.setdefault(r["id"], {}).setdefault(run["engine"], set()).add(r["rows"])
    diffs = []
    for qid, by_engine in sorted(counts.items()):
        values = set().union(*by_engine.values())
        if len(values) > 1:
            diffs.append({"id": qid, "rows": {e: sorted(v) for e, v in by_engine.items()}})
    return diffs


def overhead_stats(sample: list[dict], quantum_ms: float) -> dict:
    """Suspend/resume times and token sizes of the paged sample."""
    susp = [x for r in sample for x in r.get("suspend_us", [])]
    res = [x for r in sample for x in r.get("resume_us", [])]
    tok = [x for r in sample for x in r.get("token_bytes", [])]
    pages = [x for r in sample for x in r.get("page_s", [])]
    both = []  # suspend of page k + resume of page k+1, per query
    for r in sample:
        for s, rs in zip(r.get("suspend_us", []), r.get("resume_us", [])):
            both.append(s + rs)
    q_us = quantum_ms * 1000

    def dist(xs):
        return {"n": len(xs), "median": pct(xs, 50), "p95": pct(xs, 95), "max": max(xs) if xs else None}

    return {"quantum_ms": quantum_ms, "suspend_us": dist(susp), "resume_us": dist(res),
            "suspend_plus_resume_us": dist(both),
            "suspend_plus_resume_share_of_quantum": {k: (v / q_us if v is not None else None)
                                                     for k, v in dist(both).items() if k != "n"},
            "token_bytes": dist(tok), "page_s": dist(pages),
            "queries": len(sample), "errors": sum(r["error"] is not None for r in sample),
            "per_query": [{"id": r["id"], "pages": r["pages"], "total_s": r["total_s"], "rows": r["rows"],
                           "max_page_s": max(r.get("page_s") or [0]),
                           "suspend_us_median": pct(r.get("suspend_us", []), 50),
                           "resume_us_median": pct(r.get("resume_us", []), 50),
                           "token_bytes_max": max(r.get("token_bytes") or [0]) or None,
                           "error": r["error"]} for r in sample]}


def fmt(x, digits=2):
    return "" if x is None else f"{x:,.{digits}f}"


def markdown(table: list[dict]) -> str:
    lines = ["| engine | clients | queries (heavy) | avg completion per client (s) | max completion (s) | "
             "avg time to first result (s) | of light queries (s) | p95 light (s) | throughput (q/s) | errors |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table:
        lines.append(f"| {r['engine']} | {r['clients']} | {r['queries']} ({r['heavy']}) | "
                     f"{fmt(r['completion_mean_s'])} | {fmt(r['completion_max_s'])} | {fmt(r['first_mean_s'], 3)} | "
                     f"{fmt(r['first_light_mean_s'], 3)} | {fmt(r['first_light_p95_s'], 3)} | "
                     f"{fmt(r['throughput_qps'], 1)} | {r['errors']} |")
    return "\n".join(lines)


PLOT_SCRIPT = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
runs = [json.load(open(sys.argv[1]))] + [json.load(open(f)) for f in sys.argv[4:]]
colors = {"tern-rr": "C0", "tern-fcfs": "C1", "virtuoso": "C2", "tern-paged": "C3"}
for key, label, out in [("completion_mean_s", "average workload completion time per client (s)", sys.argv[2]),
                        ("first_mean_s", "average time to first result (s)", sys.argv[3])]:
    fig, ax = plt.subplots(figsize=(6.4, 4.2) if len(runs) == 1 else (7.6, 5.0))
    for i, res in enumerate(runs):
        table, commit = res["table"], (res.get("commit") or "?")[:7]
        for engine in dict.fromkeys(r["engine"] for r in table):
            pts = [(r["clients"], r[key]) for r in table if r["engine"] == engine and r[key] is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if i == 0 else "x",
                    linestyle="-" if i == 0 else "--", alpha=1 if i == 0 else 0.55, color=colors.get(engine),
                    label=engine if len(runs) == 1 else f"{engine} ({commit})")
    table = [r for res in runs for r in res["table"]]
    ax.set_xlabel("concurrent clients")
    ax.set_ylabel(label)
    ax.set_xscale("log")
    ax.set_xticks(sorted({r["clients"] for r in table}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small" if len(runs) > 1 else None)
    ax.set_title("WatDiv SF10 stress + heavy tail, 2-core machine")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
"""


def plot(results_path: Path, python: Path, compare: list[Path] = ()) -> None:
    """Plots with matplotlib in a separate venv (the benchmark itself needs only
    the stdlib); runs in `compare` (earlier result files) are drawn dashed."""
    subprocess.run([str(python), "-c", PLOT_SCRIPT, str(results_path), str(BENCH / "fairness-completion.png"),
                    str(BENCH / "fairness-first-results.png"), *map(str, compare)], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="tern-rr,tern-fcfs,virtuoso")
    ap.add_argument("--clients", default="1,5,10,20,50")
    ap.add_argument("--per-client", type=int, default=40, help="queries per client")
    ap.add_argument("--heavy-share", type=float, default=0.04, help="chance that a query is a heavy one")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quantum", default="20ms")
    ap.add_argument("--timeout", type=int, default=300, help="server-side query timeout (s), all engines")
    ap.add_argument("--overhead-light", type=int, default=20,
                    help="light queries in the paged overhead sample (-1: no sample)")
    ap.add_argument("--check-heavy", action="store_true", help="only time each heavy query alone on each engine")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN)
    ap.add_argument("--nt", type=Path, default=DEFAULT_DATA / "watdiv-10.nt")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tern-fairness"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--plots", action="store_true")
    ap.add_argument("--compare", type=Path, action="append", default=[],
                    help="with --plots: also draw this earlier result file's curves, dashed (repeatable)")
    ap.add_argument("--plot-only", type=Path, metavar="RESULTS",
                    help="only draw the plots of an existing result file (with --compare files)")
    ap.add_argument("--plot-python", type=Path, default=Path.home() / ".cache/tern-plot-venv/bin/python")
    args = ap.parse_args()
    if args.plot_only:
        plot(args.plot_only, args.plot_python, args.compare)
        return
    args.engines = args.engines.split(",")
    assert all(e in ENGINES for e in args.engines), args.engines
    args.clients = [int(n) for n in args.clients.split(",")]
    args.work = args.work.resolve()
    prepare(args)
    if args.check_heavy:
        print(json.dumps(check_heavy(args), indent=1))
        return
    workload = build_workload(args.seed, max(args.clients), args.per_client, args.heavy_share)
    started = datetime.datetime.now(datetime.timezone.utc)
    measured = measure(args, workload)
    table = aggregate(measured["runs"])
    quantum_ms = float(args.quantum.removesuffix("ms")) if args.quantum.endswith("ms") else None
    results = {
        "benchmark": "fairness", "started": started.isoformat(), "commit": git_commit(),
        "tern_version": tool_version([str(args.tern), "--version"]),
        "virtuoso_version": tool_version(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"]),
        "machine": machine(), "args": {k: str(v) for k, v in vars(args).items()},
        "heavy_queries": HEAVY, "overhead_queries": OVERHEAD_EXTRA, "prefixes": PREFIXES,
        "workload": [[q["id"] for q in s] for s in workload],
        "table": table, "row_differences": row_differences(measured["runs"]),
        "overhead": overhead_stats(measured["overhead"], quantum_ms) if measured["overhead"] else None,
        "overhead_records": measured["overhead"], "runs": measured["runs"],
    }
    out = args.out or BENCH / "results" / f"fairness-{started.date()}.json"
    # Compact: ~14,000 per-query records.
    out.write_text(json.dumps(results, separators=(",", ":")) + "\n")
    print(markdown(table))
    print(f"\nrow-count differences: {len(results['row_differences'])}")
    for d in results["row_differences"][:20]:
        print(f"  {d['id']}: {d['rows']}")
    if results["overhead"]:
        o = results["overhead"]
        print(f"\npaged overhead (quantum {args.quantum}): suspend+resume median {fmt(o['suspend_plus_resume_us']['median'], 0)} us, "
              f"p95 {fmt(o['suspend_plus_resume_us']['p95'], 0)} us; token bytes median {fmt(o['token_bytes']['median'], 0)}, "
              f"p95 {fmt(o['token_bytes']['p95'], 0)}; longest page {fmt(o['page_s']['max'], 3)} s")
    print(f"\nresults: {out}")
    if args.plots:
        plot(out, args.plot_python, args.compare)


if __name__ == "__main__":
    main()
