"""Streaming behaviour: compression, errors after the first byte (trailer,
in-band, broken transfer), timeouts, cancellation on disconnect, admission
control and concurrency."""

import gzip
import io
import json
import socket
import subprocess
import threading
import time
import zlib
from urllib.parse import urlencode

import brotli
import pytest
import requests
import zstandard

import rawhttp
from conftest import BIG_TRIPLES, SILENT, Server

ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
P0 = "<http://example.org/big/p0>"
# 2.5 million joined rows (hundreds of MB in JSON): rows flow at once and
# last longer than any client here waits.
ENDLESS = f"SELECT * WHERE {{ ?a {P0} ?o . ?b {P0} ?o }}"


def decode(encoding, data):
    """The whole content: a zstd content may be several frames (a new one
    each time the adaptive level changes, RFC 8878 3.1)."""
    return {
        "gzip": gzip.decompress,
        "deflate": zlib.decompress,
        "br": brotli.decompress,
        "zstd": lambda d: zstandard.ZstdDecompressor().stream_reader(io.BytesIO(d), read_across_frames=True).read(),
    }[encoding](data)


@pytest.mark.parametrize("fmt", ["text/tab-separated-values", "application/sparql-results+json"])
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_compressed_equals_identity(big_server, encoding, fmt):
    params = {"query": ALL}
    plain = requests.get(big_server.url, params=params, headers={"Accept": fmt, "Accept-Encoding": "identity"}, timeout=120)
    assert "content-encoding" not in plain.headers
    assert plain.content.count(b"\n") > BIG_TRIPLES
    r = requests.get(big_server.url, params=params, headers={"Accept": fmt, "Accept-Encoding": encoding}, stream=True, timeout=120)
    assert r.headers["content-encoding"] == encoding
    wire = r.raw.read(decode_content=False)
    assert len(wire) < len(plain.content) / 3
    assert decode(encoding, wire) == plain.content


def test_accept_encoding_q_values(server):
    r = requests.get(server.url, params={"query": ALL}, headers={"Accept-Encoding": "gzip;q=0.5, br;q=0.9, zstd;q=0"}, timeout=10)
    assert r.headers["content-encoding"] == "br"
    r = requests.get(server.url, params={"query": ALL}, headers={"Accept-Encoding": "identity"}, timeout=10)
    assert "content-encoding" not in r.headers


def test_curl_compressed(big_server):
    out = subprocess.run(
        ["curl", "-sS", "--compressed", "-G", "-H", "Accept: text/csv", "--data-urlencode", f"query={ALL}",
         "-D", "-", big_server.url],
        check=True, capture_output=True,
    ).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    assert b"content-encoding: zstd" in head.lower()
    assert body.count(b"\r\n") == BIG_TRIPLES + 1


def test_adaptive_compression_streams_decode_for_a_slow_client(big_server):
    """A client that reads slowly (where zstd's level may rise, a new frame
    each time) and one that asks for the fixed level get the same rows,
    decoded with a frame reader (zstandard's, across frames) and by curl
    reading at a limited rate. That a slow client gets fewer bytes is shown
    by the stage's unit test and measured by
    bench/adaptive_compression_bench.py (a debug server here may be slower
    than any client)."""
    params = {"query": ALL}
    tsv = {"Accept": "text/tab-separated-values"}
    plain = requests.get(big_server.url, params=params, headers={**tsv, "Accept-Encoding": "identity"}, timeout=120)

    def slowly(mode):
        r = requests.get(big_server.url, params={**params, "compression": mode},
                         headers={**tsv, "Accept-Encoding": "zstd"}, stream=True, timeout=120)
        assert r.headers["content-encoding"] == "zstd"
        wire = bytearray()
        for chunk in r.raw.stream(16 << 10, decode_content=False):
            wire += chunk
            time.sleep(0.002)
        return bytes(wire)

    assert decode("zstd", slowly("fixed")) == plain.content
    assert decode("zstd", slowly("adaptive")) == plain.content
    curl = subprocess.run(["curl", "-sS", "--compressed", "--limit-rate", "4M", "-G", "-H", f"Accept: {tsv['Accept']}",
                           "--data-urlencode", f"query={ALL}", big_server.url], capture_output=True, check=True)
    assert curl.stdout == plain.content
    bad = requests.get(big_server.url, params={**params, "compression": "best"}, timeout=10)
    assert bad.status_code == 400 and "compression" in bad.text


