"""LOAD of http(s) documents, against a real `tern serve --load-http` and a
real HTTP server (Python's http.server on 127.0.0.1) holding the documents.

Without --load-http an http IRI is refused (403). With it, hosts that are
or resolve to loopback, private, link-local or reserved addresses are
refused (403, saying why), also when a redirect leads there, and nothing
is fetched from them. A host the operator names with --load-http-allow-host
(here 127.0.0.1, standing in for an intranet mirror) is fetched: the syntax
comes from the media type or, for a generic one, from the file extension;
an error answer, a non-RDF media type and a document over --load-max-bytes
fail the request (400) and change nothing, unless SILENT."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import SAMPLE
from writes import Writable, fresh_index

E = "http://example.org/fetched/"
TURTLE = f"@prefix e: <{E}> .\ne:s1 e:p \"one\" ; e:q _:b .\n_:b e:p \"two\" .\n"
NTRIPLES = f"<{E}s3> <{E}p> \"three\" .\n"
LIMIT = 4000


class Documents(BaseHTTPRequestHandler):
    """The documents LOAD fetches; counts the requests it got."""

    requests_seen: list = []

    def do_GET(self):
        Documents.requests_seen.append(self.path)
        routes = {
            "/birds.ttl": (200, "text/turtle", TURTLE),
            "/birds.nt": (200, "application/octet-stream", NTRIPLES),
            "/page": (200, "text/html", "<html>not RDF</html>"),
            "/big.nt": (200, "application/n-triples", NTRIPLES * (LIMIT // len(NTRIPLES) + 10)),
        }
        if self.path == "/to-localhost":
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{self.server.server_port}/birds.ttl")
            self.end_headers()
            return
        status, media_type, body = routes.get(self.path, (404, "text/plain", "no such document"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def documents():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Documents)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}", httpd.server_port
    httpd.shutdown()


@pytest.fixture(scope="module")
def public_only(workdir):
    """--load-http with no host allowed beyond the public internet."""
    s = Writable(fresh_index(workdir, "load-http", str(SAMPLE)), "--load-http")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def mirror(workdir):
    """127.0.0.1 allowed by name, documents up to LIMIT bytes."""
    s = Writable(
        fresh_index(workdir, "load-mirror", str(SAMPLE)),
        "--load-http", "--load-http-allow-host", "127.0.0.1", "--load-max-bytes", str(LIMIT),
    )
    yield s
    s.stop()


def test_http_load_is_refused_unless_enabled(workdir, documents):
    base, _ = documents
    s = Writable(fresh_index(workdir, "load-off", str(SAMPLE)))
    try:
        before = len(Documents.requests_seen)
        r = s.update(f"LOAD <{base}/birds.ttl>")
        assert r.status_code == 403, r.text
        assert "--load-http" in r.text
        assert len(Documents.requests_seen) == before
    finally:
        s.stop()


def test_loopback_and_private_hosts_are_never_fetched(public_only, documents):
    base, port = documents
    before = len(Documents.requests_seen)
    for iri in (
        f"{base}/birds.ttl",
        f"http://localhost:{port}/birds.ttl",
        f"http://[::1]:{port}/birds.ttl",
        "http://10.1.2.3/data.ttl",
        "http://169.254.169.254/latest/meta-data/",
        "https://192.168.0.1/data.nt",
    ):
        r = public_only.update(f"LOAD <{iri}>")
        assert r.status_code == 403, (iri, r.text)
        assert "non-public address" in r.text and "--load-http-allow-host" in r.text, r.text
    assert len(Documents.requests_seen) == before
    assert not public_only.ask(f"ASK {{ <{E}s1> ?p ?o }}")
    # SILENT hides the refusal, and still fetches nothing.
    assert public_only.ok(f"LOAD SILENT <{base}/birds.ttl>")["inserted"] == 0
    assert len(Documents.requests_seen) == before


def test_an_allowed_host_is_fetched_in_the_syntax_it_names(mirror, documents):
    base, _ = documents
    report = mirror.ok(f"LOAD <{base}/birds.ttl>")
    assert report["inserted"] == 3
    assert mirror.ask(f"ASK {{ <{E}s1> <{E}p> 'one' ; <{E}q> ?b . ?b <{E}p> 'two' }}")
    # application/octet-stream: the .nt extension names the syntax.
    report = mirror.ok(f"LOAD <{base}/birds.nt> INTO GRAPH <{E}g>")
    assert report["inserted"] == 1
    assert mirror.ask(f"ASK {{ GRAPH <{E}g> {{ <{E}s3> <{E}p> 'three' }} }}")


def test_redirect_to_a_host_not_allowed_is_refused(mirror, documents):
    base, _ = documents
    r = mirror.update(f"LOAD <{base}/to-localhost> INTO GRAPH <{E}redirected>")
    assert r.status_code == 403, r.text
    assert "localhost" in r.text and "non-public address" in r.text
    assert not mirror.ask(f"ASK {{ GRAPH <{E}redirected> {{ ?s ?p ?o }} }}")


@pytest.mark.parametrize(
    "path, message",
    [
        ("/missing.ttl", "answered 404"),
        ("/page", "text/html, not an RDF syntax"),
        ("/big.nt", f"larger than the server's limit of {LIMIT} bytes"),
    ],
)
def test_failed_fetches_fail_the_request_and_change_nothing(mirror, documents, path, message):
    base, _ = documents
    graph = f"{E}failed{path.replace('/', '-').replace('.', '-')}"
    r = mirror.update(f"INSERT DATA {{ GRAPH <{graph}> {{ <{E}x> <{E}p> 1 }} }} ; "
                      f"LOAD <{base}{path}> INTO GRAPH <{graph}>")
    assert r.status_code == 400, r.text
    assert message in r.text, r.text
    assert not mirror.ask(f"ASK {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
    assert mirror.ok(f"LOAD SILENT <{base}{path}> INTO GRAPH <{graph}>")["inserted"] == 0
