"""The workbench at / and what it asks the server for (/complete,
/prefixes, /examples, /status, page-rows), predeclared prefixes, and the
one-command starts: `tern serve` on the bundled sample and `tern serve
FILE`, with settings from a config file and the environment."""

import subprocess
import time

import pytest
import requests

from conftest import SAMPLE, Server, free_port, tern_bin

EX = "http://example.org/birds/"


def select(server, query):
    r = requests.post(
        server.url,
        data={"query": query},
        headers={"Accept": "application/sparql-results+json"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r.json()["results"]["bindings"]


def test_the_page_and_its_assets(server):
    page = requests.get(server.base + "/", timeout=10)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "/ui/app.js" in page.text and "/ui/app.css" in page.text
    script = requests.get(server.base + "/ui/app.js", timeout=10)
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    style = requests.get(server.base + "/ui/app.css", timeout=10)
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert requests.get(server.base + "/ui/secret.txt", timeout=10).status_code == 404


@pytest.mark.parametrize(
    "context,brute",
    [
        ("predicate", "SELECT ?x (COUNT(*) AS ?n) WHERE {{ ?s ?x ?o FILTER(STRSTARTS(STR(?x), \"{p}\")) }} GROUP BY ?x"),
        ("class", "SELECT ?x (COUNT(*) AS ?n) WHERE {{ ?s a ?x FILTER(isIRI(?x) && STRSTARTS(STR(?x), \"{p}\")) }} GROUP BY ?x"),
        ("subject", "SELECT ?x (COUNT(*) AS ?n) WHERE {{ ?x ?p ?o FILTER(isIRI(?x) && STRSTARTS(STR(?x), \"{p}\")) }} GROUP BY ?x"),
        ("object", "SELECT ?x (COUNT(*) AS ?n) WHERE {{ ?s ?p ?x FILTER(isIRI(?x) && STRSTARTS(STR(?x), \"{p}\")) }} GROUP BY ?x"),
    ],
)
@pytest.mark.parametrize("prefix", [EX, EX + "a", "http://www.w3.org/2000/01/rdf-schema#", "http://nowhere/"])
def test_completion_matches_a_brute_force_scan(server, context, brute, prefix):
    rows = select(server, brute.format(p=prefix))
    expected = sorted(((-int(r["n"]["value"]), r["x"]["value"]) for r in rows))[:10]
    r = requests.get(
        server.base + "/complete",
        params={"prefix": prefix, "context": context, "limit": 10},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    got = [(-c["count"], c["iri"]) for c in r.json()["completions"]]
    assert got == expected


def test_completion_refuses_a_bad_context(server):
    r = requests.get(server.base + "/complete", params={"prefix": EX, "context": "verb"}, timeout=10)
    assert r.status_code == 400 and "context" in r.text


def test_well_known_prefixes_are_predeclared(server):
    prefixes = requests.get(server.base + "/prefixes", timeout=10).json()["prefixes"]
    assert prefixes["rdfs"] == "http://www.w3.org/2000/01/rdf-schema#"
    rows = select(server, "SELECT ?c WHERE { ?c rdfs:subClassOf <http://example.org/birds/Seabird> }")
    assert len(rows) == 3
    # A query's own declaration wins.
    rows = select(server, "PREFIX rdfs: <http://example.org/birds/> SELECT * WHERE { ?s rdfs:wingspanCm ?w }")
    assert len(rows) == 5


def test_prefixes_can_be_set_and_the_defaults_dropped(sample_index):
    s = Server(sample_index, "--no-default-prefixes", "--prefix", f"ex={EX}")
    try:
        assert requests.get(s.base + "/prefixes", timeout=10).json() == {"prefixes": {"ex": EX}}
        assert len(select(s, "SELECT ?b WHERE { ?b a ex:Tern }")) == 3
        r = requests.post(s.url, data={"query": "SELECT * WHERE { ?s rdfs:label ?l }"}, timeout=10)
        assert r.status_code == 400
    finally:
        s.stop()


def test_status_reports_the_index_and_the_queries(server):
    select(server, "SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    status = requests.get(server.base + "/status", timeout=10).json()
    assert status["index"]["triples"] == 145
    assert status["queries"]["total"] >= 1
    assert status["server"]["uptime_s"] > 0
    assert "version" in status["store"]


def test_page_rows_gives_pages_of_exactly_that_many_rows(big_server):
    """`page-rows=N`: every page but the last holds exactly N rows, though
    the engine makes rows in batches of thousands (the rest of a batch
    waits for the next page), the pages make the whole result, and each
    token also resumes from its saved state, not only from the query
    parked on the server: used a second time, it gives the same page."""
    query = "SELECT ?s ?o WHERE { ?s <http://example.org/big/p0> ?o }"
    json_results = {"Accept": "application/sparql-results+json"}

    def page(data):
        r = requests.post(big_server.url, data=data, headers=json_results, timeout=60)
        assert r.status_code == 200, r.text
        body = r.json()
        return [(b["s"]["value"], b["o"]["value"]) for b in body["results"]["bindings"]], body.get("next"), r

    sizes, rows, tokens = [], [], []
    data = {"query": query, "page-rows": "1000", "quantum": "10s"}
    while True:
        got, token, r = page(data)
        sizes.append(len(got))
        rows += got
        if token is None:
            break
        tokens.append((token, got))
        data = {"next": token, "page-rows": "1000", "quantum": "10s"}
    assert sizes == [1000] * 50 or (sizes[:-1] == [1000] * (len(sizes) - 1) and sizes[-1] == 0)
    assert len(rows) == 50_000 and len(set(rows)) == 50_000
    # Tokens of pages that ended within a batch, used again: the query is
    # no longer parked, so it restarts from where the batch began and
    # skips the rows the earlier pages had.
    for token, _ in tokens[3:6]:
        again, _, r = page({"next": token, "page-rows": "1000", "quantum": "10s"})
        assert r.headers["tern-resumed-from"] == "token"
        start = int(r.headers["tern-rows-before"])
        assert again == rows[start : start + 1000]  # noqa: E203


def test_page_rows_must_be_a_positive_number(server):
    r = requests.post(server.url, data={"query": "ASK {}", "page-rows": "0"}, timeout=10)
    assert r.status_code == 400 and "page-rows" in r.text


def test_serve_alone_serves_the_bundled_sample_with_examples(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    s = Server(None, log_dir=tmp_path, env=env)
    try:
        assert len(select(s, "SELECT * WHERE { ?s ?p ?o }")) == 145
        examples = requests.get(s.base + "/examples", timeout=10).json()["examples"]
        assert len(examples) >= 3
        for example in examples:
            r = requests.post(s.url, data={"query": example["query"]}, timeout=10)
            assert r.status_code == 200, (example["name"], r.text)
        assert "bundled sample" in s.access_log()
        # The sample's namespace is predeclared as ex:.
        assert len(select(s, "SELECT ?b WHERE { ?b a ex:Tern }")) == 3
    finally:
        s.stop()
    # The second start reuses the index built into the cache.
    built = list((tmp_path / "cache" / "tern").glob("sample-*"))
    assert len(built) == 1
    s = Server(None, log_dir=tmp_path, env=env)
    try:
        assert "loaded" not in s.access_log()
    finally:
        s.stop()


def test_serve_files_builds_a_temporary_index(tmp_path):
    data = tmp_path / "people.nt"
    data.write_text("".join(f"<http://e.org/p{i}> <http://e.org/age> \"{i}\" .\n" for i in range(100)))
    s = Server(None, str(data), log_dir=tmp_path)
    try:
        rows = select(s, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert rows[0]["n"]["value"] == "100"
        log = s.access_log()
        assert "temporary index" in log
        temporary = log.split("temporary index ")[1].split(",")[0].strip()
    finally:
        s.stop()
    assert not (tmp_path / temporary).exists() and not __import__("os").path.exists(temporary)


def test_serve_files_into_an_index_that_exists_is_refused(tmp_path, sample_index):
    r = subprocess.run(
        [tern_bin(), "serve", "--index", str(sample_index), str(SAMPLE)],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode != 0 and "holds an index already" in r.stderr


def test_settings_from_a_file_and_the_environment(tmp_path, sample_index):
    file_port, env_port = free_port(), free_port()
    config = tmp_path / "tern.toml"
    config.write_text(f'index = "{sample_index}"\nport = {file_port}\nmax_queued = 3\nprefix = ["ex={EX}"]\n')
    proc = subprocess.Popen(
        [tern_bin(), "serve", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**__import__("os").environ, "TERN_PORT": str(env_port)},
    )
    try:
        url = f"http://127.0.0.1:{env_port}/sparql"
        deadline = time.time() + 30
        while True:
            try:
                r = requests.post(url, data={"query": "SELECT ?b WHERE { ?b a ex:Tern }"}, timeout=5)
                break
            except requests.ConnectionError:
                assert time.time() < deadline and proc.poll() is None, "the server did not start on TERN_PORT"
                time.sleep(0.1)
        assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        proc.wait(10)
    # A misspelled setting stops the start with what was meant.
    config.write_text('prot = 8080\n')
    r = subprocess.run([tern_bin(), "serve", "--config", str(config)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "unknown setting `prot`" in r.stderr and "port" in r.stderr
    # A value of the wrong type names the flag and where the value came from.
    config.write_text('port = "eighty"\n')
    r = subprocess.run([tern_bin(), "serve", "--config", str(config)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--port" in r.stderr and "tern.toml" in r.stderr


def test_a_query_cancelled_after_its_first_rows_ends_with_the_reason_in_band(big_index):
    """Cancelled by the operator while its rows stream: the body ends with
    the in-band error and the trailer says why (it was cut off before)."""
    import json
    import threading

    import rawhttp
    from test_streaming import ENDLESS
    from writes import Writable

    w = Writable(big_index)
    try:
        answer = {}

        def run():
            answer["r"] = rawhttp.get(
                w.server.host, w.server.port, "/sparql", {"query": ENDLESS},
                {"Accept": "application/sparql-results+json", "TE": "trailers"}, timeout=120,
            )

        client = threading.Thread(target=run)
        client.start()
        deadline = time.time() + 30
        listed = []
        while not listed:
            assert time.time() < deadline, "the query never showed on /status"
            listed = requests.get(w.base + "/status", timeout=10).json()["queries"]["in_server"]
            time.sleep(0.05)
        time.sleep(0.3)  # rows are flowing
        r = requests.post(f"{w.base}/queries/{listed[0]['id']}/cancel", headers=w.auth, timeout=10)
        assert r.status_code == 200, r.text
        client.join(60)
        r = answer["r"]
        assert r.status == 200 and r.complete
        assert "cancelled" in r.trailers["tern-error"], r.trailers
        assert json.loads(r.body)["error"]["incomplete"] is True
        assert w.server.metrics()['tern_queries_total{outcome="cancelled"}'] == 1
    finally:
        w.server.stop()


def test_status_lists_queries_and_the_operator_cancels_one(big_index):
    import threading

    from conftest import SILENT
    from writes import Writable

    w = Writable(big_index)
    try:
        outcome = {}

        def run():
            started = time.time()
            try:
                r = requests.post(w.url, data={"query": SILENT}, timeout=120)
                outcome["status"] = r.status_code
                outcome["text"] = r.text
            except requests.RequestException as e:
                outcome["error"] = type(e).__name__
            outcome["seconds"] = time.time() - started

        client = threading.Thread(target=run)
        client.start()
        deadline = time.time() + 30
        listed = []
        while not listed:
            assert time.time() < deadline, "the query never showed on /status"
            status = requests.get(w.base + "/status", timeout=10).json()
            listed = [q for q in status["queries"]["in_server"] if "SUM(STRLEN" in q["query"]]
            time.sleep(0.05)
        query = listed[0]
        assert query["client"] == "127.0.0.1" and query["seconds"] >= 0
        cancel = f"{w.base}/queries/{query['id']}/cancel"
        # The operator's credential is needed.
        assert requests.post(cancel, timeout=10).status_code == 401
        r = requests.post(cancel, headers=w.auth, timeout=10)
        assert r.status_code == 200 and r.json() == {"cancelled": query["id"]}
        client.join(60)
        assert not client.is_alive()
        # It ended long before it would have (it runs for many seconds), and
        # its client was told why.
        assert outcome["seconds"] < 30, outcome
        assert outcome["status"] == 503 and "cancelled" in outcome["text"], outcome
        metrics = w.server.metrics()
        assert metrics['tern_queries_total{outcome="cancelled"}'] == 1, metrics
        assert metrics['tern_queries_total{outcome="error"}'] == 0, metrics
        deadline = time.time() + 10
        while requests.get(w.base + "/status", timeout=10).json()["queries"]["in_server"]:
            assert time.time() < deadline, "the cancelled query stayed listed"
            time.sleep(0.05)
        assert requests.post(cancel, headers=w.auth, timeout=10).status_code == 404
    finally:
        w.server.stop()


def test_sighup_reopens_an_index_that_load_force_rebuilt(tmp_path):
    import signal

    from conftest import load

    def nt(path, n):
        path.write_text("".join(f"<http://e.org/s{i}> <http://e.org/p> \"{i}\" .\n" for i in range(n)))
        return str(path)

    def count(server):
        rows = select(server, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        return int(rows[0]["n"]["value"])

    index = load(tmp_path / "index", nt(tmp_path / "ten.nt", 10))
    s = Server(index)
    try:
        assert count(s) == 10
        load(index, nt(tmp_path / "twenty.nt", 20))
        # Until told, the server serves the index it opened.
        assert count(s) == 10
        s.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 20
        while count(s) != 20:
            assert time.time() < deadline, s.access_log()[-2000:]
            time.sleep(0.05)
        assert "reopened" in s.access_log()
        assert s.proc.poll() is None
    finally:
        s.stop()