@pytest.mark.parametrize("fmt,marker", [
    ("application/sparql-results+json", "json"),
    ("application/sparql-results+xml", "xml"),
    ("text/tab-separated-values", None),
])
def test_fault_after_first_chunk_in_trailer_and_in_band(big_server, fmt, marker):
    params = {"query": ALL, "tern-fault-after": "50000"}
    r = rawhttp.get(big_server.host, big_server.port, "/sparql", params, {"Accept": fmt, "TE": "trailers"})
    assert r.status == 200
    assert "tern-error" in r.headers["trailer"].lower()
    assert r.complete
    assert "injected fault after 50000 rows" in r.trailers["tern-error"]
    assert r.trailers["tern-rows"] == "50000"
    if marker == "json":
        doc = json.loads(r.body)
        assert doc["error"]["incomplete"] is True
        assert "injected fault" in doc["error"]["message"]
        assert len(doc["results"]["bindings"]) == 50000
    elif marker == "xml":
        assert r.body.rstrip().endswith(b"</sparql>")
        assert b"<tern:error" in r.body and b"injected fault" in r.body


def test_fault_without_te_trailers_breaks_the_transfer(big_server):
    params = {"query": ALL, "tern-fault-after": "50000"}
    r = rawhttp.get(big_server.host, big_server.port, "/sparql", params, {"Accept": "text/tab-separated-values"})
    assert r.status == 200
    assert not r.complete  # no terminating chunk: the client sees a cut transfer
    # The rows before the fault were sent, but the connection is cut right
    # after them, so the last chunk may be lost with it under load.
    assert r.body.count(b"\n") >= 30000
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        requests.get(big_server.url, params=params, timeout=60).content
    # curl reports a transfer error too (18: partial file, 56: receive error).
    rc = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-G", "--data-urlencode", f"query={ALL}",
                         "--data-urlencode", "tern-fault-after=50000", big_server.url], capture_output=True).returncode
    assert rc in (18, 56), rc


def test_successful_result_has_trailers(big_server):
    r = rawhttp.get(big_server.host, big_server.port, "/sparql", {"query": ALL}, {"Accept": "text/csv", "TE": "trailers"})
    assert r.complete
    assert int(r.trailers["tern-rows"]) == BIG_TRIPLES
    assert float(r.trailers["tern-total-ms"]) >= float(r.trailers["tern-execute-ms"])
    assert "tern-error" not in r.trailers


def test_timeout_after_first_rows(big_server):
    params = {"query": ENDLESS, "timeout": "0.5"}
    started = time.monotonic()
    r = rawhttp.get(big_server.host, big_server.port, "/sparql", params,
                    {"Accept": "application/sparql-results+json", "TE": "trailers"})
    assert time.monotonic() - started < 10
    assert r.status == 200 and r.complete
    assert "timed out" in r.trailers["tern-error"]
    # The document closes with the error object. Only its tail is parsed:
    # hundreds of MB of rows arrive in the half second, and test_fault_* check
    # whole documents of this form.
    tail = r.body[r.body.rindex(b'"error":') + len(b'"error":'):].rstrip()
    assert tail.endswith(b"}}")
    assert json.loads(tail[:-1])["incomplete"] is True


def test_timeout_before_first_row_is_a_status(big_server):
    r = requests.get(big_server.url, params={"query": SILENT, "timeout": "0.3"}, timeout=30)
    assert r.status_code == 504
    assert "timed out" in r.text


