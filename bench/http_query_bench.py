#!/usr/bin/env python3
"""BSBM query latency over HTTP: `tern serve`, Oxigraph's server and Virtuoso 7,
side by side in one run, one client, on the same data.

Engines (each started once per suite, after an untimed load, stopped by pid at
the end, also on Ctrl-C and errors):
  tern      tern serve --index DIR --bind 127.0.0.1 --port P --timeout T
            (endpoint /sparql)
  oxigraph  oxigraph serve-read-only --location DIR --bind 127.0.0.1:P
            --timeout-s T (the `oxigraph` wheel's server; endpoint /query)
  virtuoso  Virtuoso 7.2 (Debian), a private instance as in ../shared/PEERS.md,
            started with fairness_bench.Virtuoso in its own directory, data in
            one named graph, queried with default-graph-uri (endpoint /sparql)

Suites: bsbm-explore (queries-explore/mix0001..) and bsbm-bi (queries-bi/mix0001..)
on BSBM 1M; mix0000 of each is the warm-up, run once per engine, unmeasured.
watdiv-basic: WatDiv SF10, the 20 basic templates x 20 instances (as in
query_bench.py; each template's first instance also warms up). biblio-robust: the
40 queries of bench/robustness/*.rq, one per shape (file name = group), on a
DBLP-like graph that bench/biblio.py generates (--biblio-triples, default 1M:
dataset biblio-1m); a few of them are the warm-up; its tables add, per query,
tern's median over the fastest peer's. Each dataset has its own tern index,
Oxigraph store and Virtuoso directory in --work. biblio-robust is not in the
default --suites.

The client sends every query as a form POST (query=...) over one persistent
HTTP connection per engine (TCP_NODELAY set, as curl and urllib3 do), asking
for SPARQL JSON
(Accept: application/sparql-results+json), or N-Triples for CONSTRUCT and
DESCRIBE. A run's latency is from sending the request until the whole body has
been read and parsed (json.loads; for N-Triples, every line split into its
three terms). Connecting is not timed: a connection the server closed is opened
again before the next request's clock starts. Runs are interleaved per query
(tern, oxigraph, virtuoso, then oxigraph, virtuoso, tern, ...: each run starts one
engine later) so that drift on the machine, and what an engine leaves running
after its answer, hit all engines alike. A run that fails (HTTP error, cut or unparseable body, Virtuoso's
partial "anytime" answer, no answer within the timeout plus a grace period)
fails the query for that engine and its later runs are skipped.

Figures, as in query_bench.py: per query the median of its runs; per query type
the median over its instances of those medians; per suite QMpH = 3600 s x mixes
/ sum of the medians over the queries every engine answered, and the speed of
tern against each peer = geometric mean over the queries both answered of
(peer median / tern median), so above 1 means tern is faster. Results are
cross-checked pairwise with query_bench.py's comparison (same multiset of rows,
terms as N-Triples strings, columns by variable name, numbers by value, floats
within 1e-5). Markdown tables go to stdout, everything (each run of each query
on each engine, medians, rows, errors, differences with sample rows) to
bench/results/http-query-<date>.json.

Needs: a release `tern` (--tern), `bash bench/setup_peers.sh` (pyoxigraph and
the oxigraph server in its venv), `apt-get install virtuoso-opensource`.
Stdlib only.
"""
import argparse
import collections
import contextlib
import dataclasses
import datetime
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import types
import urllib.parse
from decimal import Decimal, InvalidOperation
from pathlib import Path

import biblio
from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, DEFAULT_VENV, SHARED, decompress, git_commit, machine, \
    tool_version
from fairness_bench import Virtuoso, stop, wait_http
from query_bench import LITERAL, NUMERIC, SAMPLES, TERM, XSD, Query, Suite, bsbm_suite, by_value, close, fmt_ms, \
    geomean, mask_bnodes, same, publish, median_cells, watdiv_suite

ENGINES = ("tern", "oxigraph", "virtuoso")
LABEL = {"tern": "tern", "oxigraph": "Oxigraph", "virtuoso": "Virtuoso"}
PEERS = ("oxigraph", "virtuoso")
SUITES = ("bsbm-explore", "bsbm-bi", "watdiv-basic", "biblio-robust")
DEFAULT_SUITES = ("bsbm-explore", "bsbm-bi", "watdiv-basic")
DEFAULT_MIXES = {"bsbm-explore": 20, "bsbm-bi": 19}
# The compressed N-Triples of each dataset, under --shared.
DATASET_FILES = {"bsbm-1m": "datasets/bsbm-1m/dataset.nt.zst", "watdiv-10": "datasets/watdiv-10/watdiv.10.nt.zst"}
# Generated datasets (bench/biblio.py): triples and seed, by dataset name.
GENERATED: dict[str, tuple[int, int]] = {}
BIBLIO_SEED = 1
BIBLIO_QUERIES = BENCH / "robustness"
# biblio-robust's warm-up, run once per engine before the measured runs: together they
# touch every triple (the scans) and the busiest predicates.
BIBLIO_WARMUP = ("varpred-filter-eq-scan", "filter-lang-datatype", "agg-count-distinct", "star-person")


def biblio_dataset(triples: int) -> str:
    """biblio-1m, biblio-10m, biblio-250k, biblio-12345."""
    for unit, div in (("m", 1_000_000), ("k", 1_000)):
        if triples % div == 0:
            return f"biblio-{triples // div}{unit}"
    return f"biblio-{triples}"


