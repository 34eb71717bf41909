#!/usr/bin/env python3
"""Writes over HTTP: `tern serve` against Oxigraph's server, Virtuoso 7.2 and Apache
Jena Fuseki (TDB2), side by side in one run, on the same data and the same requests.

Engines (each loaded untimed into a fresh store at the start of a run, started once,
stopped by pid at the end, also on Ctrl-C and errors; all four run at the same time
and take turns, so drift on the machine hits them alike):
  tern      tern load --index DIR --force BASE, then tern serve --index DIR
            --update-token FILE --max-update-bytes 1G (a random secret of 32 bytes,
            sent as Authorization: Bearer); SPARQL Update by POST /sparql, the Graph
            Store Protocol at /store, POST /compact
  tern-async  the same with --wal-sync 100ms: answers once the log record is written to
            the kernel, syncs in the background (the durability Oxigraph's and
            Virtuoso's defaults give, see below)
  oxigraph  oxigraph load + optimize, then oxigraph serve --location DIR (read-write;
            update at /update, queries at /query, graph store at /store)
  virtuoso  a private Virtuoso 7.2 as in ../shared/PEERS.md (fairness_bench.Virtuoso),
            base data in one named graph; `grant SPARQL_UPDATE to "SPARQL"` so that
            /sparql takes updates and /sparql-graph-crud takes graph-store requests
            without authentication. Updates name the graph (INSERT DATA { GRAPH <g>
            { ... } }, WITH <g> DELETE ... INSERT ... WHERE ...), queries send
            default-graph-uri=<g>.
  fuseki    jena-fuseki-server (java 21+, -Xmx4G): tdb2.tdbloader --loader=parallel,
            then --update --loc=DIR /ds (update /ds/update, queries /ds/sparql,
            graph store /ds/data)

Every update is a POST with Content-Type: application/sparql-update (all four take
it), over persistent HTTP/1.1 connections (TCP_NODELAY), one per writer thread; a
request's time runs from sending it until its whole answer has been read. A request
counts if the server answers 2xx; a Virtuoso deadlock (SQL state 40001) is retried up
to 3 times, inside the timing. Request bodies are built before the clock starts.

Phases, in this order (--phases picks a subset):
  update-mix  BSBM's Explore-and-Update mix on ../shared/datasets/bsbm-1m-update: the
              base (718,746 triples) is what every store starts from; mix i = the
              25 queries of explore mix (i mod 19)+2 (mix0001 is the warm-up), then
              INSERT DATA { update transaction i } (the generator's update stream,
              49-591 triples, a new product with its offers and reviews) and
              DELETE WHERE { <offer> ?p ?o } of a base offer (seeded draw). One client.
              Mixes are interleaved by engine (mix 1 on every engine, then mix 2 ...);
              QMpH = 3600 x mixes / the sum of the mixes' times. Query results are
              cross-checked between engines after every step (they see the same data).
  insert      INSERT DATA of 1, 100 and 10,000 fresh triples per request (synthetic
              items in <http://tern.bench/write/>: IRIs, plain, typed and language
              literals, links to BSBM products), with 1 writer and with 16 concurrent
              writers, every request's triples distinct from all others. requests/s and
              triples/s = answered requests (triples) / wall time from the first
              request sent to the last answer read; latency percentiles per request.
              Cases are interleaved by engine within each of --runs rounds; the table
              shows the median over the rounds. Afterwards every store is asked how many
              synthetic triples it has (must equal what was answered 2xx).
  modify      DELETE/INSERT WHERE: bsbm:productPropertyNumeric1 of every product of one
              producer becomes value + 1 (39 producers in turn, 18-85 products each),
              and the same for all products (~1,800-2,300). One writer, interleaved,
              --runs rounds. Afterwards COUNT and SUM of the property are compared.
  gsp         gsp_put_large_graph: HTTP PUT of an N-Triples graph (bsbm-1m, 991,957
              triples; --quick: its first 20,000) into a new named graph, per round and
              engine; tern PUT /store?graph=, Oxigraph PUT /store?graph=, Fuseki PUT
              /ds/data?graph=, Virtuoso PUT /sparql-graph-crud?graph-uri=. If tern
              answers 404 or 405 (no Graph Store Protocol in that build), its part is
              skipped with the reason printed. The count of the graph is checked.
  tern-delta  tern only: BSBM 1M explore QMpH (../shared/datasets/bsbm-1m/queries-
              explore, the mixes http_query_bench.py runs) on the full BSBM 1M data held
              as base + delta: BSBM 1M is exactly bsbm-1m-update's base plus its 1,000
              update transactions, so a base index of bsbm-1m minus the last k
              transactions gets them back by INSERT DATA (one request each, with
              --compact-after 0), k chosen so that the delta is 1% and 10% of the base.
              Explore mixes run interleaved per query on [delta 1%, delta 10%, a fresh
              `tern load` of bsbm-1m]; then POST /compact on the two delta stores, and
              the mixes run again on [compacted 1%, compacted 10%, fresh]. Every result
              is compared with the fresh index's (same data: must be equal).

Durability is each engine's default, and it differs. Seen with `strace -f -c -e
trace=fsync,fdatasync,msync` on each server during 40 single-triple INSERT DATA
(2026-11-25; tern a266f72, Oxigraph 0.5.13, Virtuoso 7.2.5 of Debian, Fuseki 6.2.0):
tern answers after an fdatasync of its write-ahead log (one per commit, concurrent
commits grouped); Fuseki/TDB2 syncs at every commit (26 fsync + 8 msync per insert);
Oxigraph (RocksDB's log, default write options) and Virtuoso (transaction log, opened
without O_SYNC) call none: their commits survive a crash of the server process but
not necessarily of the machine. Small writes therefore compare a flushed commit
(tern, Fuseki) with an unflushed one (Oxigraph, Virtuoso); tern-async is tern with an
unflushed one too, for a like-for-like comparison. The tables give the ratio of each
tern engine to each peer.

Ratios in the tables are tern / peer of figures where higher is better (requests/s,
triples/s, QMpH): above 1, tern is faster. Markdown tables go to stdout, everything
(every round, latency percentiles, errors, checks, commands) to
bench/results/write-<date>.json (--quick: write-<date>-quick.json).

--quick: small counts, one round (a smoke test, not a measurement).

Needs: a release `tern` (--tern), `bash bench/setup_peers.sh` (the oxigraph server),
`apt-get install virtuoso-opensource`, Fuseki's jar (`mvn dependency:get
-Dartifact=org.apache.jena:jena-fuseki-server:RELEASE -Dtransitive=false`, found in
~/.m2) and a Java 21+ (/usr/lib/jvm/temurin*). Stdlib only.
"""
import argparse
import contextlib
import dataclasses
import datetime
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import types
import urllib.parse
from pathlib import Path

from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, DEFAULT_VENV, SHARED, decompress, find_fuseki_jar, find_java, \
    git_commit, machine, tool_version
from fairness_bench import Virtuoso, stop, wait_http
from http_query_bench import Client, compare, free_port, is_graph_query, load_average, result_lines
from query_bench import Query, bsbm_suite, fmt_ms, publish

ENGINES = ("tern", "tern-async", "oxigraph", "virtuoso", "fuseki")
LABEL = {"tern": "tern", "tern-async": "tern async", "oxigraph": "Oxigraph", "virtuoso": "Virtuoso",
         "fuseki": "Fuseki"}
# tern's engines: the default (a synced commit) and --wal-sync 100ms (asynchronous commit)
TERNS = ("tern", "tern-async")
ASYNC_SYNC = "100ms"
PHASES = ("update-mix", "insert", "modify", "gsp", "tern-delta")

BSBM_VOCAB = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"
WB = "http://tern.bench/write/"  # namespace of the synthetic triples
VIRTUOSO_GRAPH = "http://tern.bench/bsbm-1m-update"
UPDATE_CT = "application/sparql-update"
SEP = "#__SEP__"

