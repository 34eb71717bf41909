"""The W3C SPARQL 1.1 Graph Store HTTP Protocol suite
(`sparql11/graph-store-protocol/manifest.ttl` and the manifests it includes),
read from its manifests and sent over a real socket to `tern serve`.

Each test is a sequence of `ht:Request`s on one connection. Every response
must have one of the test's `mf:expectedStatus` codes (or status classes);
`mf:expectedLocation` names a template variable that takes the response's
`Location` and is replaced in the later requests' targets and bodies; an
expected `ht:body` must be isomorphic to the graph returned, parsed in the
format each side's Content-Type gives.

Mapping the suite onto Tern:
- The suite's endpoint is `http://www.example/gsp` (`ht:connectionAuthority`
  and the `/gsp` prefix of every `ht:absolutePath`); Tern's is `/store`. Every
  request carries `Host: <connectionAuthority>` (`www.example`), so that
  direct identification (`/store/person/1.ttl`) names
  `http://www.example/store/person/1.ttl` and `Location` comes back as
  `http://www.example/store/...`.
- Request targets have their `/gsp` prefix replaced with `/store`, and so do
  the graph IRIs the targets name indirectly (`?graph=http://www.example/gsp/…`,
  raw or percent-encoded, in whatever encoding the test uses): the endpoint
  moved from http://www.example/gsp to http://www.example/store, so a graph the
  suite names under the endpoint stays under it, and the direct and indirect
  names of a graph agree as they do in the suite. Bodies are left alone: the
  IRIs in them (`<http://www.example/gsp/person/1>`) name resources, not
  graphs, and the expected bodies carry the same ones.
- Writes carry `Authorization: Bearer <token>` (the server's --update-token);
  so do reads, which ignore it.
- One server per module; before each test `DROP ALL` (SPARQL Update at
  /sparql) empties the store, and an ASK checks that it is empty.

`w3c-graph-store-known-failures.txt` lists the tests that fail today
(`<test IRI> <reason>` per line). A failing test not listed fails the run; a
listed test that passes fails it too (remove its line), and so does a listed
IRI the manifests no longer have: the list only shrinks.
"""

import functools
import http.client
import re
import secrets
from email.message import Message
from pathlib import Path

import pytest
import rdflib
import requests
from rdflib.collection import Collection
from rdflib.compare import isomorphic, to_isomorphic

from conftest import W3C_PROTOCOL, Server, load, require

W3C_GSP = W3C_PROTOCOL.parent / "graph-store-protocol"
KNOWN_FAILURES = Path(__file__).with_name("w3c-graph-store-known-failures.txt")

MF = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = rdflib.Namespace("http://www.w3.org/2011/http#")
CNT = rdflib.Namespace("http://www.w3.org/2011/content#")
HTS = "http://www.w3.org/2011/http-statusCodes#"

# The hts: terms the manifests use (https://www.w3.org/2011/http-statusCodes):
# a code, or a class of codes.
STATUS = {
    "OK": 200,
    "Created": 201,
    "Accepted": 202,
    "NoContent": 204,
    "BadRequest": 400,
    "NotFound": 404,
    "MethodNotAllowed": 405,
    "UnsupportedMediaType": 415,
}
STATUS_CLASS = {"StatusCode2xx": 2, "StatusCode3xx": 3, "StatusCode4xx": 4, "StatusCode5xx": 5}

# Media types of RDF bodies and the rdflib parser for each.
RDFLIB_FORMAT = {
    "text/turtle": "turtle",
    "application/x-turtle": "turtle",
    "application/n-triples": "nt",
    "text/plain": "nt",
    "application/rdf+xml": "xml",
    "application/ld+json": "json-ld",
}

ENDPOINT = "/store"


# ---------------------------------------------------------------------------
# The manifests


def manifest_files():
    """manifest.ttl and the manifests of its mf:include list, in order."""
    top = require(W3C_GSP / "manifest.ttl", "TERN_W3C_DIR")
    g = rdflib.Graph()
    g.parse(top, format="turtle", publicID=top.as_uri())
    files = [top]
    for m in g.subjects(rdflib.RDF.type, MF.Manifest):
        for include in g.objects(m, MF.include):
            files += [W3C_GSP / Path(str(i)).name for i in Collection(g, include)]
    return files