def biblio_suite(folder: Path, triples: int) -> Suite:
    """One query per file, named and grouped by its shape (the file name). A LIMIT
    without ORDER BY may return any rows: such queries are marked `any_rows`, and the
    comparison checks only their row count."""
    dataset = biblio_dataset(triples)
    GENERATED[dataset] = (triples, BIBLIO_SEED)
    queries = []
    for f in sorted(folder.glob("*.rq")):
        q = Query(f, f.name, f.stem, None)
        body = re.sub(r"#[^\n]*", "", re.sub(r'"[^"\n]*"|<[^<>\s]*>', '""', f.read_text()))
        q.any_rows = bool(re.search(r"\bLIMIT\b", body, re.I)) and not re.search(r"\bORDER\s+BY\b", body, re.I)
        queries.append(q)
    warmup = [folder / f"{name}.rq" for name in BIBLIO_WARMUP]
    return Suite("biblio-robust", dataset, queries, warmup)


def graph_of(dataset: str) -> str:
    """Virtuoso's graph of a dataset; tern and Oxigraph have the data in the default graph."""
    return f"http://tern.bench/{dataset}"


def virtuoso_dir(args, dataset: str) -> Path:
    # BSBM's keeps its first name, so that a database loaded by earlier runs is reused.
    return args.work / ("virtuoso" if dataset == "bsbm-1m" else f"virtuoso-{dataset}")

JSON_RESULTS = "application/sparql-results+json"
NTRIPLES = "application/n-triples"
TSV_RESULTS = "text/tab-separated-values"
XSD_STRING = "^^<http://www.w3.org/2001/XMLSchema#string>"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- servers --------------------------------------------------------------

class Server:
    """A server process we started; `cmd` is kept for the report."""
    name = ""
    path = "/sparql"
    extra: dict = {}

    def __init__(self, args):
        self.args, self.port, self.proc, self.cmd = args, free_port(), None, None

    def start(self, cmd: list[str], log: Path, env: dict | None = None) -> None:
        self.cmd = cmd
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL, env=env)
        try:
            wait_http(self.port, self.proc)
        except BaseException:  # not started: __exit__ will not run
            self.__exit__()
            raise

    def __exit__(self, *exc):
        if self.proc:
            stop(self.proc)
            self.log.close()


class TernServer(Server):
    name = "tern"

    def __enter__(self):
        a = self.args
        self.start([str(a.tern), "serve", "--index", str(a.work / f"tern-{a.dataset}"), "--bind", "127.0.0.1",
                    "--port", str(self.port), "--timeout", str(int(a.timeout)), *getattr(a, "tern_args", [])],
                   a.work / "tern-serve.log")
        return self


class OxigraphServer(Server):
    name = "oxigraph"
    path = "/query"

    def __enter__(self):
        a = self.args
        self.start([str(a.oxigraph), "serve-read-only", "--location", str(a.work / f"oxigraph-{a.dataset}"),
                    "--bind", f"127.0.0.1:{self.port}", "--timeout-s", str(int(a.timeout))],
                   a.work / "oxigraph-serve.log")
        return self


class VirtuosoServer(Server):
    """fairness_bench.Virtuoso in a directory of its own (it loads the data
    into its dataset's graph on its first start and keeps it); MaxQueryExecutionTime = --timeout."""
    name = "virtuoso"

    def __enter__(self):
        a = self.args
        graph = graph_of(a.dataset)
        self.extra = {"default-graph-uri": graph}
        self.inner = Virtuoso(types.SimpleNamespace(nt=a.data_nt[a.dataset], timeout=int(a.timeout)),
                              directory=virtuoso_dir(a, a.dataset), graph=graph, sql_port=free_port(),
                              http_port=self.port, buffers=a.virtuoso_buffers)
        try:
            self.inner.__enter__()
        except BaseException:  # started but not loaded (or not listening): stop it, __exit__ will not run
            if getattr(self.inner, "proc", None) is not None:
                stop(self.inner.proc)
                self.inner.log.close()
            raise
        self.proc = self.inner.proc
        self.cmd = ["virtuoso-t", "+foreground", "+configfile", str(self.inner.dir / "virtuoso.ini")]
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.inner.__exit__(*exc)


SERVERS = {"tern": TernServer, "oxigraph": OxigraphServer, "virtuoso": VirtuosoServer}


def prepare(args, dataset: str) -> None:
    """Decompresses (or, for a generated dataset, generates) the dataset if needed and
    builds tern's index and Oxigraph's store from scratch (untimed); Virtuoso loads on
    its first start."""
    args.work.mkdir(parents=True, exist_ok=True)
    nt = args.data_nt[dataset]
    if not nt.exists() and dataset in GENERATED:
        triples, seed = GENERATED[dataset]
        print(f"generating {dataset} ({triples:,} triples, seed {seed}) to {nt}", file=sys.stderr)
        t = time.monotonic()
        n = biblio.generate(nt, triples, seed)
        print(f"  {n:,} triples in {time.monotonic() - t:.0f} s", file=sys.stderr)
    elif not nt.exists():
        print(f"decompressing {dataset} to {nt}", file=sys.stderr)
        nt.parent.mkdir(parents=True, exist_ok=True)
        decompress(args.shared / DATASET_FILES[dataset], nt)
    if "tern" in args.engines and not (args.keep_stores and (args.work / f"tern-{dataset}").exists()):
        subprocess.run([str(args.tern), "load", "--index", str(args.work / f"tern-{dataset}"), "--force", str(nt)],
                       check=True, capture_output=True)
    if "oxigraph" in args.engines and not (args.keep_stores and (args.work / f"oxigraph-{dataset}").exists()):
        store = args.work / f"oxigraph-{dataset}"
        shutil.rmtree(store, ignore_errors=True)
        subprocess.run([str(args.oxigraph), "load", "--location", str(store), "--file", str(nt)], check=True,
                       capture_output=True)
        subprocess.run([str(args.oxigraph), "optimize", "--location", str(store)], check=True, capture_output=True)
    print(f"{dataset}: indexes built", file=sys.stderr)


