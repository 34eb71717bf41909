#!/usr/bin/env python3
"""Export throughput of `tern serve` next to Oxigraph's server and Virtuoso 7,
same data, same client (`curl -o /dev/null`), interleaved in one run.

Queries: (a) `select`: SELECT ?s ?p ?o WHERE { ?s ?p ?o } as TSV, CSV and
JSON; (b) `construct`: a CONSTRUCT with a three-triple template over the same
pattern, as Turtle and N-Triples; (c) `spo`: CONSTRUCT { ?s ?p ?o } WHERE
{ ?s ?p ?o } (the whole graph) as N-Triples, Turtle and JSON-LD; (d)
`describe`: DESCRIBE of every bsbm:Product, as N-Triples and Turtle; (e)
the SELECT of (a) as an Arrow IPC stream and as Parquet (tern only: no peer
serves them; their MB/s are of the equivalent TSV payload). Each
uncompressed and with each content coding the server offers.
Cases are named QUERY-FORMAT-ENCODING (e.g. select-tsv-identity,
construct-turtle-gzip); --cases takes comma-separated names or shell patterns
(`select-*`, `*-gzip`; QUERY-FORMAT alone means every encoding). Each case runs
on every engine in turn (tern, oxigraph, virtuoso) before the next case starts.

Reported per engine and case: MB/s of uncompressed payload, rows/s, bytes on
the wire, and the server's peak RSS during the request (sampled every 20 ms
from /proc/PID/status) next to its idle RSS. At the end, a table with rows/s
relative to tern.

Engines (each started once per size, stopped by pid at the end, also on errors
and Ctrl-C/SIGTERM; data and indexes live in $TERN_BENCH_DATA, default
/tmp/tern-bench-data, built on the first run and reused afterwards):
  tern      tern serve --index export-tern-SIZE --timeout T (endpoint /sparql)
  oxigraph  oxigraph serve-read-only --location export-oxigraph-SIZE
            --timeout-s T (the `oxigraph` wheel's server; endpoint /query)
  fuseki    Apache Jena Fuseki (the newest jena-fuseki-server jar in ~/.m2,
            fetched with mvn when missing; Java 21+ from /usr/lib/jvm/temurin*),
            TDB2 store export-fuseki-SIZE loaded once with tdb2.tdbloader
            --loader=parallel (its `loaded` marker records the load time),
            served with -Xmx4G (--fuseki-heap); endpoint /ds/sparql
  virtuoso  Virtuoso Open Source 7.2 (Debian's virtuoso-opensource), a private
            instance as in ../shared/PEERS.md, started with
            fairness_bench.Virtuoso in export-virtuoso-SIZE/ (the database
            there is loaded once, on the first run, into the named graph
            http://tern.bench/export/bsbm-SIZE, and reused while that
            directory's `loaded` marker names the same N-Triples file; delete
            the directory to reload). Queried with GET and default-graph-uri
            (endpoint /sparql); RSS is that of its virtuoso-t process. Settings
            on top of the Debian ini: ResultSetMaxRows = 100000000 (the
            Debian default, 10000, cuts results silently; see below for
            the cut that this setting does not lift),
            MaxQueryExecutionTime = MaxQueryCostEstimationTime = T (no refusal
            on the optimizer's estimate below the timeout), NumberOfBuffers =
            680000 and MaxDirtyBuffers = 500000 (~5.5 GB, as in PEERS.md),
            EnabledGzipContent = 1 (Debian's default).

Content codings: before measuring, each engine gets a tiny query with each
requested Accept-Encoding; a coding it does not apply (no matching
Content-Encoding in the answer) is not measured for it, and the report lists
it under "compression" (Oxigraph compresses nothing; Virtuoso 7.2 applies gzip
only, and ignores deflate, br and zstd). Every measured answer's headers are
kept too: a Content-Encoding other than the one asked for, a non-200 status or
Virtuoso's X-SQL-State (a partial "anytime" answer) are flagged on its line.

Rows and payload: tern's come from its access log (rows=, payload_bytes=).
The other engines format the same rows in other bytes (Virtuoso's TSV quotes
IRIs like its CSV, JSON is spaced differently), so bytes are not compared:
after all measured cases of a size, a separate pass (not timed, so that it
cannot slow the measured fetches; skip it with --no-check-rows) fetches each
query/format once more per engine, uncompressed, plus each coding a peer
applies (gzip and deflate are decompressed by the client), and counts rows as
the body streams in: newlines minus the header for TSV/CSV, `"s":` keys for
JSON, and for the CONSTRUCT (whose Turtle groups triples) the lines of the
same query asked as N-Triples. tern's counted rows are checked against its
access log, and every other count against tern's: a difference (e.g. a
truncated result) is printed and listed under "row_differences" in the report.
Peers' rows/s use their counted rows; with --no-check-rows they use tern's
count (rows_source "tern" in the report). A count can be off only for a CSV
field with a raw newline (BSBM has none; tern's check against its log would
show it).

Virtuoso's limits, which the run reports instead of hiding (found on 7.2.5):
- Its SPARQL endpoint cuts every result at 2^20 = 1,048,576 rows whatever
  ResultSetMaxRows says, with HTTP 200 and only an X-SPARQL-MaxRows: 1048576
  header (openlink/virtuoso-opensource#700). BSBM 1M (991,957 triples) fits;
  on 10M its SELECT answers hold ~1/10 of the rows: the line is flagged "cut
  at 1048576 rows" and the row check lists the difference. Its MB/s and
  rows/s then describe that shorter export, not the full one.
- It builds a CONSTRUCT's whole result as one vector before writing it: the
  CONSTRUCT here (~2.8 M triples on 1M) fails with HTTP 500 "SR...: The
  result vector is too large" (openlink/virtuoso-opensource#119), on every
  size; the line is flagged HTTP 500 and no rate is given.
- It does not stream: SELECT answers are formatted in full before the first
  byte goes out (Content-Length; first_byte_s is close to seconds), so its
  peak RSS grows with the result; its idle RSS is mostly its buffer pool.
- It applies gzip only (deflate, br, zstd answered uncompressed: skipped).

Usage: bench/export_bench.py [--sizes 1m,10m] [--engines tern,oxigraph,virtuoso,fuseki]
       [--cases select-tsv-identity,...] [--encodings identity,gzip,...]
       [--no-check-rows] [--timeout 3600] [--out bench/results/export-DATE.json]
Needs: a release `tern` ($CARGO_TARGET_DIR/release/tern), curl, zstd (to
decompress ../shared/datasets/bsbm-SIZE/dataset.nt.zst when
$TERN_BENCH_DATA/bsbm-SIZE.nt is missing), for oxigraph `bash
bench/setup_peers.sh` (run here when missing), for virtuoso `apt-get install -y
virtuoso-opensource`. Stdlib only.
"""
import argparse
import fnmatch
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.parse
import zlib
from pathlib import Path