COMMIT_DURABILITY = {
    "tern": "fdatasync of the write-ahead log before the answer (group commit)",
    "tern-async": f"--wal-sync {ASYNC_SYNC}: log record written to the kernel before the answer, fdatasync in the "
                  f"background every {ASYNC_SYNC} (survives kill -9, not a power loss)",
    "oxigraph": "RocksDB log written, not synced per commit (no fsync/fdatasync seen)",
    "virtuoso": "transaction log written, not synced per commit (no fsync seen, no O_SYNC); synced at checkpoints",
    "fuseki": "TDB2 journal and indexes synced at every commit (fsync + msync)",
}

# (triples per request, writers) -> requests in all (split evenly among the writers)
FULL_INSERT = {(1, 1): 1000, (1, 16): 1600, (100, 1): 300, (100, 16): 800, (10000, 1): 20, (10000, 16): 32}
QUICK_INSERT = {(1, 1): 40, (1, 16): 64, (100, 1): 10, (100, 16): 32, (10000, 1): 2, (10000, 16): 16}
FULL_MODIFY = {"producer": 100, "all-products": 10}
QUICK_MODIFY = {"producer": 5, "all-products": 1}

# Synthetic items: ten triples each, one per predicate (so that a 1-triple request is
# one of them, a 100-triple request ten items).
WB_PREDICATES = ("kind", "label", "seq", "price", "date", "tag", "ref", "next", "comment", "flag")
WORDS = [a + b + c for a in ("ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo")
         for b in ("ra", "de", "po", "lu", "xi") for c in ("", "n", "s", "tor")]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pct(xs: list[float], p: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(x):
    return "—" if x is None else f"{x:.2f}x"


def fmt_rate(x):
    return "—" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def dir_bytes(d: Path) -> int:
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) if d.exists() else 0


# --- engines --------------------------------------------------------------

class Engine:
    """A write-enabled server we started. `path` and `extra` are what
    http_query_bench.Client needs to query it."""
    name = ""
    path = "/sparql"  # queries
    update_path = "/sparql"
    extra: dict = {}
    graph: str | None = None  # the named graph updates must name (Virtuoso)

    def __init__(self, args, tag: str | None = None):
        self.args, self.port, self.proc, self.cmd = args, free_port(), None, None
        self.tag = tag or self.name
        self.dir = args.work / self.tag
        self.load_s = None

    def start(self, cmd: list[str], env: dict | None = None) -> None:
        self.cmd = cmd
        self.log = open(self.args.work / f"{self.tag}.log", "ab")
        # cwd in --work: servers that write files next to them (Fuseki's run/) keep them there
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL,
                                     cwd=self.args.work, env=env)
        try:
            wait_http(self.port, self.proc)
        except BaseException:  # not started: __exit__ will not run
            self.__exit__()
            raise

    def __exit__(self, *exc):
        if self.proc:
            stop(self.proc)
            self.log.close()
            self.proc = None

    # what a request needs
    def update_headers(self) -> dict:
        return {}

    def insert_data(self, triples: str) -> str:
        return f"INSERT DATA {{\n{triples}}}" if self.graph is None else \
            f"INSERT DATA {{ GRAPH <{self.graph}> {{\n{triples}}} }}"

    def delete_where(self, pattern: str) -> str:
        return f"DELETE WHERE {{ {pattern} }}" if self.graph is None else \
            f"DELETE WHERE {{ GRAPH <{self.graph}> {{ {pattern} }} }}"

    def modify(self, prologue: str, delete: str, insert: str, where: str) -> str:
        with_ = f"WITH <{self.graph}>\n" if self.graph else ""
        return f"{prologue}\n{with_}DELETE {{ {delete} }}\nINSERT {{ {insert} }}\nWHERE {{ {where} }}"

    def gsp_target(self, graph: str) -> str | None:
        """Path of a graph-store PUT of `graph`, or None if the engine has none."""
        return None

    def info(self) -> dict:
        return {"cmd": self.cmd, "port": self.port, "load_s": self.load_s}


class TernEngine(Engine):
    name = "tern"

    def __init__(self, args, tag=None, nt: Path | None = None, serve_args: list[str] = ()):
        super().__init__(args, tag)
        self.nt, self.serve_args = nt, list(serve_args)
        self.secret = secrets.token_hex(32)

    def load(self) -> None:
        t = time.monotonic()
        subprocess.run([str(self.args.tern), "load", "--index", str(self.dir), "--force", "-q", str(self.nt)],
                       check=True, capture_output=True)
        self.load_s = round(time.monotonic() - t, 2)

    def __enter__(self):
        token = self.args.work / f"{self.tag}.token"
        token.write_text(self.secret)
        token.chmod(0o600)
        self.start([str(self.args.tern), "serve", "--index", str(self.dir), "--bind", "127.0.0.1",
                    "--port", str(self.port), "--timeout", str(int(self.args.timeout)), "--update-token", str(token),
                    "--max-update-bytes", "1G", *self.serve_args, *self.args.tern_args])
        return self

    def update_headers(self) -> dict:
        return {"Authorization": f"Bearer {self.secret}"}

    def gsp_target(self, graph: str) -> str | None:
        return "/store?graph=" + urllib.parse.quote(graph, safe="")

    def metrics(self) -> dict:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        found = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
                with contextlib.suppress(ValueError):
                    found[parts[0]] = float(parts[1])
        return found

    def store_metrics(self) -> dict:
        m = self.metrics()
        return {k.removeprefix("tern_"): m[k] for k in (
            "tern_store_version", "tern_delta_quads", "tern_delta_runs", "tern_delta_terms", "tern_delta_bytes",
            "tern_wal_bytes", "tern_compactions_total", "tern_updates_total", "tern_update_seconds_total") if k in m}

    def compact(self) -> dict:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
        t = time.perf_counter()
        conn.request("POST", "/compact", body=b"", headers=self.update_headers())
        resp = conn.getresponse()
        body = resp.read()
        wall = time.perf_counter() - t
        conn.close()
        if resp.status != 200:
            raise RuntimeError(f"POST /compact: HTTP {resp.status}: {body[:300]!r}")
        return {**json.loads(body), "wall_s": round(wall, 3)}


class OxigraphEngine(Engine):
    name = "oxigraph"
    path = "/query"
    update_path = "/update"

    def __init__(self, args, nt: Path):
        super().__init__(args)
        self.nt = nt

    def load(self) -> None:
        t = time.monotonic()
        shutil.rmtree(self.dir, ignore_errors=True)
        ox = str(self.args.oxigraph)
        subprocess.run([ox, "load", "--location", str(self.dir), "--file", str(self.nt)], check=True,
                       capture_output=True)
        subprocess.run([ox, "optimize", "--location", str(self.dir)], check=True, capture_output=True)
        self.load_s = round(time.monotonic() - t, 2)

    def __enter__(self):
        self.start([str(self.args.oxigraph), "serve", "--location", str(self.dir), "--bind",
                    f"127.0.0.1:{self.port}", "--timeout-s", str(int(self.args.timeout))])
        return self

    def gsp_target(self, graph: str) -> str | None:
        return "/store?graph=" + urllib.parse.quote(graph, safe="")


class VirtuosoEngine(Engine):
    """fairness_bench.Virtuoso in a fresh directory (it loads BASE into its graph on
    this first start), with SPARQL_UPDATE granted to the anonymous SPARQL user."""
    name = "virtuoso"
    graph = VIRTUOSO_GRAPH

    def __init__(self, args, nt: Path):
        super().__init__(args)
        self.nt = nt
        self.extra = {"default-graph-uri": self.graph}

    def load(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)  # a pristine store: it loads on its first start

    def __enter__(self):
        t = time.monotonic()
        self.inner = Virtuoso(types.SimpleNamespace(nt=self.nt, timeout=int(self.args.timeout)), directory=self.dir,
                              graph=self.graph, sql_port=free_port(), http_port=self.port)
        try:
            self.inner.__enter__()
            self.proc = self.inner.proc
            self.inner.isql('grant SPARQL_UPDATE to "SPARQL";')
        except BaseException:  # started but not ready: stop it, __exit__ will not run
            if getattr(self.inner, "proc", None) is not None:
                stop(self.inner.proc)
                self.inner.log.close()
            self.proc = None
            raise
        self.load_s = round(time.monotonic() - t, 2)  # start + load + checkpoint
        self.cmd = ["virtuoso-t", "+foreground", "+configfile", str(self.dir / "virtuoso.ini")]
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.inner.__exit__(*exc)
            self.proc = None

    def gsp_target(self, graph: str) -> str | None:
        return "/sparql-graph-crud?graph-uri=" + urllib.parse.quote(graph, safe="")