# --- the client -----------------------------------------------------------

ESCAPE = re.compile(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf"\'\\])')
SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def unescape(s: str) -> str:
    return ESCAPE.sub(lambda m: SIMPLE.get(m.group(1)) or chr(int(m.group(1)[1:], 16)), s)


def literal(value: str, lang: str | None = None, datatype: str | None = None) -> str:
    """A literal in canonical N-Triples (RDF 1.1: xsd:string is a simple literal)."""
    text = '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    if lang:
        return f"{text}@{lang}"
    if datatype and datatype != "http://www.w3.org/2001/XMLSchema#string":
        return f"{text}^^<{datatype}>"
    return text


def json_term(t: dict | None) -> str:
    """A SPARQL JSON term as N-Triples ('' if unbound). Virtuoso writes the
    SPARQL 1.0 'typed-literal' type for literals with a datatype."""
    if t is None:
        return ""
    kind = t["type"]
    if kind == "uri":
        return f"<{t['value']}>"
    if kind == "bnode":
        return f"_:{t['value']}"
    return literal(t["value"], t.get("xml:lang"), t.get("datatype"))


def canonical_nt_term(term: str) -> str:
    """One term of an N-Triples line in the same canonical form as json_term."""
    if not term.startswith('"'):
        return term
    end = term.rindex('"')
    value, rest = unescape(term[1:end]), term[end + 1:]
    return literal(value, rest[1:] if rest.startswith("@") else None, rest[3:-1] if rest.startswith("^^") else None)


def parse_ntriples(body: bytes) -> list[list[str]]:
    """Each line's three terms (raw); raises ValueError on a cut or malformed body."""
    text = body.decode("utf-8")
    if text and not text.endswith("\n"):
        raise ValueError("N-Triples body does not end with a newline (cut off?)")
    triples = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        terms = TERM.findall(line)
        if len(terms) != 3 or not line.endswith("."):
            raise ValueError(f"bad N-Triples line: {line[:200]}")
        triples.append(terms)
    return triples


def query_form(text: str) -> str:
    """The first keyword after the prologue, upper case (SELECT, ASK, CONSTRUCT, DESCRIBE)."""
    body = re.sub(r"#[^\n]*", "", re.sub(r"<[^<>\s]*>", "<>", text))  # IRIs out first: they may hold '#'
    body = re.sub(r"(?is)^\s*(?:(?:PREFIX\s+\S*:\s*<>|BASE\s*<>)\s*)*", "", body)
    m = re.match(r"[A-Za-z]+", body)
    return m.group(0).upper() if m else ""


def is_graph_query(text: str) -> bool:
    """CONSTRUCT or DESCRIBE (BSBM explore Q12 and Q9)."""
    return query_form(text) in ("CONSTRUCT", "DESCRIBE")


class Client:
    """One persistent HTTP connection to one server. With count_only, SELECT and
    graph answers come as TSV and N-Triples and only their lines are counted as
    they arrive (no `parsed`): memory stays bounded however large the answer
    (a 2.4 GB JSON answer of 7.4 M rows took the parsing client to 23 GB)."""

    def __init__(self, server: Server, timeout: float, grace: float, count_only: bool = False):
        self.server, self.timeout, self.count_only = server, timeout, count_only
        self.socket_timeout = timeout + grace
        self.conn, self.reconnects = None, 0

    def connection(self) -> http.client.HTTPConnection:
        if self.conn is not None and self.conn.sock is not None and select.select([self.conn.sock], [], [], 0)[0]:
            self.drop()  # readable while idle: the server closed it (e.g. an idle timeout)
        if self.conn is None or self.conn.sock is None:
            if self.conn is not None:
                self.reconnects += 1
            self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=self.socket_timeout)
            self.conn.connect()
            # http.client sends the headers and the body of a POST in two writes: without
            # TCP_NODELAY the body would wait for the server's delayed ACK of the headers
            # (~40 ms). curl and urllib3 set it too.
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.conn

    def drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn.sock = None

    def execute(self, text: str, graph: bool) -> dict:
        """One run: {ms, status, error, timeout, kind, variables, rows, parsed}."""
        conn = self.connection()  # outside the clock
        body = urllib.parse.urlencode({"query": text, **self.server.extra}).encode()
        counted = self.count_only and query_form(text) != "ASK"
        accept = NTRIPLES if graph else TSV_RESULTS if counted else JSON_RESULTS
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept}
        out = {"status": None, "error": None, "timeout": False, "kind": None, "variables": None, "rows": None,
               "parsed": None}
        t0 = time.perf_counter()
        resp = None
        try:
            try:
                conn.request("POST", self.server.path, body=body, headers=headers)
                resp = conn.getresponse()
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                # Closed by the server between the check above and the request: once more
                # on a new connection, timed from there.
                self.drop()
                conn = self.connection()
                t0 = time.perf_counter()
                conn.request("POST", self.server.path, body=body, headers=headers)
                resp = conn.getresponse()
            out["status"] = resp.status
            lines = parsed = None
            if counted and resp.status == 200:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: resp.read(1 << 20), b""))
            else:
                data = resp.read()
                if resp.status == 200:
                    parsed = parse_ntriples(data) if graph else json.loads(data)
            elapsed = time.perf_counter() - t0
            if resp.status != 200:
                out["error"] = f"HTTP {resp.status}: {data[:300].decode('utf-8', 'replace').strip()}"
            elif resp.getheader("X-SQL-State"):  # Virtuoso's partial "anytime" answer
                out["error"] = f"partial result: {resp.getheader('X-SQL-State')} {resp.getheader('X-SQL-Message')}"
            elif lines is not None:
                # One line per row or triple, and TSV's header line.
                out.update(kind="graph" if graph else "select", rows=lines - (not graph))
            elif graph:
                out.update(kind="graph", rows=len(parsed), parsed=parsed)
            elif "boolean" in parsed:
                out.update(kind="ask", rows=1, parsed=parsed)
            else:
                out.update(kind="select", variables=parsed["head"]["vars"], rows=len(parsed["results"]["bindings"]),
                           parsed=parsed)
            if resp.will_close:
                self.drop()
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError) as e:
            elapsed = time.perf_counter() - t0
            what = "no complete answer" if isinstance(e, (socket.timeout, TimeoutError)) else "bad answer"
            out["error"] = f"{what}: {type(e).__name__}: {str(e)[:300]}"
            self.drop()
        out["ms"] = elapsed * 1e3
        if out["error"] and elapsed >= 0.95 * self.timeout:
            out["timeout"] = True
        elif out["error"] is None and elapsed > self.timeout:
            out["timeout"] = True
            out["error"] = f"answered in {elapsed:.1f} s, over the {self.timeout:g} s timeout"
        return out