from benchlib import fetch_fuseki_jar, find_java, fuseki_command, tdb2_load
from fairness_bench import Virtuoso, set_ini, stop

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHARED = REPO.parent / "shared"
DATA = Path(os.environ.get("TERN_BENCH_DATA", "/tmp/tern-bench-data"))
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/tern-target"))
VENV = Path(os.environ.get("TERN_BENCH_VENV", Path.home() / ".cache/tern-bench-venv"))

ENGINES = ("tern", "oxigraph", "virtuoso", "fuseki")
ENCODINGS = ("identity", "gzip", "deflate", "br", "zstd")
SELECT = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
CONSTRUCT = (
    "PREFIX ex: <http://example.org/export/> "
    "CONSTRUCT { ?s ex:p ?p . ?s ex:o ?o . ?s ex:triple ?p } WHERE { ?s ?p ?o }"
)
# Every triple as it is (the whole graph, "give me all the data").
CONSTRUCT_SPO = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
# Every product's concise bounded description.
DESCRIBE = (
    "PREFIX bsbm: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/> "
    "DESCRIBE ?product WHERE { ?product a bsbm:Product }"
)
CASES = [
    ("select", SELECT, "tsv", "text/tab-separated-values"),
    ("select", SELECT, "csv", "text/csv"),
    ("select", SELECT, "json", "application/sparql-results+json"),
    ("construct", CONSTRUCT, "turtle", "text/turtle"),
    ("construct", CONSTRUCT, "ntriples", "application/n-triples"),
    ("spo", CONSTRUCT_SPO, "ntriples", "application/n-triples"),
    ("spo", CONSTRUCT_SPO, "turtle", "text/turtle"),
    ("spo", CONSTRUCT_SPO, "jsonld", "application/ld+json"),
    ("describe", DESCRIBE, "ntriples", "application/n-triples"),
    ("describe", DESCRIBE, "turtle", "text/turtle"),
    ("select", SELECT, "arrow", "application/vnd.apache.arrow.stream"),
    ("select", SELECT, "parquet", "application/vnd.apache.parquet"),
]
# Columnar formats: only tern serves them; their rate is of the equivalent TSV
# payload (the measure), read from the same run's TSV case or, when
# that was not measured, from one unmeasured TSV fetch.
COLUMNAR = ("arrow", "parquet")
# The row check asks for graph results as N-Triples: one triple per line.
CHECK_FORMAT = {
    "turtle": ("ntriples", "application/n-triples"),
    "jsonld": ("ntriples", "application/n-triples"),
}
PROBE = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 1000"
VIRTUOSO_MAX_ROWS = 100000000


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