@functools.lru_cache(maxsize=None)
def load_tests():
    """(IRI, graph of its manifest) of every test the manifests list in
    their mf:entries, in order."""
    out = []
    for path in manifest_files():
        g = rdflib.Graph()
        g.parse(path, format="turtle", publicID=path.as_uri())
        for m in g.subjects(rdflib.RDF.type, MF.Manifest):
            for entries in g.objects(m, MF.entries):
                out += [(str(t), g) for t in Collection(g, entries)]
    return tuple(out)


def graph_store_tests():
    if not (W3C_GSP / "manifest.ttl").exists():
        return ["suite-missing"]  # fails under CI, skipped elsewhere (`require`)
    return [iri.rsplit("#", 1)[-1] for iri, _ in load_tests()]


def known_failures() -> dict:
    """IRI -> reason, from the known-failures file (`#` comments, blank lines
    ignored; `<IRI>` also accepted)."""
    known = {}
    if KNOWN_FAILURES.exists():
        for line in KNOWN_FAILURES.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            iri, _, reason = line.partition(" ")
            known[iri.strip("<>")] = reason.strip()
    return known


def headers_of(g, node) -> list:
    out = []
    hlist = g.value(node, HT.headers)
    if hlist is not None:
        for h in Collection(g, hlist):
            out.append((str(g.value(h, HT.fieldName)), str(g.value(h, HT.fieldValue))))
    return out


def body_of(g, node):
    """The text of an ht:body and its character encoding, or None."""
    body = g.value(node, HT.body)
    if body is None:
        return None
    return str(g.value(body, CNT.chars)), str(g.value(body, CNT.characterEncoding) or "UTF-8")


def header(headers: list, name: str):
    for k, v in headers:
        if k.lower() == name.lower():
            return v
    return None


def statuses_of(g, resp) -> list:
    out = []
    for s in g.objects(resp, MF.expectedStatus):
        name = str(s)
        assert name.startswith(HTS), f"unknown status {name}"
        name = name[len(HTS):]
        assert name in STATUS or name in STATUS_CLASS, f"unknown status hts:{name}"
        out.append(name)
    assert out, "response without mf:expectedStatus"
    return out


def status_ok(code: int, statuses: list) -> bool:
    return any(
        STATUS.get(s) == code or STATUS_CLASS.get(s) == code // 100 for s in statuses
    )


# ---------------------------------------------------------------------------
# From the suite's endpoint to Tern's


def to_tern_target(path: str, authority: str) -> str:
    """`/gsp…` -> `/store…`, and graph IRIs under http://<authority>/gsp in the
    query, raw or percent-encoded (any case), to http://<authority>/store."""
    assert path.startswith("/gsp"), path
    path = ENDPOINT + path[len("/gsp"):]
    slash = r"(/|%2[fF])"
    pattern = (
        r"(http(?::|%3[aA])" + slash + slash + re.escape(authority) + slash + r")gsp(?=" + slash + r"|&|$)"
    )
    return re.sub(pattern, lambda m: m.group(1) + "store", path)


def media_type(value: str):
    """(type, params) of a Content-Type value, lowercased."""
    m = Message()
    m["content-type"] = value
    params = {k.lower(): v.lower() for k, v in m.get_params()[1:]}
    return m.get_content_type(), params


def parse_graph(data: bytes, content_type: str, base: str) -> rdflib.Graph:
    ctype, params = media_type(content_type)
    fmt = RDFLIB_FORMAT.get(ctype)
    assert fmt, f"no parser for {content_type}"
    g = rdflib.Graph()
    g.parse(data=data.decode(params.get("charset", "utf-8")), format=fmt, publicID=base)
    return g


def show(g: rdflib.Graph) -> str:
    return "\n".join(sorted(line for line in g.serialize(format="nt").splitlines() if line))


# ---------------------------------------------------------------------------
# The server


@pytest.fixture(scope="module")
def token() -> str:
    return secrets.token_hex(16)


@pytest.fixture(scope="module")
def gsp_server(workdir, token):
    require(W3C_GSP / "manifest.ttl", "TERN_W3C_DIR")
    empty = workdir / "w3c-gsp-empty.nt"
    empty.write_text("")
    token_file = workdir / "w3c-gsp-token"
    token_file.write_text(token)
    index = load(workdir / "w3c-gsp", str(empty))
    s = Server(index, "--update-token", str(token_file))
    yield s
    s.stop()