def result_lines(run: dict, columns: list[str] | None) -> list[str]:
    """The rows of a run as tab-separated canonical N-Triples terms, SELECT
    columns in the given order."""
    if run["kind"] == "graph":
        return ["\t".join(canonical_nt_term(t) for t in triple) for triple in run["parsed"]]
    if run["kind"] == "ask":
        return ["true" if run["parsed"]["boolean"] else "false"]
    return ["\t".join(json_term(b.get(v)) for v in columns) for b in run["parsed"]["results"]["bindings"]]


# --- comparing results ----------------------------------------------------

def as_double(line: str) -> str:
    """Every numeric literal as an xsd:double of its value, whatever its datatype."""
    def canon(m):
        if m.group(2) not in NUMERIC:
            return m.group(0)
        try:
            return f'"{float(Decimal(m.group(1)))!r}"^^<{XSD}double>'
        except (InvalidOperation, ValueError):
            return m.group(0)
    return LITERAL.sub(canon, line)


def compare(query, a: str, ra: dict, b: str, rb: dict) -> dict | None:
    """None if engines a and b agree on the query, else what differs (the
    classification of query_bench.compare, for any pair of engines)."""
    diff = {"query": query.name, "engines": [a, b], "rows": {a: ra["rows"], b: rb["rows"]}}
    if ra["rows"] is None or rb["rows"] is None:
        failed = [e for e, r in ((a, ra), (b, rb)) if r["rows"] is None]
        diff["errors"] = {e: r["error"] for e, r in ((a, ra), (b, rb)) if r["error"]}
        if len(failed) == 2:
            return {**diff, "kind": "both failed"}
        rec = ra if failed[0] == a else rb
        return {**diff, "kind": f"{failed[0]} {'timeout' if rec['timeout'] else 'error'}"}
    if ra["kind"] != rb["kind"]:
        return {**diff, "kind": f"result kinds differ: {a} {ra['kind']}, {b} {rb['kind']}"}
    columns = None
    if ra["kind"] == "select":
        if sorted(ra["variables"]) != sorted(rb["variables"]):
            return {**diff, "kind": "different variables", "variables": {a: ra["variables"], b: rb["variables"]}}
        columns = sorted(ra["variables"])
    ca = collections.Counter(map(mask_bnodes, ra["lines"]))
    cb = collections.Counter(map(mask_bnodes, rb["lines"]))
    notes = []
    for e, r in ((a, ra), (b, rb)):
        if r.get("rows_per_run"):
            notes.append(f"{e} rows vary between runs: {r['rows_per_run']}")
    if ca == cb:
        return {**diff, "kind": "same results, but rows varied between runs", "notes": notes} if notes else None
    if ra["rows"] != rb["rows"]:
        diff["kind"] = "row count"
    elif getattr(query, "any_rows", False):
        return None  # a LIMIT without ORDER BY: any rows of the right count are right
    elif same(ca, cb, by_value):
        diff["kind"] = "numbers: same values, other lexical forms"
    elif close(ca, cb):
        diff["kind"] = "numbers: floats differ in the last digits (rounding)"
    elif close(collections.Counter(map(as_double, ca.elements())), collections.Counter(map(as_double, cb.elements()))):
        diff["kind"] = "numbers: other numeric datatypes, values within 1e-5"
    else:
        diff["kind"] = "rows"
    text = query.file.read_text()
    if re.search(r"^\s*DESCRIBE\b", text, re.I | re.M):
        notes.append("DESCRIBE: which triples describe a resource is up to the engine (SPARQL 1.1, 16.4)")
    if re.search(r"order\s+by", text, re.I) and re.search(r"\b(limit|offset)\b", text, re.I):
        notes.append("ORDER BY with LIMIT/OFFSET: ties may select other rows")
    if any("_:" in l for l in ra["lines"] + rb["lines"]):
        notes.append("blank-node labels masked")
    if notes:
        diff["notes"] = notes
    if columns:
        diff["columns"] = columns
    diff["only"] = {a: sorted((ca - cb).elements())[:SAMPLES], b: sorted((cb - ca).elements())[:SAMPLES]}
    diff["only_count"] = {a: sum((ca - cb).values()), b: sum((cb - ca).values())}
    return diff


def odd_one_out(diffs: dict[tuple[str, str], dict | None], engines: list[str]) -> str | None:
    """With three engines: the one that disagrees with the two others, which
    agree (counting differences of numbers only, "numbers: ...", as agreement)."""
    if len(engines) != 3:
        return None
    differ = {pair: d is not None and not d["kind"].startswith("numbers") for pair, d in diffs.items()}
    for e in engines:
        others = tuple(x for x in engines if x != e)
        if not differ.get(others) and all(differ[p] for p in differ if e in p):
            return e
    return None


# --- running a suite ------------------------------------------------------