def last_headers(path):
    """The last header block curl -D wrote (after any 1xx), lower-cased names."""
    blocks = [b for b in Path(path).read_text(errors="replace").replace("\r", "").split("\n\n") if b.strip()]
    headers = {}
    for line in (blocks[-1].splitlines()[1:] if blocks else []):
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return headers


def curl(server, query, accept, encoding, timeout):
    """One measured fetch, body to /dev/null; headers to a temporary file."""
    with tempfile.NamedTemporaryFile(prefix="export-bench-", suffix=".headers") as hdr:
        cmd = ["curl", "-sS", "-o", "/dev/null", "-D", hdr.name, "--max-time", str(timeout + 60),
               "-G", "--data-urlencode", f"query={query}"]
        for k, v in server.params.items():
            cmd += ["--data-urlencode", f"{k}={v}"]
        cmd += ["-H", f"Accept: {accept}", "-w", "%{http_code} %{size_download} %{time_total} %{time_starttransfer}"]
        if encoding != "identity":
            cmd += ["-H", f"Accept-Encoding: {encoding}"]
        r = subprocess.run(cmd + [server.url], capture_output=True, text=True)
        out = r.stdout.split()
        headers = last_headers(hdr.name)
    flags = []
    if r.returncode != 0:
        flags.append(f"curl exit {r.returncode}: {r.stderr.strip()[:200]}")
    served = headers.get("content-encoding", "identity")
    if served != encoding:
        flags.append(f"served {served}")
    if headers.get("x-sql-state"):
        flags.append(f"partial answer: {headers['x-sql-state']} {headers.get('x-sql-message', '')}".strip())
    if headers.get("x-sparql-maxrows"):  # Virtuoso: the result was cut at this many rows
        flags.append(f"cut at {headers['x-sparql-maxrows']} rows (X-SPARQL-MaxRows)")
    return {"status": int(out[0]), "wire": int(out[1]), "secs": float(out[2]), "ttfb": float(out[3]),
            "content_encoding": served, "flags": flags}


# --- row counting (the unmeasured check pass) --------------------------------

class Counter:
    """Counts rows in a body fed in chunks: occurrences of `pattern` (chunks
    overlap by len(pattern) - 1 bytes so that none is missed or counted twice),
    minus `header` lines, plus a last line without its newline when counting
    newlines."""

    def __init__(self, pattern, header=0):
        self.pattern, self.header, self.n, self.tail, self.bytes, self.last = pattern, header, 0, b"", 0, b""

    def feed(self, chunk):
        if not chunk:
            return
        self.bytes += len(chunk)
        data = self.tail + chunk
        self.n += data.count(self.pattern)
        keep = len(self.pattern) - 1
        self.tail = data[-keep:] if keep else b""
        self.last = chunk[-1:]

    def rows(self):
        n = self.n
        if self.pattern == b"\n" and self.bytes and self.last != b"\n":
            n += 1
        return max(n - self.header, 0)


def counter_for(fmt):
    if fmt in ("tsv", "csv"):
        return Counter(b"\n", header=1)
    if fmt == "json":
        # The first variable's key opens every binding; inside JSON strings a '"'
        # is always escaped, so '"s":' cannot come from a value.
        return Counter(b'"s":')
    if fmt == "ntriples":
        return Counter(b".\n")  # raw newlines only end lines in N-Triples
    raise ValueError(fmt)


