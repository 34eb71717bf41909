"""SPARQL 1.1 Protocol behaviour and status codes, with curl and requests."""

import subprocess

import requests

ASK = "ASK { ?s ?p ?o }"


def test_get_post_form_and_post_direct(server):
    r = requests.get(server.url, params={"query": ASK}, timeout=10)
    assert r.status_code == 200 and r.json()["boolean"] is True
    r = requests.post(server.url, data={"query": ASK}, timeout=10)
    assert r.status_code == 200 and r.json()["boolean"] is True
    r = requests.post(
        server.url,
        data=ASK.encode(),
        headers={"Content-Type": "application/sparql-query"},
        timeout=10,
    )
    assert r.status_code == 200 and r.json()["boolean"] is True


def test_curl_with_trailing_slash_endpoint(server):
    out = subprocess.run(
        ["curl", "-sS", "--fail", "-H", "Accept: text/csv", "--data-urlencode",
         "query=SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", server.url + "/"],
        check=True, capture_output=True, text=True,
    ).stdout
    header, value = out.splitlines()[:2]
    assert header == "n" and int(value) > 50


def test_syntax_error_is_400_with_position(server):
    r = requests.get(server.url, params={"query": "SELECT * WHERE { ?s ?p }"}, timeout=10)
    assert r.status_code == 400
    assert "syntax" in r.text.lower()
    # The parser's message says where: line and column.
    assert any(ch.isdigit() for ch in r.text), r.text


def test_unknown_accept_is_406(server):
    r = requests.get(server.url, params={"query": ASK}, headers={"Accept": "image/png"}, timeout=10)
    assert r.status_code == 406
    # A SELECT format is not a CONSTRUCT format.
    r = requests.get(
        server.url,
        params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"},
        headers={"Accept": "text/csv"},
        timeout=10,
    )
    assert r.status_code == 406


def test_overlong_query_is_413(server):
    query = "SELECT * WHERE { ?s ?p ?o } #" + "x" * (2 << 20)
    r = requests.post(server.url, data=query.encode(), headers={"Content-Type": "application/sparql-query"}, timeout=30)
    assert r.status_code == 413


def test_bad_requests_are_4xx(server):
    assert requests.put(server.url, params={"query": ASK}, timeout=10).status_code == 405
    r = requests.get(server.url + "?query=ASK%7B%7D&query=ASK%7B%7D", timeout=10)
    assert r.status_code == 400
    r = requests.post(server.url, data=ASK, headers={"Content-Type": "text/plain"}, timeout=10)
    assert r.status_code == 415
    r = requests.get(server.url, params={"query": ASK, "default-graph-uri": "not an iri"}, timeout=10)
    assert r.status_code == 400
    r = requests.get(server.url, params={"query": ASK, "timeout": "-1"}, timeout=10)
    assert r.status_code == 400
    # A server without --update-token takes no updates.
    r = requests.post(server.url, data={"update": "CLEAR ALL"}, timeout=10)
    assert r.status_code == 403 and "read-only" in r.text


def test_cors(server):
    r = requests.get(server.url, params={"query": ASK}, headers={"Origin": "http://elsewhere"}, timeout=10)
    assert r.headers["access-control-allow-origin"] == "*"
    assert "Tern-Next" in r.headers["access-control-expose-headers"]
    # Only cross-origin requests (browsers send Origin) get the CORS headers.
    r = requests.get(server.url, params={"query": ASK}, timeout=10)
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers
    assert "access-control-expose-headers" not in r.headers
    r = requests.options(
        server.url,
        headers={"Origin": "http://elsewhere", "Access-Control-Request-Method": "POST"},
        timeout=10,
    )
    assert r.status_code == 204
    assert "POST" in r.headers["access-control-allow-methods"]


def test_accept_q_values(server):
    r = requests.get(
        server.url,
        params={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"},
        headers={"Accept": "application/sparql-results+json;q=0.2, text/tab-separated-values;q=0.9, */*;q=0.1"},
        timeout=10,
    )
    assert r.headers["content-type"].startswith("text/tab-separated-values")


def test_timing_headers_and_explain(server):
    r = requests.get(server.url, params={"query": "SELECT * WHERE { ?s ?p ?o }"}, timeout=10)
    for h in ["tern-parse-ms", "tern-plan-ms", "tern-queue-ms"]:
        assert float(r.headers[h]) >= 0
    r = requests.get(server.url, params={"query": "SELECT * WHERE { ?s ?p ?o }", "explain": "true"}, timeout=10)
    assert r.status_code == 200
    report = r.json()
    assert report["rows"] > 50
    assert "profile" in report and report["execute_ms"] >= 0


def test_metrics(server):
    requests.get(server.url, params={"query": ASK}, timeout=10)
    requests.get(server.url, params={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 5"}, timeout=10)
    requests.get(server.url, params={"query": "SELECT"}, timeout=10)
    m = server.metrics()
    assert m['tern_queries_total{outcome="ok"}'] >= 1
    assert m['tern_queries_total{outcome="client_error"}'] >= 1
    assert m["tern_query_duration_seconds_count"] >= 2
    assert m["tern_queries_active"] == 0
    assert any(k.startswith("tern_response_bytes_total{format=") for k in m)
    # The query above decoded vocabulary blocks; the caches stay in budget.
    assert 0 < m['tern_cache_bytes{cache="vocabulary"}'] <= 64 << 20
    assert 0 <= m['tern_cache_bytes{cache="permutations"}'] <= 1 << 30  # the default's ceiling
    assert "tern::access" in server.access_log()


def test_access_log_names_the_client_and_the_query(server):
    query = "SELECT * WHERE { ?s ?p ?o } LIMIT 2 # access-log"
    for _ in range(2):
        assert requests.post(server.url, data={"query": query}, timeout=10).status_code == 200
    lines = [l for l in server.access_log().splitlines() if "tern::access" in l and "query_hash=" in l]
    hashes = [l.split("query_hash=")[1].split()[0].strip('"') for l in lines[-2:]]
    assert len(hashes) == 2 and hashes[0] == hashes[1] and len(hashes[0]) == 16
    assert all('client="127.0.0.1"' in l or "client=127.0.0.1" in l for l in lines[-2:]), lines[-2:]
    # Times are rounded, not float noise.
    assert all(len(l.split("total_ms=")[1].split()[0]) <= 10 for l in lines[-2:])