def new_record() -> dict:
    return {"runs_ms": [], "median_ms": None, "min_ms": None, "rows": None, "rows_per_run": None, "error": None,
            "timeout": False, "status": None, "kind": None, "variables": None, "lines": None}


def run_suite(suite, args, server_classes: dict | None = None) -> dict:
    """Runs the suite on args.engines, each started from its class in
    server_classes (default: SERVERS)."""
    engines = args.engines
    server_classes = server_classes or SERVERS
    with contextlib.ExitStack() as stack:
        servers = {}
        for e in engines:
            t = time.monotonic()
            servers[e] = stack.enter_context(server_classes[e](args))
            print(f"  {e}: started (pid {servers[e].proc.pid}, port {servers[e].port}) in {time.monotonic() - t:.1f} s",
                  file=sys.stderr)
        grace = max(10.0, args.timeout / 2)
        clients = {e: Client(servers[e], args.timeout, grace) for e in engines}
        load_before = load_average()
        t_start = time.monotonic()
        warmup_failures = []
        for f in suite.warmup:
            text = f.read_text()
            for e in engines:
                r = clients[e].execute(text, is_graph_query(text))
                if r["error"]:
                    warmup_failures.append({"query": f"{f.parent.name}/{f.name}", "engine": e, "error": r["error"],
                                            "ms": round(r["ms"], 3)})
        print(f"  warm-up ({len(suite.warmup)} queries) done in {time.monotonic() - t_start:.0f} s", file=sys.stderr)
        for w in warmup_failures:
            print(f"    warm-up {w['query']} failed on {w['engine']} after {w['ms']:.0f} ms: {w['error'][:200]}",
                  file=sys.stderr)
        records, differences, done_mix = [], [], None
        for i, q in enumerate(suite.queries):
            if q.mix != done_mix:
                done_mix = q.mix
                print(f"  {q.mix} ({i}/{len(suite.queries)} queries, {time.monotonic() - t_start:.0f} s)",
                      file=sys.stderr)
            text = q.file.read_text()
            graph = is_graph_query(text)
            recs = {e: new_record() for e in engines}
            rows_seen = {e: [] for e in engines}
            for run in range(args.runs):
                # Each run starts one engine later, so that no engine always
                # follows the same one (a JVM's collector and compiler threads
                # run on after its answer, on the cores the next engine needs).
                shift = run % len(engines)
                for e in engines[shift:] + engines[:shift]:
                    rec = recs[e]
                    if rec["error"]:
                        continue  # failed before: later runs are skipped
                    r = clients[e].execute(text, graph)
                    rec["status"] = r["status"]
                    if r["error"]:
                        rec["error"], rec["timeout"] = r["error"], r["timeout"]
                        rec["failed_run_ms"] = round(r["ms"], 3)
                        continue
                    rec["runs_ms"].append(r["ms"])
                    rows_seen[e].append(r["rows"])
                    if rec["kind"] is None:
                        rec["kind"], rec["variables"] = r["kind"], r["variables"]
                        cols = sorted(r["variables"]) if r["kind"] == "select" else None
                        rec["lines"] = result_lines(r, cols)
            for e in engines:
                rec = recs[e]
                if rec["runs_ms"]:
                    rec["median_ms"] = statistics.median(rec["runs_ms"])
                    rec["min_ms"] = min(rec["runs_ms"])
                    rec["rows"] = rows_seen[e][0]
                    if any(n != rows_seen[e][0] for n in rows_seen[e]):
                        rec["rows_per_run"] = rows_seen[e]
                if rec["error"] and rec["runs_ms"]:
                    # Answered at first, failed later: the query counts as failed.
                    rec["error"] = f"{len(rec['runs_ms'])} run(s) answered, then: {rec['error']}"
                    rec["median_ms"] = None
            pair_diffs = {}
            for a_i, a in enumerate(engines):
                for b in engines[a_i + 1:]:
                    pair_diffs[(a, b)] = compare(q, a, recs[a], b, recs[b])
            found = [d for d in pair_diffs.values() if d]
            if found:
                differences.append({"query": q.name, "group": q.group, "odd_one_out": odd_one_out(pair_diffs, engines),
                                    "pairs": found})
            records.append({"query": q.name, "group": q.group, "mix": q.mix,
                            **{e: slim(recs[e]) for e in engines}})
        elapsed = time.monotonic() - t_start
        load_after = load_average()
        info = {e: {"cmd": servers[e].cmd, "port": servers[e].port, "reconnects": clients[e].reconnects}
                for e in engines}
    print(f"  {suite.name}: {len(suite.queries)} queries x {args.runs} runs x {len(engines)} engines in {elapsed:.0f} s",
          file=sys.stderr)
    return {"records": records, "differences": differences, "servers": info, "elapsed_s": round(elapsed, 1),
            "load_average_before": load_before, "load_average_after": load_after,
            "warmup_failures": warmup_failures}


def slim(rec: dict) -> dict:
    """A record for the report: times rounded to the microsecond, empty fields left out."""
    out = {}
    for k, v in rec.items():
        if k in ("lines", "variables") or v is None or v is False or v == []:
            continue
        if k in ("median_ms", "min_ms"):
            v = round(v, 3)
        elif k == "runs_ms":
            v = [round(x, 3) for x in v]
        out[k] = v
    return out


# --- summaries ------------------------------------------------------------