def count_rows(server, query, fmt, accept, encoding, timeout):
    """Fetches once with http.client (not timed) and counts the rows of the
    decompressed body as it streams in."""
    u = urllib.parse.urlsplit(server.url)
    qs = urllib.parse.urlencode({"query": query, **server.params})
    headers = {"Accept": accept}
    if encoding != "identity":
        headers["Accept-Encoding"] = encoding
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout + 60)
    out = {"rows": None, "payload_bytes": None, "wire_bytes": 0, "error": None}
    try:
        conn.request("GET", f"{u.path}?{qs}", headers=headers)
        resp = conn.getresponse()
        served = resp.getheader("Content-Encoding", "identity")
        out.update(status=resp.status, content_encoding=served)
        if resp.getheader("X-SQL-State"):
            out["error"] = f"partial answer: {resp.getheader('X-SQL-State')} {resp.getheader('X-SQL-Message')}"
        if resp.getheader("X-SPARQL-MaxRows"):
            out["cut_at_rows"] = int(resp.getheader("X-SPARQL-MaxRows"))
        if resp.status != 200:
            out["error"] = f"HTTP {resp.status}: {resp.read(300).decode('utf-8', 'replace')}"
            return out
        if served not in ("identity", "gzip", "deflate"):
            out["error"] = f"cannot decode {served} here"
            return out
        inflate = zlib.decompressobj(47) if served != "identity" else None  # 47: gzip or zlib header
        counter = counter_for(fmt)
        while chunk := resp.read1(1 << 20):
            out["wire_bytes"] += len(chunk)
            counter.feed(inflate.decompress(chunk) if inflate else chunk)
        if inflate:
            counter.feed(inflate.flush())
            if not inflate.eof:
                out["error"] = "compressed stream cut off"
        out["rows"], out["payload_bytes"] = counter.rows(), counter.bytes
    except (OSError, http.client.HTTPException, zlib.error) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    return out


# --- servers -----------------------------------------------------------------

def dataset(size):
    nt = DATA / f"bsbm-{size}.nt"
    if not nt.exists():
        src = SHARED / "datasets" / f"bsbm-{size}" / "dataset.nt.zst"
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run(["zstd", "-q", "-d", "--long=27", "-f", "-o", str(nt) + ".tmp", str(src)], check=True)
        Path(str(nt) + ".tmp").rename(nt)
    return nt


class Server:
    """A server we started: its process (whose RSS is sampled), endpoint URL,
    extra query parameters and, for tern, the access log."""

    def __init__(self, name, proc, url, params=None, log=None, stopper=None):
        self.name, self.proc, self.url, self.params, self.log = name, proc, url, params or {}, log
        self.stopper = stopper

    def stop(self):
        if self.stopper:
            self.stopper()
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def tern_server(size, nt, args):
    tern = TARGET / "release" / "tern"
    index = DATA / f"export-tern-{size}"
    # Rebuilt when the binary is newer: the index format may have changed.
    built = index / "index.json"
    if not built.exists() or built.stat().st_mtime < Path(tern).stat().st_mtime:
        subprocess.run([tern, "load", "--index", index, "--force", nt], check=True, capture_output=True)
    port = free_port()
    log_path = DATA / f"export-tern-{size}.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([tern, "serve", "--index", index, "--port", str(port), "--timeout", str(args.timeout)],
                            stdout=log, stderr=subprocess.STDOUT)
    return serving(Server("tern", proc, f"http://127.0.0.1:{port}/sparql", log=log_path), port)