class FusekiEngine(Engine):
    name = "fuseki"
    path = "/ds/sparql"
    update_path = "/ds/update"

    def __init__(self, args, nt: Path):
        super().__init__(args)
        self.nt = nt

    def load(self) -> None:
        t = time.monotonic()
        shutil.rmtree(self.dir, ignore_errors=True)
        subprocess.run([str(self.args.java), f"-Xmx{self.args.fuseki_heap}", "-cp", str(self.args.fuseki_jar),
                        "tdb2.tdbloader", "--loader=parallel", f"--loc={self.dir}", str(self.nt)], check=True,
                       capture_output=True)
        self.load_s = round(time.monotonic() - t, 2)

    def __enter__(self):
        self.start([str(self.args.java), f"-Xmx{self.args.fuseki_heap}", "-jar", str(self.args.fuseki_jar),
                    "--localhost", f"--port={self.port}", "--update", f"--loc={self.dir}",
                    f"--timeout={int(self.args.timeout * 1000)}", "/ds"],
                   env={**os.environ, "FUSEKI_BASE": str(self.args.work / "fuseki-base")})
        return self

    def gsp_target(self, graph: str) -> str | None:
        return "/ds/data?graph=" + urllib.parse.quote(graph, safe="")


# --- requests -------------------------------------------------------------

class Updater:
    """One persistent HTTP connection for updates (and other writes) to one engine."""

    def __init__(self, engine: Engine, timeout: float):
        self.engine, self.timeout, self.conn = engine, timeout, None
        self.headers = {"Content-Type": UPDATE_CT, "Accept": "*/*", **engine.update_headers()}

    def connect(self) -> None:
        if self.conn is None or self.conn.sock is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.engine.port, timeout=self.timeout)
            self.conn.connect()
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method: str, path: str, body: bytes, headers: dict | None = None) -> dict:
        """{ms, status, error, body, retries}; the time includes deadlock retries."""
        headers = headers or self.headers
        out = {"status": None, "error": None, "body": None, "retries": 0}
        t0 = time.perf_counter()
        while True:
            try:
                self.connect()
                try:
                    self.conn.request(method, path, body=body, headers=headers)
                    resp = self.conn.getresponse()
                except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                    self.close()  # closed by the server while idle: once more on a new connection
                    self.connect()
                    self.conn.request(method, path, body=body, headers=headers)
                    resp = self.conn.getresponse()
                data = resp.read()
                if resp.will_close:
                    self.close()
            except (OSError, http.client.HTTPException) as e:
                self.close()
                out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                break
            out["status"] = resp.status
            if 200 <= resp.status < 300:
                out["body"], out["error"] = data, None
                break
            text = data[:2000].decode("utf-8", "replace")
            # one line; Virtuoso repeats the whole request after "SPARQL query:"
            text = " ".join(text.split("SPARQL query:")[0].split())[:400]
            out["error"] = f"HTTP {resp.status}: {text}"
            if ("40001" in text or "deadlock" in text.lower()) and out["retries"] < 3:
                out["retries"] += 1
                continue
            break
        out["ms"] = (time.perf_counter() - t0) * 1e3
        return out

    def update(self, body: bytes) -> dict:
        return self.request("POST", self.engine.update_path, body)