def summarize(records: list[dict], engines: list[str]) -> dict:
    med = lambda r, e: r[e].get("median_ms")
    ok = [r for r in records if all(med(r, e) is not None for e in engines)]
    out = {"queries": len(records), "answered_by_all": len(ok),
           "failed": {e: sum(med(r, e) is None for r in records) for e in engines},
           "timeouts": {e: sum(bool(r[e].get("timeout")) for r in records) for e in engines},
           "total_s": {e: sum(med(r, e) for r in ok) / 1e3 for e in engines}}
    # QMpH counts query mixes: BSBM only (WatDiv's queries have no mix).
    mixes = sorted({r["mix"] for r in records if r["mix"]})
    out["mixes"] = len(mixes)
    out["qmph"] = {e: 3600 * len(mixes) / out["total_s"][e] if mixes and out["total_s"][e] else None
                   for e in engines}
    out["qmph_over"] = f"{len(ok)} of {len(records)} queries (those all engines answered)"
    if "tern" in engines:
        out["speed_vs"] = {p: geomean([med(r, p) / med(r, "tern") for r in records
                                       if med(r, p) is not None and med(r, "tern") is not None])
                           for p in engines if p != "tern"}
    groups = collections.defaultdict(list)
    for r in records:
        groups[r["group"]].append(r)
    out["groups"] = {}
    for g, rs in sorted(groups.items()):
        row = {"queries": len(rs)}
        for e in engines:
            done = [med(r, e) for r in rs if med(r, e) is not None]
            row[e] = {"median_ms": round(statistics.median(done), 3) if done else None, "failed": len(rs) - len(done)}
        if "tern" in engines:
            row["speed_vs"] = {p: geomean([med(r, p) / med(r, "tern") for r in rs
                                           if med(r, p) is not None and med(r, "tern") is not None])
                               for p in engines if p != "tern"}
        out["groups"][g] = row
    return out


def ratio_to_best_peer(records: list[dict], engines: list[str]) -> dict | None:
    """Per query, tern's median over the fastest peer's (above 1: tern is slower), the
    worst of those and their geometric mean; the queries tern failed while a peer
    answered, and those every peer failed while tern answered."""
    peers = [e for e in engines if e != "tern"]
    if "tern" not in engines or not peers:
        return None
    med = lambda r, e: r[e].get("median_ms")
    per_query, tern_failed, peers_failed = [], [], []
    for r in records:
        answered = {p: med(r, p) for p in peers if med(r, p) is not None}
        best = min(answered, key=answered.get) if answered else None
        t = med(r, "tern")
        row = {"query": r["query"], "tern_ms": t, "best_peer": best, "best_peer_ms": answered.get(best),
               "ratio": round(t / answered[best], 3) if t is not None and best and answered[best] > 0 else None}
        per_query.append(row)
        if t is None and answered:
            tern_failed.append({"query": r["query"], "timeout": bool(r["tern"].get("timeout")),
                                "error": (r["tern"].get("error") or "")[:300], "peers_ms": answered})
        elif t is not None and not answered:
            peers_failed.append(r["query"])
    rated = [q for q in per_query if q["ratio"] is not None]
    worst = max(rated, key=lambda q: q["ratio"]) if rated else None
    return {"per_query": per_query, "rated": len(rated),
            "geomean": round(geomean([q["ratio"] for q in rated]), 3) if rated else None,
            "worst": {"query": worst["query"], "ratio": worst["ratio"]} if worst else None,
            "slower_than_2x": [q["query"] for q in rated if q["ratio"] > 2],
            "tern_failed_peer_answered": tern_failed, "peers_failed_tern_answered": peers_failed}


def ratio_table(name: str, res: dict, engines: list[str]) -> list[str]:
    """The per-query table of a suite with a ratio_to_best_peer summary."""
    ratio = res["summary"]["ratio_to_best_peer"]
    by_query = {r["query"]: r for r in res["records"]}
    L = [LABEL[e] for e in engines]

    def cell(rec):
        if rec.get("median_ms") is not None:
            return fmt_ms(rec["median_ms"])
        return "timeout" if rec.get("timeout") else "failed" if rec.get("error") else "—"

    lines = ["", f"**{name}**: median latency (ms) per query; ratio = tern / the fastest peer (above 1: tern is "
             "slower)", "",
             "| query | rows | " + " | ".join(L) + " | fastest peer | tern / fastest peer |",
             "|---|---:|" + "---:|" * len(engines) + "---|---:|"]
    for q in ratio["per_query"]:
        r = by_query[q["query"]]
        rows = next((r[e]["rows"] for e in engines if r[e].get("rows") is not None), None)
        lines.append(f"| {q['query'].removesuffix('.rq')} | {'—' if rows is None else f'{rows:,}'} | "
                     + " | ".join(cell(r[e]) for e in engines) + f" | {LABEL.get(q['best_peer'], '—')} | "
                     + ("—" if q["ratio"] is None else f"{q['ratio']:.2f}") + " |")
    worst = ratio["worst"]
    lines += ["", f"Over the {ratio['rated']} queries tern and a peer answered: geometric mean of tern / fastest peer "
              + ("—" if ratio["geomean"] is None else f"{ratio['geomean']:.2f}") + ", worst "
              + (f"{worst['ratio']:.2f} ({worst['query']})" if worst else "—") + "; more than 2x slower: "
              + (", ".join(ratio["slower_than_2x"]) or "none") + "."]
    failed = ratio["tern_failed_peer_answered"]
    lines.append("tern failed or timed out where a peer answered: " + ("none." if not failed else "; ".join(
        f"{f['query']} ({'timeout' if f['timeout'] else f['error'][:120]}; "
        + ", ".join(f"{LABEL[p]} {fmt_ms(ms)} ms" for p, ms in f["peers_ms"].items()) + ")" for f in failed)))
    if ratio["peers_failed_tern_answered"]:
        lines.append("Every peer failed where tern answered: " + ", ".join(ratio["peers_failed_tern_answered"]) + ".")
    return lines


def fmt_speed(x):
    return "—" if x is None else f"{x:.2f}x"