def oxigraph_server(size, nt, args):
    oxigraph = VENV / "bin" / "oxigraph"
    if not oxigraph.exists():
        subprocess.run(["bash", str(BENCH / "setup_peers.sh")], check=True)
        subprocess.run([VENV / "bin" / "python", "-m", "pip", "install", "--quiet", "oxigraph"], check=True)
    location = DATA / f"export-oxigraph-{size}"
    if not location.exists():
        subprocess.run([oxigraph, "load", "--location", location, "--file", nt], check=True, capture_output=True)
    port = free_port()
    proc = subprocess.Popen([oxigraph, "serve-read-only", "--location", location, "--bind", f"127.0.0.1:{port}",
                             "--timeout-s", str(args.timeout)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return serving(Server("oxigraph", proc, f"http://127.0.0.1:{port}/query"), port)


def serving(server, port):
    """The server once it listens on `port`; stopped if it never does."""
    try:
        wait_port(port, server.proc)
    except BaseException:
        server.stop()
        raise
    return server


class ExportVirtuoso(Virtuoso):
    """fairness_bench.Virtuoso with PEERS.md's memory settings, no refusal on
    the cost estimate below the timeout, and ResultSetMaxRows checked."""

    def write_ini(self):
        path = super().write_ini()
        text = set_ini(path.read_text(), {
            ("Parameters", "NumberOfBuffers"): "680000", ("Parameters", "MaxDirtyBuffers"): "500000",
            ("SPARQL", "ResultSetMaxRows"): str(VIRTUOSO_MAX_ROWS),
            ("SPARQL", "MaxQueryCostEstimationTime"): str(self.args.timeout),
            ("HTTPServer", "EnabledGzipContent"): "1",
        })
        assert re.search(rf"(?m)^ResultSetMaxRows = {VIRTUOSO_MAX_ROWS}$", text), "ResultSetMaxRows not set"
        path.write_text(text)
        return path


def virtuoso_graph(size):
    return f"http://tern.bench/export/bsbm-{size}"


def virtuoso_server(size, nt, args):
    if not shutil.which("virtuoso-t"):
        raise RuntimeError("no virtuoso-t: apt-get install -y virtuoso-opensource")
    graph = virtuoso_graph(size)
    port = free_port()
    inner = ExportVirtuoso(types.SimpleNamespace(nt=nt, timeout=args.timeout), directory=DATA / f"export-virtuoso-{size}",
                           graph=graph, sql_port=free_port(), http_port=port)
    try:
        inner.__enter__()  # loads the data on the first run only (the `loaded` marker)
    except BaseException:  # started but not loaded (or not listening): stop it
        if getattr(inner, "proc", None) is not None:
            stop(inner.proc)
            inner.log.close()
        raise
    return Server("virtuoso", inner.proc, f"http://127.0.0.1:{port}/sparql", params={"default-graph-uri": graph},
                  stopper=lambda: inner.__exit__(None, None, None))


def fuseki_server(size, nt, args):
    java = find_java()
    if java is None:
        raise RuntimeError("no Java 21+ under /usr/lib/jvm/temurin* (Fuseki needs one; see ../shared/PEERS.md)")
    jar = fetch_fuseki_jar()
    location = DATA / f"export-fuseki-{size}"
    if not (location / "loaded").exists():
        s = tdb2_load(java, jar, args.fuseki_heap, location, nt)
        (location / "loaded").write_text(f"{nt} {s:.1f} s\n")
    port = free_port()
    log = open(DATA / f"export-fuseki-{size}.log", "w")
    proc = subprocess.Popen(fuseki_command(java, jar, args.fuseki_heap, port, location, args.timeout),
                            stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "FUSEKI_BASE": str(DATA / "export-fuseki-base")})
    return serving(Server("fuseki", proc, f"http://127.0.0.1:{port}/ds/sparql"), port)


START = {"tern": tern_server, "oxigraph": oxigraph_server, "virtuoso": virtuoso_server, "fuseki": fuseki_server}


def access_lines(log_path):
    return [l for l in open(log_path) if "tern::access" in l and "rows=" in l]


def last_access(log_path, before):
    """rows and payload bytes of the last query in tern's access log (waits a
    moment for the line if the log still has only `before` lines)."""
    for _ in range(50):
        lines = access_lines(log_path)
        if len(lines) > before:
            break
        time.sleep(0.02)
    fields = dict(re.findall(r"(\w+)=([^ ]+)", lines[-1])) if lines else {}
    return int(fields.get("rows", 0)), int(fields.get("payload_bytes", 0))


# --- the run -----------------------------------------------------------------

def selected_cases(patterns, encodings):
    cases = []
    for kind, query, fmt, accept in CASES:
        for encoding in encodings:
            names = (f"{kind}-{fmt}-{encoding}", f"{kind}-{fmt}")
            if not patterns or any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names):
                cases.append((kind, query, fmt, accept, encoding))
    return cases


def probe_compression(server, encodings, timeout):
    """The Content-Encoding each requested coding gets on a tiny query."""
    served = {}
    for encoding in encodings:
        if encoding != "identity":
            served[encoding] = curl(server, PROBE, "text/tab-separated-values", encoding, timeout)["content_encoding"]
    return served