def wait_idle(server, timeout):
    """Seconds until no query is active, polling /metrics."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if server.metrics()["tern_queries_active"] == 0:
            return time.monotonic() - started
        time.sleep(0.005)
    raise AssertionError("query still active")


@pytest.mark.parametrize("query", [ENDLESS, SILENT])
def test_disconnect_cancels_the_query(big_server, query):
    sock = socket.create_connection((big_server.host, big_server.port))
    sock.sendall(f"GET /sparql?{urlencode({'query': query})} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    if query == ENDLESS:
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
    deadline = time.monotonic() + 10
    while big_server.metrics()["tern_queries_active"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.3)
    assert big_server.metrics()["tern_queries_active"] == 1
    sock.close()
    elapsed = wait_idle(big_server, 5)
    print(f"cancelled {elapsed * 1000:.0f} ms after the disconnect")
    # ~100 ms promised; allow for a loaded CI machine and the polling itself.
    # Before the first row the engine notices only between its batches (a
    # hash join here emits ~200K rows per batch), hence the wider bound.
    assert elapsed < (0.5 if query == ENDLESS else 1.5), elapsed


def test_queue_full_is_503_with_retry_after(big_index):
    s = Server(big_index, "--workers", "1", "--max-queued", "1")
    try:
        holders = []
        for _ in range(2):  # one running, one queued
            sock = socket.create_connection((s.host, s.port))
            sock.sendall(f"GET /sparql?{urlencode({'query': SILENT})} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            holders.append(sock)
            time.sleep(0.3)
        r = requests.get(s.url, params={"query": "ASK {}"}, timeout=10)
        assert r.status_code == 503
        assert r.headers["retry-after"] == "1"
        m = s.metrics()
        # Started (the worker shares its time between them) or waiting.
        assert m["tern_queries_active"] + m["tern_queries_queued"] == 2
        for sock in holders:
            sock.close()
        wait_idle(s, 5)
        # The queued one was abandoned too; the server serves again.
        deadline = time.monotonic() + 5
        while requests.get(s.url, params={"query": "ASK {}"}, timeout=10).status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        s.stop()


def test_many_concurrent_clients(big_server):
    errors = []
    counts = []

    def client(i):
        try:
            for j in range(3):
                q = f"SELECT ?o WHERE {{ <http://example.org/big/s{i * 7 + j}> ?p ?o }}"
                r = requests.get(big_server.url, params={"query": q}, headers={"Accept": "text/csv"}, timeout=60)
                r.raise_for_status()
                counts.append(r.text.count("\r\n") - 1)
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert counts == [4] * 96


def test_first_rows_arrive_before_the_end(big_server):
    """An endless result's first bytes arrive at once."""
    started = time.monotonic()
    with requests.get(big_server.url, params={"query": ENDLESS, "timeout": "3"}, headers={"Accept": "text/tab-separated-values"}, stream=True, timeout=30) as r:
        first = next(r.iter_content(1024))
        assert time.monotonic() - started < 1.5
        assert first.startswith(b"?a\t")


@pytest.mark.parametrize("first_turn", ["1ms", "0"])
def test_short_queries_on_an_idle_server_end_in_one_turn(sample_index, first_turn):
    """On an idle server a short query's first turn runs on the thread that
    read the request (unless `--first-turn-here 0`), and a small result of
    several chunks (its first row, the rest, the end) never waits for its
    client to read before it can send its end."""
    s = Server(sample_index, "--first-turn-here", first_turn)
    try:
        session = requests.Session()
        query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 40"
        expected = None
        for _ in range(20):
            r = session.post(s.url, data={"query": query},
                             headers={"Accept": "application/sparql-results+json"}, timeout=30)
            assert r.status_code == 200, r.text
            rows = r.json()["results"]["bindings"]
            assert len(rows) > 1
            expected = expected or rows
            assert rows == expected
        m = s.metrics()
        assert m["tern_first_turns_here_total"] == (20 if first_turn != "0" else 0)
        assert m["tern_queries_parked_total"] == 0
    finally:
        s.stop()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_a_short_result_is_compressed_whole(server, encoding):
    """A result whole before its first byte leaves is compressed where it
    was written, in one piece: it decodes to the identity content, and the
    access log names the level it was compressed at."""
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 25"
    plain = requests.post(server.url, data={"query": query},
                          headers={"Accept": "text/tab-separated-values", "Accept-Encoding": "identity"}, timeout=30)
    r = requests.post(server.url, data={"query": query},
                      headers={"Accept": "text/tab-separated-values", "Accept-Encoding": encoding}, stream=True, timeout=30)
    assert r.headers["Content-Encoding"] == encoding
    wire = r.raw.read(decode_content=False)
    assert decode(encoding, wire) == plain.content
    assert plain.content.count(b"\n") == 26
    assert f'encoding="{encoding}" levels="1"' in server.access_log()
