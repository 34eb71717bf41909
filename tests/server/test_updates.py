"""SPARQL 1.1 Update through the protocol, against a real `tern serve
--update-token`: who may write (401 without the credential, 403 with a wrong
one or on a read-only server), what each update form does as seen by the
next query (INSERT DATA, DELETE DATA, DELETE/INSERT WHERE, DELETE WHERE,
CLEAR, DROP, several operations in one request, using-graph-uri and
using-named-graph-uri), that a request is all-or-nothing (a syntax error or
a failing later operation changes nothing), that blank nodes of INSERT DATA
are new per request, that LOAD reads only under --load-dir, and that the
update counters and store gauges in /metrics, `tern stats` and `tern query`
follow the writes.

Each test writes under IRIs of its own (or on a server of its own when it
clears whole graphs), so the tests do not depend on each other's order."""

import re
import subprocess

import pytest
import requests

from conftest import SAMPLE, Server, tern_bin
from writes import JSON, Writable, fresh_index, rows, values

XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
SAMPLE_TRIPLES = 145


def ns(name: str) -> str:
    return f"http://example.org/t/{name}/"


@pytest.fixture(scope="module")
def load_dir(workdir):
    path = workdir / "loadable"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="module")
def srv(workdir, load_dir):
    s = Writable(fresh_index(workdir, "updates", str(SAMPLE)), "--load-dir", str(load_dir))
    yield s
    s.stop()


@pytest.fixture
def own(workdir):
    """A server on a sample index of its own, for updates that clear graphs."""
    s = Writable(fresh_index(workdir, "updates-own", str(SAMPLE)))
    yield s
    s.stop()


def int_lit(n: int) -> str:
    return f'"{n}"^^{XSD_INT}'


# --- Who may write -------------------------------------------------------


def test_update_without_credential_is_401_and_changes_nothing(srv):
    e = ns("noauth")
    version = srv.version()
    for headers in ({}, {"Authorization": "Basic dXNlcjpwYXNz"}):
        r = srv.update(f"INSERT DATA {{ <{e}s> <{e}p> 1 }}", headers=headers)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer" in r.text
    r = requests.post(srv.base + "/compact", timeout=30)
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert not srv.ask(f"ASK {{ <{e}s> ?p ?o }}")
    assert srv.version() == version


def test_update_with_wrong_credential_is_403(srv):
    e = ns("wrongauth")
    wrong = [
        "x" * len(srv.credential),  # same length, other bytes
        srv.credential[:-1],  # a prefix of it
        srv.credential + "0",
    ]
    for token in wrong:
        headers = {"Authorization": f"Bearer {token}"}
        r = srv.update(f"INSERT DATA {{ <{e}s> <{e}p> 1 }}", headers=headers)
        assert r.status_code == 403, r.text
        assert "credential" in r.text
        r = requests.post(srv.base + "/compact", headers=headers, timeout=30)
        assert r.status_code == 403
    assert not srv.ask(f"ASK {{ <{e}s> ?p ?o }}")