def line(r):
    mbs = f"{r['payload_mb_s']:7.1f}" if r["payload_mb_s"] is not None else "      ?"
    krows = f"{r['rows_s'] / 1e3:7.0f}" if r["rows_s"] else "      ?"
    flags = f"  [{'; '.join(r['flags'])}]" if r["flags"] else ""
    return (f"{r['size']:>4} {r['engine']:9} {r['query']:9} {r['format']:6} {r['encoding']:8} {r['status']} "
            f"{mbs} MB/s  {r['wire_bytes'] / 1e6:8.1f} MB wire  {krows} krows/s  RSS {r['idle_rss_mb']:.0f} -> "
            f"{r['peak_rss_mb']:.0f} MB{flags}")


def tsv_equivalent(server, payload, args):
    """Bytes of the same SELECT as TSV: this run's TSV case, else one
    unmeasured fetch (kept for the next columnar case)."""
    if ("tern", "select", "tsv") not in payload:
        c = count_rows(server, SELECT, "tsv", "text/tab-separated-values", "identity", args.timeout)
        payload[("tern", "select", "tsv")] = c["payload_bytes"]
    return payload[("tern", "select", "tsv")]


def check_rows(size, servers, cases, compression, args):
    """The unmeasured row check: per engine and query/format, identity, and each
    coding a peer applies. Returns the counts and the differences found."""
    checks, diffs = [], []
    done = set()
    for kind, query, fmt, accept, encoding in cases:
        if fmt in COLUMNAR:
            continue  # binary; tern's own row count (its log) stands for it
        cfmt, caccept = CHECK_FORMAT.get(fmt, (fmt, accept))
        for name, server in servers.items():
            encs = ["identity"]
            if name != "tern" and encoding != "identity" and compression[name].get(encoding) == encoding:
                encs.append(encoding)
            for enc in encs:
                if (name, kind, fmt, enc) in done:
                    continue
                done.add((name, kind, fmt, enc))
                before = len(access_lines(server.log)) if server.log else 0
                c = count_rows(server, query, cfmt, caccept, enc, args.timeout)
                c.update(size=size, engine=name, query=kind, format=fmt, counted_as=cfmt, encoding=enc)
                if server.log and c["error"] is None:
                    c["log_rows"], _ = last_access(server.log, before)
                checks.append(c)
    by = {(c["engine"], c["query"], c["format"], c["encoding"]): c for c in checks}
    ref_engine = "tern" if "tern" in servers else next(iter(servers))
    for c in checks:
        ref = by.get((ref_engine, c["query"], c["format"], "identity"))
        if c["error"]:
            diffs.append({**{k: c[k] for k in ("size", "engine", "query", "format", "encoding")},
                          "problem": f"check fetch failed: {c['error']}"})
        elif c.get("log_rows") is not None and c["log_rows"] != c["rows"]:
            diffs.append({**{k: c[k] for k in ("size", "engine", "query", "format", "encoding")},
                          "problem": f"counted {c['rows']} rows, tern's log says {c['log_rows']}"})
        elif ref and ref["rows"] is not None and c is not ref and c["rows"] != ref["rows"]:
            cut = f", cut by the server (X-SPARQL-MaxRows {c['cut_at_rows']})" if c.get("cut_at_rows") else ""
            diffs.append({**{k: c[k] for k in ("size", "engine", "query", "format", "encoding")},
                          "problem": f"{c['rows']} rows, {ref_engine} {ref['rows']} ({c['rows'] - ref['rows']:+d}){cut}"})
    for c in checks:
        print(f"{size:>4} check {c['engine']:9} {c['query']:9} {c['format']:6} {c['encoding']:8} "
              f"rows {c['rows']}" + (f" (log {c['log_rows']})" if c.get("log_rows") is not None else "")
              + f"  payload {(c['payload_bytes'] or 0) / 1e6:.1f} MB"
              + (f"  CUT at {c['cut_at_rows']} rows" if c.get("cut_at_rows") else "")
              + (f"  ERROR {c['error'].splitlines()[0]}" if c["error"] else ""),
              flush=True)
    for d in diffs:
        print(f"{size:>4} ROW DIFFERENCE {d['engine']} {d['query']} {d['format']} {d['encoding']}: "
              f"{d['problem'].splitlines()[0]}",
              flush=True)
    return checks, diffs