def difference_summary(res: dict, engines: list[str]) -> str:
    diffs = res["differences"]
    if not diffs:
        return "0"
    parts = []
    for p in (p for p in engines if p != "tern"):
        kinds = collections.Counter(d["kind"] for q in diffs for d in q["pairs"] if d["engines"] == ["tern", p])
        if kinds:
            parts.append(f"vs {LABEL[p]} {sum(kinds.values())} (" + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ")")
    return f"{len(diffs)}: " + "; ".join(parts) if parts else f"{len(diffs)} (peers only)"


def markdown(results: dict, engines: list[str]) -> str:
    peers = [e for e in engines if e != "tern"]
    L = [LABEL[e] for e in engines]
    lines = ["| suite | queries | " + " | ".join(f"{l} failed" for l in L) + " | " + " | ".join(f"{l} QMpH" for l in L)
             + " | " + " | ".join(f"{l} Σ medians (s)" for l in L) + " | "
             + " | ".join(f"speed vs {LABEL[p]} (geomean)" for p in peers) + " | result differences |",
             "|---|---:|" + "---:|" * (3 * len(engines) + len(peers)) + "---|"]
    for name, res in results.items():
        s = res["summary"]
        lines.append(f"| {name} | {s['queries']:,} | " + " | ".join(str(s["failed"][e]) for e in engines) + " | "
                     + " | ".join(f"{s['qmph'][e]:,.0f}" if s["qmph"].get(e) else "—" for e in engines) + " | "
                     + " | ".join(f"{s['total_s'][e]:,.1f}" for e in engines) + " | "
                     + " | ".join(fmt_speed(s.get("speed_vs", {}).get(p)) for p in peers)
                     + f" | {difference_summary(res, engines)} |")
    for name, res in results.items():
        if res["summary"].get("ratio_to_best_peer"):
            lines += ratio_table(name, res, engines)
            continue
        lines += ["", f"**{name}**: median latency (ms) per query type (median over its instances of each "
                  "instance's median run); speed = geomean of peer / tern", "",
                  "| query | n | " + " | ".join(L) + " | " + " | ".join(f"vs {LABEL[p]}" for p in peers) + " |",
                  "|---|---:|" + "---:|" * (len(engines) + len(peers))]
        for g, row in res["summary"]["groups"].items():
            cells = median_cells(row, engines)
            lines.append(f"| {g.upper()} | {row['queries']} | " + " | ".join(cells) + " | "
                         + " | ".join(fmt_speed(row.get("speed_vs", {}).get(p)) for p in peers) + " |")
    return "\n".join(lines)


def report_differences(results: dict) -> str:
    out = []
    for name, res in results.items():
        if not res["differences"]:
            continue
        out.append(f"\n## {name}: {len(res['differences'])} queries where engines differ")
        for q in res["differences"]:
            odd = f" (odd one out: {q['odd_one_out']})" if q["odd_one_out"] else ""
            out.append(f"- {q['query']}{odd}")
            for d in q["pairs"]:
                a, b = d["engines"]
                out.append(f"    {a} vs {b}: [{d['kind']}] rows {d['rows'][a]} / {d['rows'][b]}")
                for e, err in d.get("errors", {}).items():
                    out.append(f"      {e} error: {err[:300]}")
                for note in d.get("notes", []):
                    out.append(f"      note: {note}")
                for e in (a, b):
                    if d.get("only", {}).get(e):
                        out.append(f"      only {e} ({d['only_count'][e]} rows), e.g.:")
                        out += [f"        {r[:300]}" for r in d["only"][e][:2]]
    return "\n".join(out)


def check_programs(ap: argparse.ArgumentParser, args) -> None:
    """A usage error if the program of one of args.engines (tern, tern-..., oxigraph,
    virtuoso) is missing."""
    if any(e.startswith("tern") for e in args.engines) and not os.access(args.tern, os.X_OK):
        ap.error(f"no tern binary at {args.tern} (build it with `cargo build --release -p tern-cli`, or pass --tern)")
    if "oxigraph" in args.engines and not os.access(args.oxigraph, os.X_OK):
        ap.error(f"no {args.oxigraph}: run bench/setup_peers.sh first")
    if "virtuoso" in args.engines and not shutil.which("virtuoso-t"):
        ap.error("no virtuoso-t: apt-get install -y virtuoso-opensource")


