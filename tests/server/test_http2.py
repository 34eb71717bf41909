"""HTTP/2 beside HTTP/1.1 on the same port: h2c with prior knowledge, with
curl (`--http2-prior-knowledge`), httpx (HTTP/2 only) and a bare client on
the `h2` library (which shows trailers and runs streams side by side on
one connection). Results equal HTTP/1.1's; a query that fails after its
first rows reports `Tern-Error` in a trailer to every HTTP/2 client, which
HTTP/1.1 only does for clients that send `TE: trailers`."""

import socket
import subprocess
from urllib.parse import urlencode, urlsplit

import h2.config
import h2.connection
import h2.events
import httpx
import requests

SELECT = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o"
BIG = "SELECT ?s ?o WHERE { ?s <http://example.org/big/p0> ?o }"
CSV = "text/csv"


class H2Client:
    """One HTTP/2 connection (prior knowledge) to a server, for requests
    sent together and read to their ends: status, headers, body, trailers."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.authority = parts.netloc
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        self.conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(1 << 30)
        self.sock.sendall(self.conn.data_to_send())

    def send(self, path: str, headers=()) -> int:
        stream = self.conn.get_next_available_stream_id()
        self.conn.send_headers(stream, [(":method", "GET"), (":scheme", "http"), (":authority", self.authority),
                                        (":path", path), *headers], end_stream=True)
        self.sock.sendall(self.conn.data_to_send())
        return stream

    def read(self, streams):
        out = {s: {"status": None, "headers": {}, "body": bytearray(), "trailers": {}, "order": []} for s in streams}
        open_streams = set(streams)
        while open_streams:
            data = self.sock.recv(1 << 20)
            assert data, "the server closed the connection"
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    got = out[event.stream_id]
                    got["headers"] = {k.decode(): v.decode() for k, v in event.headers}
                    got["status"] = int(got["headers"][":status"])
                elif isinstance(event, h2.events.DataReceived):
                    out[event.stream_id]["body"] += event.data
                    out[event.stream_id]["order"].append(len(event.data))
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.TrailersReceived):
                    out[event.stream_id]["trailers"] = {k.decode(): v.decode() for k, v in event.headers}
                elif isinstance(event, h2.events.StreamEnded):
                    open_streams.discard(event.stream_id)
                elif isinstance(event, h2.events.StreamReset):
                    raise AssertionError(f"stream {event.stream_id} reset: {event.error_code}")
            pending = self.conn.data_to_send()
            if pending:
                self.sock.sendall(pending)
        return out

    def close(self):
        self.conn.close_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.sock.close()


def path(query: str, **params) -> str:
    return "/sparql?" + urlencode({"query": query, **params})


def curl_select(server, http_flag):
    """The CSV of SELECT fetched by curl with `http_flag`, checked against
    the same fetched over HTTP/1.1 by requests; the HTTP version curl used."""
    out = subprocess.run(
        ["curl", "-sS", http_flag, "-H", f"Accept: {CSV}", "-w", "\n%{http_version}",
         "--data-urlencode", f"query={SELECT}", server.url],
        capture_output=True, check=True,
    ).stdout
    body, version = out.rsplit(b"\n", 1)
    over_http1 = requests.post(server.url, data={"query": SELECT}, headers={"Accept": CSV}, timeout=30)
    assert body == over_http1.content and len(body.splitlines()) > 100
    return version


def test_curl_speaks_http2_with_prior_knowledge(server):
    assert curl_select(server, "--http2-prior-knowledge") == b"2"


def test_an_upgrade_to_h2c_is_answered_over_http1(server):
    """`curl --http2` over http:// asks for the upgrade that RFC 9113
    deprecates: the answer comes whole over HTTP/1.1."""
    assert curl_select(server, "--http2") == b"1.1"


def test_httpx_over_http2_gets_what_http1_gets(server):
    with httpx.Client(http1=False, http2=True, timeout=30) as client:
        r = client.get(server.url, params={"query": SELECT}, headers={"Accept": "application/sparql-results+json"})
        assert r.http_version == "HTTP/2" and r.status_code == 200
        bad = client.get(server.url, params={"query": "SELECT * WHERE { ?s ?p }"})
        assert bad.status_code == 400 and "syntax" in bad.text
    over_http1 = requests.get(server.url, params={"query": SELECT},
                              headers={"Accept": "application/sparql-results+json"}, timeout=30)
    assert r.json() == over_http1.json()


def test_a_failure_after_the_first_rows_is_a_trailer_over_http2(big_server):
    """The server injects faults on request (`tern-fault-after`): the query
    fails after 50,000 rows, long after the status line went out. The
    HTTP/2 client sent no `TE: trailers` and still gets the error there."""
    everything = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    client = H2Client(big_server.url)
    try:
        failing = client.send(path(everything, **{"tern-fault-after": "50000"}), [("accept", CSV)])
        whole = client.send(path(everything), [("accept", CSV)])
        got = client.read([failing, whole])
    finally:
        client.close()
    assert got[failing]["status"] == 200 and len(got[failing]["body"]) > 0
    assert "injected fault after 50000 rows" in got[failing]["trailers"].get("tern-error", "")
    # Without the fault the trailers carry the figures and no error.
    assert got[whole]["trailers"].get("tern-error", "") == ""
    assert int(got[whole]["trailers"]["tern-rows"]) == len(got[whole]["body"].splitlines()) - 1


def test_streams_share_one_connection_and_large_results_flow(big_server):
    """Two large results and a small one at once on one connection: each
    arrives whole (HTTP/2 flow control keeps them moving), as over HTTP/1.1."""
    client = H2Client(big_server.url)
    try:
        big = [client.send(path(BIG), [("accept", CSV)]) for _ in range(2)]
        small = client.send(path("ASK { ?s ?p ?o }"), [("accept", "application/sparql-results+json")])
        got = client.read(big + [small])
    finally:
        client.close()
    over_http1 = requests.get(big_server.url, params={"query": BIG}, headers={"Accept": CSV}, timeout=60)
    for stream in big:
        assert got[stream]["status"] == 200
        assert got[stream]["body"].decode() == over_http1.text and len(over_http1.text.splitlines()) == 50_001
    assert b"true" in got[small]["body"]