def run(args):
    results, checks, diffs, compression_report, servers_info = [], [], [], {}, {}
    for size in args.sizes:
        nt = dataset(size)
        cases = selected_cases(args.cases, args.encodings)
        servers = {}
        try:
            for name in args.engines:
                t = time.monotonic()
                servers[name] = START[name](size, nt, args)
                print(f"{size:>4} {name} up in {time.monotonic() - t:.0f} s (pid {servers[name].proc.pid})",
                      file=sys.stderr, flush=True)
            time.sleep(1)
            idle = {name: rss(s.proc.pid) for name, s in servers.items()}
            compression = {name: probe_compression(s, args.encodings, args.timeout) for name, s in servers.items()}
            compression_report[size] = compression
            servers_info[size] = {name: {"url": s.url, "params": s.params} for name, s in servers.items()}
            for name, served in compression.items():
                ignored = [f"{e} (served {s})" for e, s in served.items() if s != e]
                if ignored:
                    print(f"{size:>4} {name} does not apply: {', '.join(ignored)}; those cases are skipped for it",
                          flush=True)
            payload, size_rows = {}, []
            for kind, query, fmt, accept, encoding in cases:
                # Interleaved: the same case on each engine in turn.
                for name, server in servers.items():
                    if encoding != "identity" and compression[name].get(encoding) != encoding:
                        continue
                    if fmt in COLUMNAR and name != "tern":
                        continue
                    before = len(access_lines(server.log)) if server.log else 0
                    with RssSampler(server.proc.pid) as sampler:
                        f = curl(server, query, accept, encoding, args.timeout)
                    rows, raw = last_access(server.log, before) if server.log else (None, None)
                    if encoding == "identity" and f["status"] == 200:
                        payload[(name, kind, fmt)] = f["wire"]
                    raw = raw or payload.get((name, kind, fmt))
                    if fmt in COLUMNAR and f["status"] == 200:
                        raw = tsv_equivalent(server, payload, args)
                    if f["status"] != 200:
                        f["flags"].append(f"HTTP {f['status']}")
                    row = {
                        "size": size, "engine": name, "query": kind, "format": fmt, "encoding": encoding,
                        "status": f["status"], "seconds": f["secs"], "first_byte_s": f["ttfb"],
                        "wire_bytes": f["wire"], "content_encoding": f["content_encoding"], "payload_bytes": raw,
                        "rows": rows, "rows_source": "tern log" if rows is not None else None,
                        "payload_mb_s": raw / f["secs"] / 1e6 if raw else None,
                        "rows_s": rows / f["secs"] if rows else None,
                        "idle_rss_mb": idle[name] / 2**20, "peak_rss_mb": sampler.peak / 2**20,
                        "flags": f["flags"],
                    }
                    results.append(row)
                    size_rows.append(row)
                    print(line(row), flush=True)
            if args.check_rows:
                c, d = check_rows(size, servers, cases, compression, args)
                checks += c
                diffs += d
            fill_peer_rows(size_rows, c if args.check_rows else [])
        finally:
            for server in servers.values():
                server.stop()
    return {"results": results, "row_check": checks, "row_differences": diffs, "compression": compression_report,
            "servers": servers_info}


def fill_peer_rows(rows, checks):
    """Rows (and payload bytes where the identity case was not measured) of the
    engines without an access log: from the row check, else tern's count."""
    counted = {(c["engine"], c["query"], c["format"], c["encoding"]): c for c in checks if c["error"] is None}
    tern = {(r["query"], r["format"]): r["rows"] for r in rows if r["engine"] == "tern" and r["rows"]}
    for r in rows:
        if r["rows"] is not None or r["status"] != 200:
            continue  # tern's (from its log), or a failed answer: no rate
        c = counted.get((r["engine"], r["query"], r["format"], r["encoding"])) \
            or counted.get((r["engine"], r["query"], r["format"], "identity"))
        if c:
            r["rows"], r["rows_source"] = c["rows"], f"counted ({c['counted_as']}, {c['encoding']})"
            if r["payload_bytes"] is None and c["format"] == c["counted_as"]:
                r["payload_bytes"] = c["payload_bytes"]
        elif (r["query"], r["format"]) in tern:
            r["rows"], r["rows_source"] = tern[(r["query"], r["format"])], "tern"
        if r["rows"]:
            r["rows_s"] = r["rows"] / r["seconds"]
        if r["payload_bytes"] and r["payload_mb_s"] is None:
            r["payload_mb_s"] = r["payload_bytes"] / r["seconds"] / 1e6