def test_read_only_server_refuses_updates_with_403(workdir):
    index = fresh_index(workdir, "read-only", str(SAMPLE))
    s = Server(index)
    try:
        for headers in ({}, {"Authorization": "Bearer " + "a" * 32}):
            r = requests.post(
                s.url, data={"update": "INSERT DATA { <http://e/s> <http://e/p> 1 }"},
                headers=headers, timeout=30,
            )
            assert r.status_code == 403, r.text
            assert "read-only" in r.text
            r = requests.post(s.base + "/compact", headers=headers, timeout=30)
            assert r.status_code == 403 and "read-only" in r.text
        r = requests.get(s.url, params={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"},
                         headers={"Accept": JSON}, timeout=30)
        assert r.json()["results"]["bindings"][0]["n"]["value"] == str(SAMPLE_TRIPLES)
    finally:
        s.stop()
    # A read-only server leaves the directory as `tern load` wrote it.
    assert not (index / "wal").exists() or not any((index / "wal").iterdir())


def test_short_credential_file_is_refused_at_start(workdir):
    short = workdir / "short-credential"
    short.write_text("tooshort\n")
    index = fresh_index(workdir, "short-cred", str(SAMPLE))
    with pytest.raises(RuntimeError, match="at least 16"):
        Server(index, "--update-token", str(short))


def test_update_with_get_is_400(srv):
    e = ns("get")
    r = requests.get(
        srv.url, params={"update": f"INSERT DATA {{ <{e}s> <{e}p> 1 }}"},
        headers=srv.auth, timeout=30,
    )
    assert r.status_code == 400 and "POST" in r.text
    assert not srv.ask(f"ASK {{ <{e}s> ?p ?o }}")


# --- What updates do -----------------------------------------------------


def test_insert_data_and_delete_data(srv):
    e = ns("data")
    before = srv.version()
    report = srv.ok(f"INSERT DATA {{ <{e}a> <{e}p> 1 . <{e}a> <{e}p> 2 . <{e}b> <{e}p> 'x' }}")
    assert report["version"] == before + 1
    assert (report["operations"], report["inserted"], report["deleted"]) == (1, 3, 0)
    assert report["ms"] >= 0
    assert values(srv.url, f"SELECT ?o {{ <{e}a> <{e}p> ?o }}", "o") == [int_lit(1), int_lit(2)]
    # Inserting what is there already changes nothing: no new version.
    report = srv.ok(f"INSERT DATA {{ <{e}a> <{e}p> 1 }}")
    assert (report["version"], report["inserted"]) == (before + 1, 0)
    # Deleting what is not there changes nothing either.
    report = srv.ok(f"DELETE DATA {{ <{e}a> <{e}p> 99 }}")
    assert (report["version"], report["deleted"]) == (before + 1, 0)
    report = srv.ok(f"DELETE DATA {{ <{e}a> <{e}p> 1 . <{e}b> <{e}p> 'x' }}")
    assert (report["version"], report["inserted"], report["deleted"]) == (before + 2, 0, 2)
    assert values(srv.url, f"SELECT ?o {{ <{e}a> <{e}p> ?o }}", "o") == [int_lit(2)]
    assert not srv.ask(f"ASK {{ <{e}b> ?p ?o }}")


def test_application_sparql_update_body_with_using_graph_in_url(srv):
    e = ns("body")
    srv.ok(f"INSERT DATA {{ GRAPH <{e}g1> {{ <{e}s> <{e}p> 1 }} GRAPH <{e}g2> {{ <{e}s> <{e}p> 2 }} }}")
    r = requests.post(
        srv.url,
        params={"using-graph-uri": f"{e}g2"},
        data=f"INSERT {{ <{e}s> <{e}copy> ?o }} WHERE {{ <{e}s> <{e}p> ?o }}".encode(),
        headers={**srv.auth, "Content-Type": "application/sparql-update"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    assert r.json()["inserted"] == 1
    assert values(srv.url, f"SELECT ?o {{ <{e}s> <{e}copy> ?o }}", "o") == [int_lit(2)]


def test_delete_insert_where(srv):
    e = ns("modify")
    srv.ok(f"INSERT DATA {{ <{e}a> <{e}n> 1 . <{e}b> <{e}n> 5 . <{e}c> <{e}n> 9 }}")
    report = srv.ok(
        f"DELETE {{ ?s <{e}n> ?v }} INSERT {{ ?s <{e}big> ?v }} "
        f"WHERE {{ ?s <{e}n> ?v FILTER(?v > 3) }}"
    )
    assert (report["inserted"], report["deleted"]) == (2, 2)
    assert rows(srv.url, f"SELECT ?s ?p ?v {{ ?s ?p ?v FILTER(STRSTARTS(STR(?s), '{e}')) }}") == sorted([
        (("p", f"<{e}n>"), ("s", f"<{e}a>"), ("v", int_lit(1))),
        (("p", f"<{e}big>"), ("s", f"<{e}b>"), ("v", int_lit(5))),
        (("p", f"<{e}big>"), ("s", f"<{e}c>"), ("v", int_lit(9))),
    ])
    # The WHERE clause reads the data as it was before the operation: the
    # inserted triples are not matched again in the same operation.
    report = srv.ok(f"INSERT {{ ?s <{e}big> 0 }} WHERE {{ ?s <{e}big> ?v }}")
    assert report["inserted"] == 2
    assert len(rows(srv.url, f"SELECT * {{ ?s <{e}big> ?v }}")) == 4


def test_delete_where(srv):
    e = ns("deletewhere")
    srv.ok(f"INSERT DATA {{ <{e}a> <{e}p> 1 , 2 , 3 . <{e}b> <{e}p> 4 . <{e}a> <{e}q> 5 }}")
    report = srv.ok(f"DELETE WHERE {{ <{e}a> <{e}p> ?o }}")
    assert (report["inserted"], report["deleted"]) == (0, 3)
    assert values(srv.url, f"SELECT ?o {{ ?s ?p ?o FILTER(STRSTARTS(STR(?s), '{e}')) }}", "o") == [
        int_lit(4), int_lit(5)
    ]


def test_operations_of_a_request_apply_in_order(srv):
    e = ns("sequence")
    report = srv.ok(
        f"INSERT DATA {{ <{e}s> <{e}p> 1 }} ;\n"
        f"INSERT {{ <{e}s> <{e}p> ?n }} WHERE {{ <{e}s> <{e}p> ?o BIND(?o + 1 AS ?n) }} ;\n"
        f"DELETE DATA {{ <{e}s> <{e}p> 1 }}"
    )
    assert report["operations"] == 3
    # Net effect: one triple (2) inserted; the insert-then-delete of 1 is no change.
    assert values(srv.url, f"SELECT ?o {{ <{e}s> <{e}p> ?o }}", "o") == [int_lit(2)]
    # One request is one new version, however many operations it has.
    before = srv.version()
    srv.ok(f"INSERT DATA {{ <{e}t> <{e}p> 1 }} ; INSERT DATA {{ <{e}u> <{e}p> 1 }}")
    assert srv.version() == before + 1


def using_data(srv, e):
    srv.ok(
        f"INSERT DATA {{ GRAPH <{e}g1> {{ <{e}x> <{e}p> 1 }} "
        f"GRAPH <{e}g2> {{ <{e}x> <{e}p> 2 }} GRAPH <{e}g3> {{ <{e}x> <{e}p> 3 }} }}"
    )


def test_using_graph_uri(srv):
    e = ns("using")
    using_data(srv, e)
    # The WHERE clause's default graph is g1 merged with g3.
    report = srv.ok(
        f"INSERT {{ <{e}x> <{e}seen> ?o }} WHERE {{ <{e}x> <{e}p> ?o }}",
        using_graph_uri=[f"{e}g1", f"{e}g3"],
    )
    assert report["inserted"] == 2
    assert values(srv.url, f"SELECT ?o {{ <{e}x> <{e}seen> ?o }}", "o") == [int_lit(1), int_lit(3)]
    # It replaces the update's own USING.
    srv.ok(
        f"INSERT {{ <{e}x> <{e}replaced> ?o }} USING <{e}g2> WHERE {{ <{e}x> <{e}p> ?o }}",
        using_graph_uri=f"{e}g1",
    )
    assert values(srv.url, f"SELECT ?o {{ <{e}x> <{e}replaced> ?o }}", "o") == [int_lit(1)]
    # With using-named-graph-uri, the named graphs are the ones it names.
    srv.ok(
        f"INSERT {{ <{e}x> <{e}named> ?g }} WHERE {{ GRAPH ?g {{ <{e}x> <{e}p> ?o }} }}",
        using_graph_uri=f"{e}g1",
        using_named_graph_uri=f"{e}g2",
    )
    assert values(srv.url, f"SELECT ?g {{ <{e}x> <{e}named> ?g }}", "g") == [f"<{e}g2>"]


def test_using_named_in_the_update_text(srv):
    e = ns("using-named-text")
    using_data(srv, e)
    # USING NAMED without USING: g2 is the only named graph and the
    # default graph is empty (as with FROM NAMED without FROM).
    srv.ok(
        f"INSERT {{ <{e}x> <{e}named> ?g }} USING NAMED <{e}g2> "
        f"WHERE {{ GRAPH ?g {{ <{e}x> <{e}p> ?o }} }}"
    )
    assert values(srv.url, f"SELECT ?g {{ <{e}x> <{e}named> ?g }}", "g") == [f"<{e}g2>"]
    report = srv.ok(
        f"INSERT {{ <{e}x> <{e}dflt> ?o }} USING NAMED <{e}g2> WHERE {{ <{e}x> <{e}p> ?o }}"
    )
    assert report["inserted"] == 0


def test_using_named_graph_uri_alone(srv):
    e = ns("using-named-param")
    using_data(srv, e)
    # Same as USING NAMED <g2> in the text (SPARQL 1.1 Protocol 2.2.3).
    srv.ok(
        f"INSERT {{ <{e}x> <{e}named> ?g }} WHERE {{ GRAPH ?g {{ <{e}x> <{e}p> ?o }} }}",
        using_named_graph_uri=f"{e}g2",
    )
    assert values(srv.url, f"SELECT ?g {{ <{e}x> <{e}named> ?g }}", "g") == [f"<{e}g2>"]
    report = srv.ok(
        f"INSERT {{ <{e}x> <{e}dflt> ?o }} WHERE {{ <{e}x> <{e}p> ?o }}",
        using_named_graph_uri=f"{e}g2",
    )
    assert report["inserted"] == 0


GRAPH_COUNTS = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"


def graph_counts(s: Writable) -> dict:
    found = {dict(r)["g"]: dict(r)["n"] for r in rows(s.url, GRAPH_COUNTS)}
    return {g: int(n.split('"')[1]) for g, n in found.items()}


def total(s: Writable) -> int:
    (row,) = rows(s.url, "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
    return int(dict(row)["n"].split('"')[1])


def test_clear_and_drop(own):
    e = ns("clear")
    own.ok(
        f"INSERT DATA {{ GRAPH <{e}g1> {{ <{e}a> <{e}p> 1 . <{e}b> <{e}p> 2 }} "
        f"GRAPH <{e}g2> {{ <{e}a> <{e}p> 3 }} GRAPH <{e}g3> {{ <{e}a> <{e}p> 4 }} }}"
    )
    # The query's default graph is the union of all graphs.
    assert total(own) == SAMPLE_TRIPLES + 4
    assert graph_counts(own) == {f"<{e}g1>": 2, f"<{e}g2>": 1, f"<{e}g3>": 1}
    report = own.ok(f"CLEAR GRAPH <{e}g1>")
    assert report["deleted"] == 2
    assert graph_counts(own) == {f"<{e}g2>": 1, f"<{e}g3>": 1}
    report = own.ok("CLEAR DEFAULT")
    assert report["deleted"] == SAMPLE_TRIPLES
    assert graph_counts(own) == {f"<{e}g2>": 1, f"<{e}g3>": 1}
    assert total(own) == 2
    report = own.ok(f"DROP GRAPH <{e}g2>")
    assert report["deleted"] == 1
    assert graph_counts(own) == {f"<{e}g3>": 1}
    report = own.ok("DROP SILENT GRAPH <http://example.org/never-there>")
    assert report["deleted"] == 0
    own.ok(f"INSERT DATA {{ <{e}d> <{e}p> 5 }}")
    report = own.ok("DROP NAMED")
    assert report["deleted"] == 1
    assert graph_counts(own) == {} and total(own) == 1
    report = own.ok("DROP ALL")
    assert report["deleted"] == 1
    assert total(own) == 0


# --- All or nothing ------------------------------------------------------


def test_syntax_error_is_400_with_line_and_column_and_changes_nothing(srv):
    e = ns("syntax")
    before = srv.metrics()
    text = f"INSERT DATA {{ <{e}s> <{e}p> 1 }} ;\nINSERT DATA {{ <{e}s> <{e}p> }}"
    r = srv.update(text)
    assert r.status_code == 400, r.text
    m = re.match(r"update syntax error: error at (\d+):(\d+)", r.text)
    assert m, r.text
    assert int(m.group(1)) == 2, r.text  # the second line
    assert 1 <= int(m.group(2)) <= len(text.splitlines()[1]) + 1
    assert not srv.ask(f"ASK {{ <{e}s> ?p ?o }}")
    after = srv.metrics()
    assert after["tern_store_version"] == before["tern_store_version"]
    assert after["tern_updates_total"] == before["tern_updates_total"]


def test_failing_later_operation_undoes_the_whole_request(srv):
    e = ns("atomic")
    srv.ok(f"INSERT DATA {{ <{e}kept> <{e}p> 1 . GRAPH <{e}g> {{ <{e}in-g> <{e}p> 1 }} }}")
    before = srv.metrics()
    # The third operation fails: g holds a triple, so it exists.
    r = srv.update(
        f"INSERT DATA {{ <{e}s> <{e}p> 1 }} ;\n"
        f"DELETE DATA {{ <{e}kept> <{e}p> 1 }} ;\n"
        f"CREATE GRAPH <{e}g>"
    )
    assert r.status_code == 400, r.text
    assert "already exists" in r.text
    assert not srv.ask(f"ASK {{ <{e}s> ?p ?o }}")
    assert srv.ask(f"ASK {{ <{e}kept> <{e}p> 1 }}")
    assert srv.ask(f"ASK {{ GRAPH <{e}g> {{ <{e}in-g> <{e}p> 1 }} }}")
    after = srv.metrics()
    assert after["tern_store_version"] == before["tern_store_version"]
    assert after["tern_quads_inserted_total"] == before["tern_quads_inserted_total"]
    assert after["tern_quads_deleted_total"] == before["tern_quads_deleted_total"]
    # CREATE SILENT lets the same request through.
    report = srv.ok(f"INSERT DATA {{ <{e}s> <{e}p> 1 }} ; CREATE SILENT GRAPH <{e}g>")
    assert report["inserted"] == 1


def test_blank_nodes_of_insert_data_are_new_in_each_request(srv):
    e = ns("bnodes")
    text = f"INSERT DATA {{ _:x <{e}tag> 'same' . _:x <{e}n> 1 . _:y <{e}tag> 'same' }}"
    assert srv.ok(text)["inserted"] == 3
    assert srv.ok(text)["inserted"] == 3
    found = rows(srv.url, f"SELECT ?b {{ ?b <{e}tag> 'same' }}")
    assert len(found) == 4 and len(set(found)) == 4
    assert all(dict(r)["b"].startswith("_:") for r in found)
    # Within a request, one label is one node: each _:x has both triples.
    assert len(rows(srv.url, f"SELECT ?b {{ ?b <{e}tag> 'same' ; <{e}n> 1 }}")) == 2


# --- LOAD ---------------------------------------------------------------


def test_load_reads_only_under_load_dir(srv, load_dir, workdir):
    e = ns("load")
    inside = load_dir / "birds.nt"
    inside.write_text(f"<{e}s1> <{e}p> \"one\" .\n<{e}s2> <{e}p> _:b .\n_:b <{e}p> \"two\" .\n")
    outside = workdir / "outside.nt"
    outside.write_text(f"<{e}outside> <{e}p> 1 .\n")
    for iri in (
        f"file://{outside}",
        f"file://{load_dir}/../outside.nt",  # leaves the directory
        "http://example.org/data.nt",  # not a file
    ):
        r = srv.update(f"LOAD <{iri}>")
        assert r.status_code == 403, (iri, r.text)
        assert "LOAD" in r.text
    assert not srv.ask(f"ASK {{ <{e}outside> ?p ?o }}")
    report = srv.ok(f"LOAD <file://{inside}>")
    assert report["inserted"] == 3
    assert values(srv.url, f"SELECT ?o {{ <{e}s1> <{e}p> ?o }}", "o") == ['"one"']
    assert srv.ask(f"ASK {{ <{e}s2> <{e}p> ?b . ?b <{e}p> 'two' }}")
    report = srv.ok(f"LOAD <file://{inside}> INTO GRAPH <{e}g>")
    assert report["inserted"] == 3
    assert srv.ask(f"ASK {{ GRAPH <{e}g> {{ <{e}s1> <{e}p> 'one' }} }}")
    # A missing file under the directory fails the request, unless SILENT.
    r = srv.update(f"LOAD <file://{load_dir}/missing.nt>")
    assert r.status_code == 400, r.text
    assert srv.ok(f"LOAD SILENT <file://{load_dir}/missing.nt>")["inserted"] == 0


def test_load_is_refused_without_load_dir(own, load_dir):
    path = load_dir / "refused.nt"
    path.write_text("<http://e/refused> <http://e/p> 1 .\n")
    r = own.update(f"LOAD <file://{path}>")
    assert r.status_code == 403, r.text
    assert "--load-dir" in r.text
    assert not own.ask("ASK { <http://e/refused> ?p ?o }")


# --- What the server reports ---------------------------------------------


def test_metrics_follow_updates_and_compaction(own):
    e = ns("metrics")
    m0 = own.metrics()
    assert m0["tern_store_version"] == 0 and m0["tern_delta_quads"] == 0
    own.ok(f"INSERT DATA {{ <{e}a> <{e}p> 1 . <{e}b> <{e}p> 2 }}")
    own.ok(f"DELETE DATA {{ <{e}a> <{e}p> 1 }}")
    assert own.update("INSERT DATA { nonsense").status_code == 400
    m1 = own.metrics()
    assert m1["tern_updates_total"] == m0["tern_updates_total"] + 2
    assert m1["tern_quads_inserted_total"] == m0["tern_quads_inserted_total"] + 2
    assert m1["tern_quads_deleted_total"] == m0["tern_quads_deleted_total"] + 1
    assert m1["tern_store_version"] == 2
    # <b> inserted; <a> inserted and deleted again: one effective change.
    assert m1["tern_delta_quads"] == 1
    assert m1["tern_wal_bytes"] > m0["tern_wal_bytes"]
    assert m1["tern_update_seconds_total"] > m0["tern_update_seconds_total"]
    report = own.compact()
    assert report["compacted"] is True
    assert report["version"] == 2 and report["quads"] == SAMPLE_TRIPLES + 1
    m2 = own.metrics()
    assert m2["tern_compactions_total"] == m1["tern_compactions_total"] + 1
    assert m2["tern_delta_quads"] == 0 and m2["tern_store_version"] == 2
    assert m2["tern_compacting"] == 0
    assert m2["tern_last_compaction_quads"] == SAMPLE_TRIPLES + 1
    assert own.compact()["compacted"] is False
    # The compacted store answers as before.
    assert values(own.url, f"SELECT ?s {{ ?s <{e}p> ?o }}", "s") == [f"<{e}b>"]
    assert total(own) == SAMPLE_TRIPLES + 1


def test_stats_and_query_commands_read_logged_updates(own):
    e = ns("cli")
    own.ok(f"INSERT DATA {{ <{e}s> <{e}p> 'logged' }}")
    own.ok(f"DELETE DATA {{ <{e}s> <{e}p> 'logged' }} ; INSERT DATA {{ <{e}s> <{e}p> 'again' }}")
    # Read-only, beside the running server.
    out = subprocess.run(
        [tern_bin(), "query", "--index", str(own.index), f"SELECT ?o {{ <{e}s> <{e}p> ?o }}"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert out.split() == ["?o", '"again"']
    stats = subprocess.run(
        [tern_bin(), "stats", "--index", str(own.index)],
        check=True, capture_output=True, text=True,
    ).stdout
    line = next(l for l in stats.splitlines() if l.startswith("updates"))
    assert re.search(r"\b2 since the base\b", line), line
    assert f"{SAMPLE_TRIPLES + 1} quads now" in line, line


def test_graph_store_requests_to_the_endpoint_are_served_as_the_graph_store(own):
    """A Graph Store client given the endpoint's address (`/sparql?graph=`,
    `/sparql?default`) gets the graph, as from `/store`, not the service
    description (which it would take for the graph's content); queries with
    such parameters in their URL still run as queries."""
    g = ns("gsp-at-endpoint")
    put = requests.put(f"{own.url}?graph={g}", data=f"<{ns('a')}> <{ns('p')}> 1 .",
                       headers={"Content-Type": "text/turtle", **own.auth}, timeout=30)
    assert put.status_code in (200, 201, 204), put.text
    nt = {"Accept": "application/n-triples"}
    got = requests.get(own.url, params={"graph": g}, headers=nt, timeout=30)
    store = requests.get(own.url.replace("/sparql", "/store"), params={"graph": g}, headers=nt, timeout=30)
    assert got.status_code == 200 and got.text == store.text and ns("p") in got.text
    assert requests.get(own.url, params={"default": ""}, headers=nt, timeout=30).status_code == 200
    assert requests.get(own.url, params={"graph": ns("no-such-graph")}, headers=nt, timeout=30).status_code == 404
    # Without a graph: the service description, as before.
    described = requests.get(own.url, headers={"Accept": "text/turtle"}, timeout=30)
    assert described.status_code == 200 and "Service" in described.text
    # A form query posted to a URL that happens to carry graph=: a query.
    query = requests.post(f"{own.url}?graph={g}", data={"query": f"ASK {{ GRAPH <{g}> {{ ?s ?p 1 }} }}"},
                          headers={"Accept": JSON}, timeout=30)
    assert query.status_code == 200 and query.json()["boolean"] is True