def query_value(engine: Engine, text: str, extra: dict | None = None, timeout: float = 600) -> list[dict]:
    """The bindings of a SELECT, untimed (checks)."""
    conn = http.client.HTTPConnection("127.0.0.1", engine.port, timeout=timeout)
    fields = {"query": text, **(engine.extra if extra is None else extra)}
    conn.request("POST", engine.path, body=urllib.parse.urlencode(fields).encode(),
                 headers={"Content-Type": "application/x-www-form-urlencoded",
                          "Accept": "application/sparql-results+json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"{engine.name}: HTTP {resp.status}: {data[:300]!r}")
    return json.loads(data)["results"]["bindings"]


def count_of(engine: Engine, text: str, extra: dict | None = None) -> float | None:
    try:
        rows = query_value(engine, text, extra)
        return float(rows[0]["n"]["value"]) if rows and "n" in rows[0] else 0
    except Exception as e:  # a check, not a measurement
        log(f"  {engine.name}: check query failed: {e}")
        return None


# --- data -----------------------------------------------------------------

@dataclasses.dataclass
class Data:
    base: Path  # bsbm-1m-update's base, N-Triples
    transactions: list[str]  # the update stream, one N-Triples text per transaction
    full: Path  # bsbm-1m (= base + every transaction)
    products: list[str]  # product IRIs of the base
    producers: list[str]
    offers: list[str]


def prepare_data(args) -> Data:
    args.data.mkdir(parents=True, exist_ok=True)
    upd = args.shared / "datasets/bsbm-1m-update"
    base = args.data / "bsbm-1m-update-base.nt"
    stream = args.data / "bsbm-1m-update-stream.nt"
    full = args.nt
    for src, dst in ((upd / "dataset.nt.zst", base), (upd / "dataset_update.nt.zst", stream),
                     (args.shared / "datasets/bsbm-1m/dataset.nt.zst", full)):
        if not dst.exists():
            log(f"decompressing {src} to {dst}")
            dst.parent.mkdir(parents=True, exist_ok=True)
            decompress(src, dst)
    transactions, current = [], []
    for line in stream.read_text().splitlines():
        if line.startswith(SEP):
            if current:
                transactions.append("\n".join(current) + "\n")
            current = []
        elif line.strip() and not line.startswith("#"):
            current.append(line)
    if current:
        transactions.append("\n".join(current) + "\n")
    products, producers, offers = [], set(), []
    product_t, offer_t = f"<{RDF_TYPE}> <{BSBM_VOCAB}Product> .", f"<{RDF_TYPE}> <{BSBM_VOCAB}Offer> ."
    producer_p = f"<{BSBM_VOCAB}producer>"
    with open(base) as f:
        for line in f:
            if line.endswith(product_t + "\n"):
                products.append(line.split(" ", 1)[0])
            elif line.endswith(offer_t + "\n"):
                offers.append(line.split(" ", 1)[0])
            elif f" {producer_p} " in line:
                producers.add(line.split(" ")[2])
    log(f"data: base {base.name}, {len(transactions)} update transactions, {len(products)} products, "
        f"{len(producers)} producers, {len(offers)} offers")
    return Data(base, transactions, full, products, sorted(producers), offers)


class Items:
    """Synthetic, deterministic N-Triples: request (case, round, writer, index) gets
    triples no other request has."""

    def __init__(self, products: list[str], seed: int):
        self.products, self.seed = products, seed

    def triples(self, key: str, n: int) -> str:
        rng = random.Random(f"{self.seed}/{key}")
        out = []
        if n == 1:  # one triple of an item, the predicate in turn
            j = rng.randrange(len(WB_PREDICATES))
            out.append(self.triple(f"<{WB}item/{key}/0>", j, rng, f"<{WB}item/{key}/prev>"))
        else:
            items = (n + len(WB_PREDICATES) - 1) // len(WB_PREDICATES)
            for i in range(items):
                s = f"<{WB}item/{key}/{i}>"
                for j in range(len(WB_PREDICATES)):
                    if len(out) < n:
                        out.append(self.triple(s, j, rng, f"<{WB}item/{key}/{max(i - 1, 0)}>"))
        return "\n".join(out) + "\n"

    def triple(self, s: str, j: int, rng: random.Random, prev: str) -> str:
        p = f"<{WB}{WB_PREDICATES[j]}>"
        if j == 0:
            o = f"<{WB}Item>"
        elif j == 1:
            o = '"' + " ".join(rng.choice(WORDS) for _ in range(3)) + '"'
        elif j == 2:
            o = f'"{rng.randrange(10**9)}"^^<{XSD}integer>'
        elif j == 3:
            o = f'"{rng.randrange(100, 100000) / 100:.2f}"^^<{XSD}decimal>'
        elif j == 4:
            o = f'"20{rng.randrange(10, 27)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"^^<{XSD}date>'
        elif j == 5:
            o = f'"tag{rng.randrange(50)}"'
        elif j == 6:
            o = rng.choice(self.products)
        elif j == 7:
            o = prev
        elif j == 8:
            o = '"' + " ".join(rng.choice(WORDS) for _ in range(12)) + '"@en'
        else:
            o = f'"{"true" if rng.random() < 0.5 else "false"}"^^<{XSD}boolean>'
        return f"{s} {p} {o} ."


WB_COUNT_QUERY = ("SELECT (COUNT(*) AS ?n) WHERE { VALUES ?p { " + " ".join(f"<{WB}{p}>" for p in WB_PREDICATES)
                  + " } ?s ?p ?o }")


# --- phase: BSBM Explore-and-Update mix -----------------------------------

def run_query(client: Client, q: Query) -> tuple[dict, dict]:
    text = q.file.read_text()
    r = client.execute(text, is_graph_query(text))
    rec = {"ms": r["ms"], "rows": r["rows"], "error": r["error"], "timeout": r["timeout"], "kind": r["kind"],
           "variables": r["variables"]}
    cmp = dict(rec, lines=result_lines(r, sorted(r["variables"]) if r["kind"] == "select" else None)
               if not r["error"] else [])
    return rec, cmp


def cross_check(q: Query, recs: dict[str, dict], reference: str | None = None) -> list[dict]:
    """Differences between engines on one query (against `reference` only, if given)."""
    names = list(recs)
    pairs = [(reference, e) for e in names if e != reference] if reference else \
        [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    found = []
    for a, b in pairs:
        d = compare(q, a, recs[a], b, recs[b])
        if d:
            d.pop("columns", None)
            found.append(d)
    return found


def phase_update_mix(engines: dict[str, Engine], data: Data, args) -> dict:
    suite = bsbm_suite("bsbm-explore-update", args.shared / "datasets/bsbm-1m-update/queries-explore", None)
    mixes = sorted({q.mix for q in suite.queries})
    by_mix = {m: [q for q in suite.queries if q.mix == m] for m in mixes}
    n = args.update_mixes
    if n > len(data.transactions):
        raise SystemExit(f"--update-mixes {n}: only {len(data.transactions)} update transactions")
    offers = random.Random(args.seed).sample(data.offers, n)
    grace = max(10.0, args.timeout / 2)
    clients = {e: Client(eng, args.timeout, grace) for e, eng in engines.items()}
    updaters = {e: Updater(eng, args.update_timeout) for e, eng in engines.items()}
    log(f"update-mix: warm-up ({len(suite.warmup)} queries), then {n} mixes of 25 queries + 2 updates")
    warm_fail = []
    for f in suite.warmup:
        text = f.read_text()
        for e in engines:
            r = clients[e].execute(text, is_graph_query(text))
            if r["error"]:
                warm_fail.append({"engine": e, "query": f.name, "error": r["error"][:300]})
    per_engine = {e: {"mix_ms": [], "query_ms": [], "insert_ms": [], "delete_ms": [], "failed_queries": 0,
                      "failed_updates": 0, "errors": []} for e in engines}
    differences, t_start = [], time.monotonic()
    for i in range(n):
        mix = mixes[i % len(mixes)]
        recs_by_query = {q.name: {} for q in by_mix[mix]}
        for e, eng in engines.items():
            st, total = per_engine[e], 0.0
            for q in by_mix[mix]:
                rec, cmp = run_query(clients[e], q)
                recs_by_query[q.name][e] = cmp
                total += rec["ms"]
                st["query_ms"].append(rec["ms"])
                if rec["error"]:
                    st["failed_queries"] += 1
                    st["errors"].append(f"mix {i} {q.name}: {rec['error'][:200]}")
            for kind, text in (("insert", eng.insert_data(data.transactions[i])),
                               ("delete", eng.delete_where(f"{offers[i]} ?p ?o"))):
                r = updaters[e].update(text.encode())
                total += r["ms"]
                st[f"{kind}_ms"].append(r["ms"])
                if r["error"]:
                    st["failed_updates"] += 1
                    st["errors"].append(f"mix {i} {kind}: {r['error'][:200]}")
            st["mix_ms"].append(total)
        for q in by_mix[mix]:
            found = cross_check(q, recs_by_query[q.name])
            if found:
                differences.append({"mix": i, "query": q.name, "pairs": found})
        if (i + 1) % max(1, n // 10) == 0 or i + 1 == n:
            log(f"  {i + 1}/{n} mixes ({time.monotonic() - t_start:.0f} s)")
    for u in updaters.values():
        u.close()
    out = {"explore_mixes": f"{args.shared / 'datasets/bsbm-1m-update/queries-explore'} (warm-up "
                            f"{suite.warmup[0].parent.name}; mix i = {mixes[0]}..{mixes[-1]} in turn)",
           "mixes": n, "warmup_failures": warm_fail, "engines": {}, "differences": differences}
    for e, st in per_engine.items():
        total_s = sum(st["mix_ms"]) / 1e3
        out["engines"][e] = {
            "qmph": 3600 * n / total_s if total_s and not st["failed_queries"] + st["failed_updates"] else None,
            "qmph_with_failures": 3600 * n / total_s if total_s else None,
            "explore_only_qmph": 3600 * n / (sum(st["query_ms"]) / 1e3) if st["query_ms"] else None,
            "mix_ms_median": med(st["mix_ms"]), "insert_ms_median": med(st["insert_ms"]),
            "delete_ms_median": med(st["delete_ms"]), "insert_ms_p99": pct(st["insert_ms"], 99),
            "failed_queries": st["failed_queries"], "failed_updates": st["failed_updates"],
            "errors": st["errors"][:20], "mix_ms": [round(x, 2) for x in st["mix_ms"]],
            "insert_ms": [round(x, 2) for x in st["insert_ms"]], "delete_ms": [round(x, 2) for x in st["delete_ms"]]}
    out["offers_deleted"] = offers
    return out


# --- phase: INSERT DATA throughput ----------------------------------------

def run_writers(engine: Engine, bodies: list[list[bytes]], timeout: float, expect: int | None) -> dict:
    """Each writer sends its bodies one after the other; all start together."""
    updaters = [Updater(engine, timeout) for _ in bodies]
    for u in updaters:
        u.connect()  # outside the clock
    barrier = threading.Barrier(len(bodies) + 1)
    results = [{"ms": [], "error": None, "done": 0, "end": None, "retries": 0, "miscounted": 0} for _ in bodies]

    def writer(w: int) -> None:
        res = results[w]
        barrier.wait()
        for body in bodies[w]:
            r = updaters[w].update(body)
            res["retries"] += r["retries"]
            if r["error"]:
                res["error"] = r["error"]
                break
            res["ms"].append(r["ms"])
            res["done"] += 1
            if expect is not None and engine.name in TERNS:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    if json.loads(r["body"])["inserted"] != expect:
                        res["miscounted"] += 1
        res["end"] = time.perf_counter()

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(len(bodies))]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = max(r["end"] for r in results) - t0
    for u in updaters:
        u.close()
    lat = [x for r in results for x in r["ms"]]
    done = sum(r["done"] for r in results)
    errors = [r["error"] for r in results if r["error"]]
    return {"requests": done, "requested": sum(map(len, bodies)), "wall_s": round(wall, 4),
            "req_per_s": done / wall if wall > 0 else None, "latency_ms": {
                "p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99), "max": max(lat) if lat else None},
            "retries": sum(r["retries"] for r in results), "tern_inserted_mismatch": sum(r["miscounted"] for r in results),
            "error": errors[0][:400] if errors else None, "failed_writers": len(errors)}


def phase_insert(engines: dict[str, Engine], data: Data, args) -> dict:
    counts = {k: max(1, round(v * args.scale)) for k, v in (QUICK_INSERT if args.quick else FULL_INSERT).items()}
    items = Items(data.products, args.seed)
    cases = sorted(counts, key=lambda k: (k[0], k[1]))
    expected = {e: 0 for e in engines}
    # An untimed warm-up: 20 single-triple inserts and one of 100 per engine.
    for e, eng in engines.items():
        u = Updater(eng, args.update_timeout)
        for i in range(21):
            r = u.update(eng.insert_data(items.triples(f"warm/{i}", 1 if i < 20 else 100)).encode())
            if not r["error"]:
                expected[e] += 1 if i < 20 else 100
        u.close()
    rounds, failed = [], {e: set() for e in engines}
    for rnd in range(args.runs):
        row = {}
        for size, writers in cases:
            per = max(1, counts[(size, writers)] // writers)
            key = f"n{size}-w{writers}"
            t = time.monotonic()
            inner = [[items.triples(f"{key}/r{rnd}/w{w}/{i}", size) for i in range(per)] for w in range(writers)]
            gen_s = time.monotonic() - t
            row[key] = {}
            for e, eng in engines.items():
                if key in failed[e]:
                    row[key][e] = {"skipped": "failed in an earlier round"}
                    continue
                bodies = [[eng.insert_data(x).encode() for x in w] for w in inner]
                res = run_writers(eng, bodies, args.update_timeout, size)
                res["triples"] = res["requests"] * size
                res["triples_per_s"] = res["triples"] / res["wall_s"] if res["wall_s"] > 0 else None
                expected[e] += res["triples"]
                if res["error"]:
                    failed[e].add(key)
                row[key][e] = res
                log(f"  round {rnd + 1} {key:>11} {e:>8}: {res['requests']}/{res['requested']} requests in "
                    f"{res['wall_s']:.2f} s, {fmt_rate(res['req_per_s'])} req/s, {fmt_rate(res['triples_per_s'])} "
                    f"triples/s" + (f"; ERROR {res['error'][:160]}" if res["error"] else ""))
            row[key]["_bodies_generated_s"] = round(gen_s, 2)
        rounds.append(row)
    summary = {}
    for size, writers in cases:
        key = f"n{size}-w{writers}"
        s = {"triples_per_request": size, "writers": writers,
             "requests_per_round": max(1, counts[(size, writers)] // writers) * writers}
        for e in engines:
            runs = [r[key][e] for r in rounds if "req_per_s" in r[key][e]]
            ok = [x for x in runs if not x["error"]]
            s[e] = {"req_per_s": med([x["req_per_s"] for x in ok]), "triples_per_s": med([x["triples_per_s"] for x in ok]),
                    "p50_ms": med([x["latency_ms"]["p50"] for x in ok]), "p99_ms": med([x["latency_ms"]["p99"] for x in ok]),
                    "rounds": len(ok), "error": next((x["error"] for x in runs if x["error"]), None)}
        summary[key] = s
    check = {}
    for e, eng in engines.items():
        got = count_of(eng, WB_COUNT_QUERY)
        check[e] = {"expected": expected[e], "counted": got, "ok": got == expected[e]}
        if got != expected[e]:
            log(f"  WARNING {e}: {got} synthetic triples counted, {expected[e]} answered 2xx")
    return {"counts": {f"n{k[0]}-w{k[1]}": v for k, v in counts.items()}, "summary": summary, "rounds": rounds,
            "check_synthetic_triples": check}


# --- phase: DELETE/INSERT WHERE -------------------------------------------

MODIFY_PROLOGUE = f"PREFIX bsbm: <{BSBM_VOCAB}>"


def modify_text(eng: Engine, producer: str | None) -> str:
    where = "?p bsbm:productPropertyNumeric1 ?v . BIND(?v + 1 AS ?w)"
    if producer:
        where = f"?p bsbm:producer {producer} . " + where
    return eng.modify(MODIFY_PROLOGUE, "?p bsbm:productPropertyNumeric1 ?v", "?p bsbm:productPropertyNumeric1 ?w",
                      where)


def phase_modify(engines: dict[str, Engine], data: Data, args) -> dict:
    counts = {k: max(1, round(v * args.scale)) for k, v in (QUICK_MODIFY if args.quick else FULL_MODIFY).items()}
    rounds, failed, k = [], {e: set() for e in engines}, 0
    for rnd in range(args.runs):
        row = {}
        for variant, n in counts.items():
            producers = [data.producers[(k + i) % len(data.producers)] for i in range(n)] \
                if variant == "producer" else [None] * n
            k += n if variant == "producer" else 0
            row[variant] = {}
            for e, eng in engines.items():
                if variant in failed[e]:
                    row[variant][e] = {"skipped": "failed in an earlier round"}
                    continue
                u = Updater(eng, args.update_timeout)
                u.connect()
                lat, changed, err = [], [], None
                t0 = time.perf_counter()
                for p in producers:
                    r = u.update(modify_text(eng, p).encode())
                    if r["error"]:
                        err = r["error"]
                        break
                    lat.append(r["ms"])
                    if eng.name in TERNS:
                        with contextlib.suppress(ValueError, KeyError, TypeError):
                            j = json.loads(r["body"])
                            changed.append(j["inserted"] + j["deleted"])
                wall = time.perf_counter() - t0
                u.close()
                if err:
                    failed[e].add(variant)
                row[variant][e] = {"requests": len(lat), "requested": n, "wall_s": round(wall, 4),
                                   "req_per_s": len(lat) / wall if wall > 0 and lat else None,
                                   "latency_ms": {"p50": pct(lat, 50), "p99": pct(lat, 99), "max": max(lat, default=None)},
                                   "tern_changed_quads": changed or None, "error": err[:400] if err else None}
                log(f"  round {rnd + 1} modify {variant:>12} {e:>8}: {len(lat)}/{n} in {wall:.2f} s, median "
                    f"{fmt_ms(pct(lat, 50))} ms" + (f"; ERROR {err[:160]}" if err else ""))
        rounds.append(row)
    summary = {}
    for variant in counts:
        s = {}
        for e in engines:
            ok = [r[variant][e] for r in rounds if r[variant][e].get("req_per_s") and not r[variant][e]["error"]]
            s[e] = {"req_per_s": med([x["req_per_s"] for x in ok]), "p50_ms": med([x["latency_ms"]["p50"] for x in ok]),
                    "rounds": len(ok),
                    "error": next((r[variant][e].get("error") for r in rounds if r[variant][e].get("error")), None)}
        summary[variant] = s
    check = {}
    q = (f"PREFIX bsbm: <{BSBM_VOCAB}> SELECT (COUNT(?v) AS ?n) (SUM(?v) AS ?sum) "
         "WHERE { ?p bsbm:productPropertyNumeric1 ?v }")
    for e, eng in engines.items():
        try:
            row = query_value(eng, q)[0]
            check[e] = {"count": float(row["n"]["value"]), "sum": float(row["sum"]["value"])}
        except Exception as ex:
            check[e] = {"error": str(ex)[:300]}
    values = {json.dumps(v, sort_keys=True) for v in check.values() if "error" not in v}
    if len(values) > 1:
        log(f"  WARNING: engines disagree on productPropertyNumeric1 after the rewrites: {check}")
    return {"counts": counts, "summary": summary, "rounds": rounds,
            "check_numeric1": {"engines": check, "agree": len(values) <= 1}}


# --- phase: Graph Store Protocol PUT of a large graph ----------------------

def gsp_put_large_graph(engines: dict[str, Engine], args) -> dict:
    """PUT an N-Triples graph into a new named graph on every engine, per round.
    tern is skipped, with the reason printed, when it answers 404/405 (a build
    without the Graph Store Protocol)."""
    src = args.nt
    if args.gsp_triples:
        body_lines = []
        with open(src, "rb") as f:
            for line in f:
                body_lines.append(line)
                if len(body_lines) >= args.gsp_triples:
                    break
        body = b"".join(body_lines)
    else:
        body = src.read_bytes()
    triples = body.count(b"\n")
    log(f"gsp: PUT of {triples:,} triples ({len(body) / 1e6:.0f} MB of N-Triples) per engine and round")
    rounds, skipped = [], {}
    for rnd in range(args.runs):
        row = {}
        graph = f"{WB}gsp/{rnd}"
        for e, eng in engines.items():
            if e in skipped:
                row[e] = {"skipped": skipped[e]}
                continue
            target = eng.gsp_target(graph)
            if target is None:
                skipped[e] = "no graph store endpoint"
                row[e] = {"skipped": skipped[e]}
                continue
            u = Updater(eng, args.update_timeout)
            u.connect()
            headers = {"Content-Type": "application/n-triples", **eng.update_headers()}
            r = u.request("PUT", target, body, headers)
            u.close()
            if e in TERNS and r["status"] in (404, 405):
                skipped[e] = (f"tern answered HTTP {r['status']} to PUT {target.split('?')[0]}: no Graph Store "
                              "Protocol writes in this build")
                log(f"  SKIPPED tern: {skipped[e]}")
                row[e] = {"skipped": skipped[e]}
                continue
            res = {"status": r["status"], "s": round(r["ms"] / 1e3, 3), "error": r["error"][:400] if r["error"] else None}
            if not r["error"]:
                res["triples_per_s"] = triples / (r["ms"] / 1e3)
                n = count_of(eng, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}", extra={})
                res["counted"] = n
                if n != triples:
                    log(f"  WARNING {e}: graph {graph} has {n} triples after the PUT of {triples}")
            else:
                skipped[e] = f"failed: {r['error'][:200]}"
            row[e] = res
            log(f"  round {rnd + 1} gsp PUT {e:>8}: " + (f"{res['s']:.2f} s, {fmt_rate(res.get('triples_per_s'))} "
                                                          "triples/s" if not res["error"] else f"ERROR {res['error'][:200]}"))
        rounds.append(row)
    summary = {e: {"s": med([r[e].get("s") for r in rounds if r[e].get("s") and not r[e].get("error")]),
                   "triples_per_s": med([r[e].get("triples_per_s") for r in rounds if r[e].get("triples_per_s")]),
                   "skipped": skipped.get(e)} for e in engines}
    return {"source": str(src), "triples": triples, "bytes": len(body), "summary": summary, "rounds": rounds}


# --- phase: tern with a delta against the same data compacted --------------

def split_for_delta(data: Data, percent: float, total: int) -> int:
    """How many of the last update transactions make a delta of `percent` of the rest
    (`total`: the triples of base + every transaction)."""
    k, held = 0, 0
    while k < len(data.transactions) and held < percent / 100 * (total - held):
        k += 1
        held += data.transactions[-k].count("\n")
    return k


def explore_round(servers: dict[str, Engine], suite, args, reference: str) -> dict:
    """Warm-up, then every query --runs times, interleaved per query across the servers;
    per query the median, and every result compared with the reference server's."""
    grace = max(10.0, args.timeout / 2)
    clients = {s: Client(eng, args.timeout, grace) for s, eng in servers.items()}
    for f in suite.warmup:
        text = f.read_text()
        for s in servers:
            clients[s].execute(text, is_graph_query(text))
    per = {s: {} for s in servers}
    differences = []
    for q in suite.queries:
        runs = {s: [] for s in servers}
        first = {}
        for _ in range(args.runs):
            for s in servers:
                rec, cmp = run_query(clients[s], q)
                if rec["error"]:
                    first.setdefault(s, cmp)
                    runs[s].append(None)
                    continue
                runs[s].append(rec["ms"])
                first.setdefault(s, cmp)
        for s in servers:
            ok = [x for x in runs[s] if x is not None]
            per[s][q.name] = med(ok) if len(ok) == len(runs[s]) else None
        found = cross_check(q, first, reference)
        if found:
            differences.append({"query": q.name, "pairs": found})
    answered = [q.name for q in suite.queries if all(per[s][q.name] is not None for s in servers)]
    mixes = len({q.mix for q in suite.queries})
    out = {}
    for s in servers:
        total = sum(per[s][n] for n in answered) / 1e3
        out[s] = {"qmph": 3600 * mixes / total if total else None, "sum_medians_s": round(total, 3),
                  "failed": sum(v is None for v in per[s].values()),
                  "median_ms": {k: (round(v, 3) if v is not None else None) for k, v in per[s].items()}}
    return {"servers": out, "differences": differences, "answered_by_all": len(answered), "mixes": mixes}


def phase_tern_delta(data: Data, args) -> dict:
    suite = bsbm_suite("bsbm-explore", args.shared / "datasets/bsbm-1m/queries-explore", args.explore_mixes)
    percents = args.deltas
    total = sum(t.count("\n") for t in data.transactions) + sum(1 for _ in open(data.base))
    splits = {p: split_for_delta(data, p, total) for p in percents}
    report = {"queries": f"{args.shared / 'datasets/bsbm-1m/queries-explore'}: warm-up mix0000, "
                         f"{args.explore_mixes} mixes x {args.runs} runs", "deltas": {}}
    with contextlib.ExitStack() as stack:
        servers = {}
        for p in percents:
            k = splits[p]
            nt = args.work / f"tern-delta-{p:g}.nt"
            with open(nt, "w") as f:
                f.write(data.base.read_text())
                for t in data.transactions[:len(data.transactions) - k]:
                    f.write(t)
            eng = TernEngine(args, f"tern-delta-{p:g}", nt, ["--compact-after", "0"])
            eng.load()
            nt.unlink()
            servers[f"delta {p:g}%"] = stack.enter_context(eng)
            held = data.transactions[len(data.transactions) - k:]
            u = Updater(eng, args.update_timeout)
            lat, t0 = [], time.perf_counter()
            for t in held:
                r = u.update(eng.insert_data(t).encode())
                if r["error"]:
                    raise RuntimeError(f"tern delta {p}%: insert failed: {r['error']}")
                lat.append(r["ms"])
            wall = time.perf_counter() - t0
            u.close()
            triples = sum(t.count("\n") for t in held)
            m = eng.store_metrics()
            report["deltas"][f"{p:g}%"] = {
                "transactions": k, "delta_triples": triples, "base_load_s": eng.load_s,
                "delta_share_of_base": round(triples / (total - triples), 4),
                "insert": {"wall_s": round(wall, 3), "triples_per_s": triples / wall, "req_per_s": k / wall,
                           "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)},
                "store_before_compaction": m}
            log(f"tern-delta {p:g}%: {k} transactions, {triples:,} triples inserted in {wall:.1f} s; "
                f"delta_quads {m.get('delta_quads')}")
        fresh = TernEngine(args, "tern-fresh", data.full)
        fresh.load()
        servers["fresh"] = stack.enter_context(fresh)
        log(f"tern-delta: explore, {len(suite.queries)} queries x {args.runs} runs on {', '.join(servers)}")
        before = explore_round(servers, suite, args, "fresh")
        for p in percents:
            eng = servers[f"delta {p:g}%"]
            c = eng.compact()
            report["deltas"][f"{p:g}%"]["compaction"] = c
            report["deltas"][f"{p:g}%"]["store_after_compaction"] = eng.store_metrics()
            log(f"tern-delta {p:g}%: compacted in {c.get('seconds')} s (wall {c['wall_s']} s)")
        renamed = {(f"compacted {k.split()[1]}" if k.startswith("delta") else k): v for k, v in servers.items()}
        log(f"tern-delta: explore again on {', '.join(renamed)}")
        after = explore_round(renamed, suite, args, "fresh")
    report["before_compaction"], report["after_compaction"] = before, after
    for p in percents:
        d, c = before["servers"][f"delta {p:g}%"]["qmph"], after["servers"][f"compacted {p:g}%"]["qmph"]
        report["deltas"][f"{p:g}%"]["qmph"] = {"delta": d, "compacted": c, "delta_over_compacted": ratio(d, c),
                                               "fresh_before": before["servers"]["fresh"]["qmph"],
                                               "fresh_after": after["servers"]["fresh"]["qmph"]}
    return report


# --- tables ---------------------------------------------------------------

def markdown(results: dict, engines: list[str]) -> str:
    terns = [e for e in engines if e in TERNS]
    # ratio columns: each tern engine against each peer (the async one against the peers that do
    # not sync per commit either, and Fuseki)
    pairs = [(t, p) for t in terns for p in engines if p not in TERNS]
    peers = pairs  # one ratio column per pair
    L = [LABEL[e] for e in engines]
    lines = []

    def ratio_cells(vals: dict) -> list[str]:
        return [fmt_ratio(ratio(vals.get(t), vals.get(p))) for t, p in pairs]

    rhead = " | ".join(f"{LABEL[t]}/{LABEL[p]}" for t, p in pairs)
    if "update-mix" in results:
        r = results["update-mix"]
        lines += ["", f"**BSBM Explore-and-Update** ({r['mixes']} mixes: 25 explore queries + INSERT DATA of one "
                  "update transaction + DELETE WHERE of one offer, one client); QMpH, higher is better", "",
                  "| figure | " + " | ".join(L) + (" | " + rhead if peers else "") + " |",
                  "|---|" + "---:|" * (len(engines) + len(peers))]
        for key, label in (("qmph_with_failures", "QMpH (mix with updates)"), ("explore_only_qmph", "QMpH of the queries alone")):
            vals = {e: r["engines"][e][key] for e in engines}
            lines.append(f"| {label} | " + " | ".join(fmt_rate(vals[e]) for e in engines)
                         + (" | " + " | ".join(ratio_cells(vals)) if peers else "") + " |")
        for key, label in (("insert_ms_median", "INSERT DATA transaction, median ms"),
                           ("delete_ms_median", "DELETE WHERE offer, median ms")):
            vals = {e: r["engines"][e][key] for e in engines}
            inv = {e: (1 / v if v else None) for e, v in vals.items()}
            lines.append(f"| {label} | " + " | ".join(fmt_ms(vals[e]) for e in engines)
                         + (" | " + " | ".join(ratio_cells(inv)) if peers else "") + " |")
        lines.append("| failed queries / updates | " + " | ".join(
            f"{r['engines'][e]['failed_queries']} / {r['engines'][e]['failed_updates']}" for e in engines)
                     + " | " * len(peers) + " |")
        lines.append(f"\nResult differences between engines: {len(r['differences'])} queries.")
    if "insert" in results:
        r = results["insert"]
        lines += ["", "**INSERT DATA**: median over rounds of requests/s and triples/s (ratio on triples/s: tern / "
                  "peer, above 1 tern is faster)", "",
                  "| triples/request | writers | requests | " + " | ".join(f"{l} req/s" for l in L) + " | "
                  + " | ".join(f"{l} triples/s" for l in L) + " | " + " | ".join(f"{l} p50/p99 ms" for l in L)
                  + (" | " + rhead if peers else "") + " |",
                  "|---:|---:|---:|" + "---:|" * (3 * len(engines) + len(peers))]
        for key, s in r["summary"].items():
            cell = lambda e, k: fmt_rate(s[e][k]) if s[e]["error"] is None or s[e][k] else "failed"
            lines.append(f"| {s['triples_per_request']:,} | {s['writers']} | {s['requests_per_round']:,} | "
                         + " | ".join(cell(e, "req_per_s") for e in engines) + " | "
                         + " | ".join(cell(e, "triples_per_s") for e in engines) + " | "
                         + " | ".join(f"{fmt_ms(s[e]['p50_ms'])} / {fmt_ms(s[e]['p99_ms'])}" for e in engines)
                         + (" | " + " | ".join(ratio_cells({e: s[e]["triples_per_s"] for e in engines})) if peers else "")
                         + " |")
        errs = [(k, e, s[e]["error"]) for k, s in r["summary"].items() for e in engines if s[e]["error"]]
        for k, e, err in errs:
            lines.append(f"- {k} {LABEL[e]}: {err[:200]}")
        chk = r["check_synthetic_triples"]
        lines.append("\nSynthetic triples counted afterwards = answered 2xx: " + ", ".join(
            f"{LABEL[e]} {'yes' if chk[e]['ok'] else 'NO (%s of %s)' % (chk[e]['counted'], chk[e]['expected'])}"
            for e in engines) + ".")
    if "modify" in results:
        r = results["modify"]
        lines += ["", "**DELETE/INSERT WHERE** (productPropertyNumeric1 + 1), one writer: requests/s (median ms)",
                  "", "| products per request | " + " | ".join(L) + (" | " + rhead if peers else "") + " |",
                  "|---|" + "---:|" * (len(engines) + len(peers))]
        for variant, s in r["summary"].items():
            name = "one producer's (18-85)" if variant == "producer" else "all"
            lines.append(f"| {name} | " + " | ".join(
                (f"{fmt_rate(s[e]['req_per_s'])} ({fmt_ms(s[e]['p50_ms'])})" if s[e]["req_per_s"] else "failed")
                for e in engines) + (" | " + " | ".join(ratio_cells({e: s[e]["req_per_s"] for e in engines}))
                                     if peers else "") + " |")
        lines.append(f"\nproductPropertyNumeric1 COUNT/SUM equal on every engine afterwards: "
                     f"{'yes' if r['check_numeric1']['agree'] else 'NO'}.")
    if "gsp" in results:
        r = results["gsp"]
        lines += ["", f"**Graph Store PUT** of {r['triples']:,} triples ({r['bytes'] / 1e6:.0f} MB N-Triples) "
                  "into a new named graph: seconds (triples/s)", "",
                  "| | " + " | ".join(L) + (" | " + rhead if peers else "") + " |",
                  "|---|" + "---:|" * (len(engines) + len(peers))]
        s = r["summary"]
        lines.append("| PUT | " + " | ".join(
            (f"{s[e]['s']:.2f} ({fmt_rate(s[e]['triples_per_s'])})" if s[e]["s"] else f"skipped: {s[e]['skipped']}")
            for e in engines) + (" | " + " | ".join(ratio_cells({e: s[e]["triples_per_s"] for e in engines}))
                                 if peers else "") + " |")
    if "tern-delta" in results:
        r = results["tern-delta"]
        lines += ["", f"**tern: BSBM 1M explore with a delta against the same data compacted** ({r['queries']}); "
                  "QMpH", "",
                  "| delta | transactions | delta triples | insert triples/s | QMpH with delta | compaction s | "
                  "QMpH compacted | delta / compacted | fresh index, round before / after |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for p, d in r["deltas"].items():
            q = d["qmph"]
            lines.append(f"| {p} | {d['transactions']} | {d['delta_triples']:,} | "
                         f"{fmt_rate(d['insert']['triples_per_s'])} | {fmt_rate(q['delta'])} | "
                         f"{d['compaction'].get('seconds')} | {fmt_rate(q['compacted'])} | "
                         f"{fmt_ratio(q['delta_over_compacted'])} | {fmt_rate(q['fresh_before'])} / {fmt_rate(q['fresh_after'])} |")
        nd = len(r["before_compaction"]["differences"]) + len(r["after_compaction"]["differences"])
        lines.append(f"\nQueries whose results differ from the fresh index's: {nd}.")
    return "\n".join(lines)


def report_differences(results: dict) -> str:
    out = []
    for phase in ("update-mix",):
        diffs = results.get(phase, {}).get("differences", [])
        if diffs:
            out.append(f"\n## {phase}: {len(diffs)} query results differ between engines")
            for d in diffs[:30]:
                notes = sorted({n for p in d["pairs"] for n in p.get("notes", [])})
                out.append(f"- mix {d['mix']} {d['query']}: " + "; ".join(
                    f"{p['engines'][0]} vs {p['engines'][1]} [{p['kind']}] rows {p['rows']}" for p in d["pairs"])
                    + (f" (note: {'; '.join(notes)})" if notes else ""))
    if "tern-delta" in results:
        for when in ("before_compaction", "after_compaction"):
            diffs = results["tern-delta"][when]["differences"]
            if diffs:
                out.append(f"\n## tern-delta {when}: {len(diffs)} results differ from the fresh index")
                for d in diffs[:30]:
                    out.append(f"- {d['query']}: " + "; ".join(
                        f"{p['engines'][1]} [{p['kind']}] rows {p['rows']}" for p in d["pairs"]))
    return "\n".join(out)


def slim_differences(results: dict) -> None:
    """Keeps the JSON small: at most 2 sample rows per side of a difference."""
    def trim(pairs):
        for p in pairs:
            for side in p.get("only", {}):
                p["only"][side] = [x[:300] for x in p["only"][side][:2]]
    for d in results.get("update-mix", {}).get("differences", []):
        trim(d["pairs"])
    for when in ("before_compaction", "after_compaction"):
        for d in results.get("tern-delta", {}).get(when, {}).get("differences", []):
            trim(d["pairs"])


# --- main -----------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of: " + ",".join(ENGINES))
    ap.add_argument("--phases", default=",".join(PHASES), help="comma-separated subset of: " + ",".join(PHASES))
    ap.add_argument("--quick", action="store_true", help="small counts, one round: a smoke test")
    ap.add_argument("--runs", type=int, help="rounds of the insert, modify and gsp phases, runs per query in "
                    "tern-delta (default 3, --quick 1)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the request counts of insert and modify")
    ap.add_argument("--update-mixes", type=int, help="Explore-and-Update mixes (default 57 = 3 passes over the 19 "
                    "explore mixes, --quick 2)")
    ap.add_argument("--explore-mixes", type=int, help="tern-delta: measured BSBM 1M explore mixes (default 20, "
                    "--quick 2)")
    ap.add_argument("--deltas", default="1,10", help="tern-delta: delta sizes in %% of the base (default: %(default)s)")
    ap.add_argument("--gsp-triples", type=int, help="gsp: PUT only the first N triples of --nt (default: all of it, "
                    "--quick 20000)")
    ap.add_argument("--timeout", type=float, default=60, help="per query, seconds (default: %(default)s)")
    ap.add_argument("--update-timeout", type=float, default=900, help="per update request, seconds (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-args", default="", help="extra arguments of tern serve, e.g. '--workers 2'")
    ap.add_argument("--oxigraph", type=Path, default=DEFAULT_VENV / "bin/oxigraph",
                    help="oxigraph CLI from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--java", type=Path, default=find_java(), help="Java 21+ for Fuseki (default: %(default)s)")
    ap.add_argument("--fuseki-jar", type=Path, default=find_fuseki_jar(), help="default: %(default)s")
    ap.add_argument("--fuseki-heap", default="4G")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared/ directory (default: %(default)s)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="decompressed inputs (default: %(default)s)")
    ap.add_argument("--nt", type=Path, default=DEFAULT_DATA / "bsbm-1m.nt", help="BSBM 1M N-Triples (default: %(default)s)")
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA / "write-bench",
                    help="stores and server logs, emptied at the start (default: %(default)s)")
    ap.add_argument("--keep", action="store_true", help="keep the stores in --work at the end")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/write-<date>[-quick].json)")
    args = ap.parse_args()

    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if unknown := set(args.engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    args.engines = [e for e in ENGINES if e in args.engines]
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if unknown := set(phases) - set(PHASES):
        ap.error(f"unknown phase(s): {', '.join(sorted(unknown))}")
    args.runs = args.runs or (1 if args.quick else 3)
    args.update_mixes = args.update_mixes or (2 if args.quick else 57)
    args.explore_mixes = args.explore_mixes or (2 if args.quick else 20)
    if args.gsp_triples is None and args.quick:
        args.gsp_triples = 20_000
    args.deltas = [float(x) for x in args.deltas.split(",") if x.strip()]
    args.tern_args = args.tern_args.split()
    needs_tern = any(e in TERNS for e in args.engines) or "tern-delta" in phases
    if needs_tern and not os.access(args.tern, os.X_OK):
        ap.error(f"no tern binary at {args.tern} (cargo build --release -p tern-cli, or --tern)")
    if "oxigraph" in args.engines and not os.access(args.oxigraph, os.X_OK):
        ap.error(f"no {args.oxigraph}: run bench/setup_peers.sh first")
    if "virtuoso" in args.engines and not shutil.which("virtuoso-t"):
        ap.error("no virtuoso-t: apt-get install -y virtuoso-opensource")
    if "fuseki" in args.engines and not (args.java and args.fuseki_jar and args.fuseki_jar.exists()):
        ap.error("fuseki needs --java (21+) and --fuseki-jar (mvn dependency:get, see ../shared/PEERS.md)")
    args.work = args.work.resolve()

    def interrupt(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    started = datetime.datetime.now()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    data = prepare_data(args)
    results, servers_info, load_before = {}, {}, load_average()
    shared_phases = [p for p in phases if p != "tern-delta"]
    t_run = time.monotonic()
    if shared_phases and args.engines:
        makers = {"tern": lambda: TernEngine(args, "tern", data.base),
                  "tern-async": lambda: TernEngine(args, "tern-async", data.base, ["--wal-sync", ASYNC_SYNC]),
                  "oxigraph": lambda: OxigraphEngine(args, data.base),
                  "virtuoso": lambda: VirtuosoEngine(args, data.base), "fuseki": lambda: FusekiEngine(args, data.base)}
        with contextlib.ExitStack() as stack:
            engines = {}
            for e in args.engines:
                eng = makers[e]()
                t = time.monotonic()
                eng.load()
                engines[e] = stack.enter_context(eng)
                log(f"{e}: loaded and started (pid {eng.proc.pid}, port {eng.port}) in {time.monotonic() - t:.1f} s")
            for phase in shared_phases:
                t = time.monotonic()
                log(f"== {phase}")
                if phase == "update-mix":
                    results[phase] = phase_update_mix(engines, data, args)
                elif phase == "insert":
                    results[phase] = phase_insert(engines, data, args)
                elif phase == "modify":
                    results[phase] = phase_modify(engines, data, args)
                elif phase == "gsp":
                    results[phase] = gsp_put_large_graph(engines, args)
                results[phase]["elapsed_s"] = round(time.monotonic() - t, 1)
            for e, eng in engines.items():
                servers_info[e] = eng.info()
                if e in TERNS:
                    servers_info[e]["store"] = eng.store_metrics()
        for e in args.engines:  # after the clean stop (checkpoints, flushes)
            servers_info[e]["store_bytes_after"] = dir_bytes(args.work / e)
    if "tern-delta" in phases:
        log("== tern-delta")
        t = time.monotonic()
        results["tern-delta"] = phase_tern_delta(data, args)
        results["tern-delta"]["elapsed_s"] = round(time.monotonic() - t, 1)
    slim_differences(results)
    report = {
        "benchmark": "write", "quick": args.quick, "started": started.isoformat(timespec="seconds"),
        "elapsed_s": round(time.monotonic() - t_run, 1), "machine": machine(), "git_commit": git_commit(),
        "command": " ".join(sys.argv), "runs": args.runs, "seed": args.seed, "timeout_s": args.timeout,
        "load_average_before": load_before, "load_average_after": load_average(),
        "client": "python http.client, persistent connections (TCP_NODELAY), one per writer thread; updates POSTed as "
                  f"{UPDATE_CT}; time from request sent to answer read",
        "data": {"base": str(data.base), "update_transactions": len(data.transactions), "bsbm_1m": str(data.full)},
        "engines": {
            "tern": {"binary": str(args.tern), "version": tool_version([str(args.tern), "--version"])},
            "tern-async": {"binary": str(args.tern), "wal_sync": ASYNC_SYNC},
            "oxigraph": {"binary": str(args.oxigraph), "version": tool_version([str(args.oxigraph), "--version"])},
            "virtuoso": {"version": tool_version(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"]),
                         "graph": VIRTUOSO_GRAPH},
            "fuseki": {"jar": str(args.fuseki_jar), "java": str(args.java), "heap": args.fuseki_heap},
        },
        "servers": servers_info,
        "phases": results,
    }
    for e, v in report["engines"].items():
        v["commit_durability"] = COMMIT_DURABILITY[e]
    report["engines"] = {e: v for e, v in report["engines"].items() if e in args.engines
                         or (e == "tern" and "tern-delta" in phases)}
    out = args.out or BENCH / "results" / f"write-{started:%Y-%m-%d}{'-quick' if args.quick else ''}.json"
    publish(report, out, markdown(results, args.engines), report_differences(results))
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the servers were stopped)")