def summary(results):
    """Final figures, with rows/s relative to tern's on the same case."""
    tern = {(r["size"], r["query"], r["format"], r["encoding"]): r for r in results if r["engine"] == "tern"}
    out = ["", "size engine    query     format encoding  MB/s payload  krows/s  rows/s vs tern  wire MB  "
                "peak RSS MB  rows (source)"]
    for r in results:
        t = tern.get((r["size"], r["query"], r["format"], r["encoding"]))
        rel = f"{r['rows_s'] / t['rows_s']:.2f}x" if t and t["rows_s"] and r["rows_s"] else "—"
        mbs = f"{r['payload_mb_s']:.1f}" if r["payload_mb_s"] is not None else "?"
        krows = f"{r['rows_s'] / 1e3:.0f}" if r["rows_s"] else "?"
        out.append(f"{r['size']:>4} {r['engine']:9} {r['query']:9} {r['format']:6} {r['encoding']:8} {mbs:>13} "
                   f"{krows:>8} {rel:>15} {r['wire_bytes'] / 1e6:8.1f} {r['peak_rss_mb']:12.0f}  "
                   f"{r['rows']} ({r['rows_source']})" + (f"  [{'; '.join(r['flags'])}]" if r["flags"] else ""))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1m", type=lambda s: s.split(","), help="BSBM sizes (default: 1m)")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma-separated subset of tern,oxigraph,virtuoso,fuseki (default: all; run in that order)")
    ap.add_argument("--no-peers", action="store_true", help="tern only (same as --engines tern)")
    ap.add_argument("--cases", default="", help="comma-separated case names or patterns, e.g. select-tsv-identity, "
                    "'select-*', '*-gzip' (default: all)")
    ap.add_argument("--encodings", default=",".join(ENCODINGS), type=lambda s: s.split(","))
    ap.add_argument("--no-check-rows", dest="check_rows", action="store_false",
                    help="skip the unmeasured pass that counts every engine's rows and compares them with tern's")
    ap.add_argument("--timeout", type=int, default=3600, help="server-side query timeout, all engines (s)")
    ap.add_argument("--fuseki-heap", default="4G", help="Fuseki's -Xmx, for its load and its server (PEERS.md: 4G)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    engines = ["tern"] if args.no_peers else [e.strip() for e in args.engines.split(",") if e.strip()]
    if unknown := set(engines) - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    args.engines = [e for e in ENGINES if e in engines]  # fixed order: tern first
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if unknown := set(args.encodings) - set(ENCODINGS):
        ap.error(f"unknown encoding(s): {', '.join(sorted(unknown))}")
    if not selected_cases(args.cases, args.encodings):
        ap.error("no case matches --cases/--encodings; names are QUERY-FORMAT-ENCODING: " + ", ".join(
            f"{k}-{f}-{e}" for k, f, e in [(c[0], c[2], "identity") for c in CASES]) + ", ...")

    def interrupt(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # stops the servers like Ctrl-C does
    found = run(args)
    print(summary(found["results"]))
    if found["row_differences"]:
        print(f"\n{len(found['row_differences'])} row difference(s):")
        for d in found["row_differences"]:
            print(f"  {d['size']} {d['engine']} {d['query']} {d['format']} {d['encoding']}: {d['problem'].splitlines()[0]}")
    elif args.check_rows:
        print("\nrow check: every engine returned the same number of rows as tern")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    virtuoso = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"], capture_output=True,
                              text=True).stdout.strip() if "virtuoso" in args.engines else None
    report = {"commit": commit, "cores": os.cpu_count(), "command": " ".join(sys.argv), "engines": args.engines,
              "timeout_s": args.timeout, "virtuoso_version": virtuoso,
              "virtuoso_graphs": {s: virtuoso_graph(s) for s in args.sizes} if virtuoso else None, **found}
    out = args.out or BENCH / "results" / f"export-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("interrupted (the servers were stopped)")