def empty_store(server: Server, token: str):
    auth = {"Authorization": f"Bearer {token}"}
    r = requests.post(server.url, data={"update": "DROP ALL"}, headers=auth, timeout=30)
    assert r.status_code == 200, (r.status_code, r.text)
    ask = "ASK { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
    r = requests.get(
        server.url,
        params={"query": ask},
        headers={"Accept": "application/sparql-results+json"},
        timeout=30,
    )
    assert r.status_code == 200 and r.json()["boolean"] is False, (r.status_code, r.text)


# ---------------------------------------------------------------------------
# Running one test


def run_test(server: Server, token: str, g: rdflib.Graph, test: rdflib.URIRef):
    action = g.value(test, MF.action)
    authority = str(g.value(action, HT.connectionAuthority) or "www.example")
    variables = {}

    def fill(text: str) -> str:
        for name, value in variables.items():
            text = text.replace(name, value)
        return text

    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        for step, req in enumerate(Collection(g, g.value(action, HT.requests)), 1):
            method = str(g.value(req, HT.methodName))
            target = fill(to_tern_target(str(g.value(req, HT.absolutePath)), authority))
            headers = {"Host": authority, "Authorization": f"Bearer {token}"}
            for k, v in headers_of(g, req):
                headers[k] = v
            body = body_of(g, req)
            data = None
            if body is not None:
                data = fill(body[0]).encode(body[1])
            where = f"request {step}: {method} {target}"

            conn.request(method, target, body=data, headers=headers)
            r = conn.getresponse()
            got = r.read()
            resp = g.value(req, HT.resp)
            statuses = statuses_of(g, resp)
            assert status_ok(r.status, statuses), (
                f"{where}: status {r.status}, expected {' or '.join('hts:' + s for s in statuses)}; "
                f"body: {got[:500]!r}"
            )

            location_var = g.value(resp, MF.expectedLocation)
            if location_var is not None:
                location = r.getheader("Location")
                assert location, f"{where}: no Location header"
                variables[str(location_var)] = location

            expected_headers = headers_of(g, resp)
            actual_ctype = r.getheader("Content-Type")
            expected_ctype = header(expected_headers, "content-type")
            if expected_ctype is not None:
                assert actual_ctype, f"{where}: no Content-Type, expected {expected_ctype}"
                want, want_params = media_type(expected_ctype)
                have, have_params = media_type(actual_ctype)
                assert have == want, f"{where}: Content-Type {actual_ctype}, expected {expected_ctype}"
                if "charset" in have_params and "charset" in want_params:
                    assert have_params["charset"] == want_params["charset"], (
                        f"{where}: Content-Type {actual_ctype}, expected {expected_ctype}"
                    )
            if method == "HEAD":
                assert got == b"", f"{where}: HEAD answered with a body"

            expected_body = body_of(g, resp)
            if expected_body is not None:
                base = f"http://{authority}{target.split('?')[0]}"
                want = parse_graph(
                    fill(expected_body[0]).encode(expected_body[1]),
                    expected_ctype or "text/turtle",
                    base,
                )
                assert actual_ctype, f"{where}: response body without Content-Type"
                have = parse_graph(got, actual_ctype, base)
                assert isomorphic(want, have), (
                    f"{where}: graph not isomorphic to the expected one\n"
                    f"expected:\n{show(to_isomorphic(want))}\ngot:\n{show(to_isomorphic(have))}"
                )
    finally:
        conn.close()


@pytest.mark.parametrize("name", graph_store_tests())
def test_graph_store(gsp_server, token, name):
    tests = dict(load_tests())
    (iri,) = [t for t in tests if t.rsplit("#", 1)[-1] == name]
    g = tests[iri]
    empty_store(gsp_server, token)
    reason = known_failures().get(iri)
    if reason is None:
        run_test(gsp_server, token, g, rdflib.URIRef(iri))
        return
    try:
        run_test(gsp_server, token, g, rdflib.URIRef(iri))
    except AssertionError as failure:
        pytest.xfail(f"known failure ({reason}): {str(failure).splitlines()[0]}")
    pytest.fail(f"{iri} passes but is listed in {KNOWN_FAILURES.name}: remove its line")


def test_known_failures_are_tests():
    """Every IRI of the known-failures file is a test of the manifests."""
    require(W3C_GSP / "manifest.ttl", "TERN_W3C_DIR")
    stale = sorted(set(known_failures()) - {iri for iri, _ in load_tests()})
    assert not stale, f"not tests of the suite, remove from {KNOWN_FAILURES.name}: {stale}"