def report_header(benchmark: str, started: datetime.datetime, args) -> dict:
    """The fields a report of a run of this harness starts with (args: runs,
    timeout, tern_commit)."""
    return {
        "benchmark": benchmark,
        "started": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "runs": args.runs,
        "timeout_s": args.timeout,
        "git_commit": git_commit(),
        "tern_commit": args.tern_commit,
        "client": "python http.client, one persistent connection per engine (TCP_NODELAY), form POST, "
                  f"Accept {JSON_RESULTS} (CONSTRUCT/DESCRIBE: {NTRIPLES}); latency = request sent to body read and parsed",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-commit", help="the commit the tern binary was built from, for the report")
    ap.add_argument("--oxigraph", type=Path, default=DEFAULT_VENV / "bin/oxigraph",
                    help="oxigraph CLI, from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of: tern,oxigraph,virtuoso")
    ap.add_argument("--virtuoso-buffers", type=int, default=340000,
                    help="Virtuoso's NumberOfBuffers, 8 KiB pages (default: %(default)s, 2.6 GiB; its ini's "
                         "guidance for 16 GB of memory, for data sets of 100M triples, is 1360000)")
    ap.add_argument("--suites", default=",".join(DEFAULT_SUITES),
                    help="comma-separated subset of: " + ",".join(SUITES) + " (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per query and engine (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=30, help="per query, in seconds, all engines (default: %(default)s)")
    ap.add_argument("--explore-mixes", type=int, default=DEFAULT_MIXES["bsbm-explore"],
                    help="measure the explore mixes 0001..N (default: %(default)s)")
    ap.add_argument("--bi-mixes", type=int, default=DEFAULT_MIXES["bsbm-bi"],
                    help="measure the BI mixes 0001..N (default: %(default)s)")
    ap.add_argument("--biblio-triples", type=int, default=1_000_000,
                    help="size of biblio-robust's generated dataset, biblio-N (default: %(default)s)")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared/ directory (default: %(default)s)")
    ap.add_argument("--nt", type=Path, default=DEFAULT_DATA / "bsbm-1m.nt",
                    help="BSBM 1M N-Triples, decompressed here if missing (default: %(default)s)")
    ap.add_argument("--bsbm", type=Path, metavar="DIR",
                    help="the BSBM suites on a data set ../shared/tools/bsbm/generate.sh wrote to DIR "
                    "(dataset.nt.zst, queries-explore/, queries-bi/), named after DIR (bsbm-10m); "
                    "default: ../shared/datasets/bsbm-1m")
    ap.add_argument("--keep-stores", action="store_true",
                    help="use tern's index and Oxigraph's store in --work when they exist instead of building them "
                    "again (for data sets that take long to load: load them once, timed, by hand)")
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA / "http-bench",
                    help="indexes, the private Virtuoso and the server logs (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/http-query-<date>.json, "
                    "http-query-<date>-biblio.json with biblio-robust)")
    ap.add_argument("--report", type=Path, metavar="RESULTS",
                    help="do not run: print the tables and differences of an earlier result file")
    args = ap.parse_args()

    if args.report:
        report = json.loads(args.report.read_text())
        engines = list(report["engines"])
        for res in report["suites"].values():  # with this version's rule
            for q in res["differences"]:
                pairs = {(a, b): None for i, a in enumerate(engines) for b in engines[i + 1:]}
                pairs.update({tuple(d["engines"]): d for d in q["pairs"]})
                q["odd_one_out"] = odd_one_out(pairs, engines)
        print(markdown(report["suites"], engines))
        diffs = report_differences(report["suites"])
        print(diffs if diffs else "\nNo result differences.")
        return
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if unknown := set(args.engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    args.engines = [e for e in ENGINES if e in args.engines]  # fixed order: tern first
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    if unknown := set(suites) - set(SUITES):
        ap.error(f"unknown suite(s): {', '.join(sorted(unknown))}")
    check_programs(ap, args)
    args.work = args.work.resolve()

    def interrupt(*_):
        raise KeyboardInterrupt

    # SIGTERM stops the servers like Ctrl-C does (the context managers' exits).
    signal.signal(signal.SIGTERM, interrupt)
    started = datetime.datetime.now()
    args.data_nt = {"bsbm-1m": args.nt, "watdiv-10": DEFAULT_DATA / "watdiv-10.nt"}
    biblio_name = biblio_dataset(args.biblio_triples)
    args.data_nt[biblio_name] = DEFAULT_DATA / f"{biblio_name}.nt"
    folder, bsbm = args.shared / "datasets/bsbm-1m", "bsbm-1m"
    if args.bsbm:
        folder = args.bsbm.resolve()
        bsbm = folder.name if folder.name.startswith("bsbm") else f"bsbm-{folder.name}"
        DATASET_FILES[bsbm] = str(folder / "dataset.nt.zst")
        args.data_nt[bsbm] = DEFAULT_DATA / f"{bsbm}.nt"

    def bsbm_on(name: str, queries: Path, mixes: int) -> Suite:
        return dataclasses.replace(bsbm_suite(name, queries, mixes), dataset=bsbm)

    all_suites = {"bsbm-explore": lambda: bsbm_on("bsbm-explore", folder / "queries-explore", args.explore_mixes),
                  "bsbm-bi": lambda: bsbm_on("bsbm-bi", folder / "queries-bi", args.bi_mixes),
                  "watdiv-basic": lambda: watdiv_suite(args.shared / "datasets/watdiv-10/queries-basic", args.work),
                  "biblio-robust": lambda: biblio_suite(BIBLIO_QUERIES, args.biblio_triples)}
    results, prepared = {}, set()
    for name in suites:
        suite = all_suites[name]()
        args.dataset = suite.dataset
        if suite.dataset not in prepared:
            prepare(args, suite.dataset)
            prepared.add(suite.dataset)
        print(f"{name}: {len(suite.queries)} queries, {len(suite.warmup)} warm-up", file=sys.stderr)
        res = run_suite(suite, args)
        res["summary"] = summarize(res["records"], args.engines)
        if name == "biblio-robust":
            res["summary"]["ratio_to_best_peer"] = ratio_to_best_peer(res["records"], args.engines)
        results[name] = res

    report = {
        **report_header("http-query", started, args),
        "engines": {
            "tern": {"binary": str(args.tern), "version": tool_version([str(args.tern), "--version"])},
            "oxigraph": {"binary": str(args.oxigraph), "version": tool_version([str(args.oxigraph), "--version"])},
            "virtuoso": {"version": tool_version(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"]),
                         "graphs": {ds: graph_of(ds) for ds in prepared}},
        },
        "command": " ".join(sys.argv),
        "suites": {name: {k: res[k] for k in ("summary", "servers", "elapsed_s", "load_average_before",
                                              "load_average_after", "warmup_failures", "differences", "records")}
                   for name, res in results.items()},
    }
    report["engines"] = {e: v for e, v in report["engines"].items() if e in args.engines}
    # A biblio-robust run gets a file of its own, so that it does not replace the day's BSBM/WatDiv results.
    tag = "-biblio" if "biblio-robust" in suites else ""
    out = args.out or BENCH / "results" / f"http-query-{started:%Y-%m-%d}{tag}.json"
    publish(report, out, markdown(results, args.engines), report_differences(results))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the servers were stopped)")
