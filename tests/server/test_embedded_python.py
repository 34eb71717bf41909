"""The embedded Python API (`crates/tern-python`, the `tern` package)
against `tern query` on the same index: same rows for the same queries,
the HTTP client's result objects, Arrow and DataFrames, loading, errors."""

import json
import subprocess

import pytest

from conftest import SAMPLE, tern_bin

try:
    import tern
except ImportError as e:  # never skipped: a missing build is a failure
    raise ImportError(
        "the tern package is not in this environment: tests/server/run.sh builds it "
        "(cd crates/tern-python && maturin develop)"
    ) from e

from tern_client import IRI, BNode, Literal, SolutionResult  # noqa: E402
from tern_client.ntriples import Triple  # noqa: E402

QUERIES = [
    "SELECT * WHERE { ?s ?p ?o }",
    "PREFIX ex: <http://example.org/birds/> SELECT ?b ?w WHERE { ?b a ex:Tern ; ex:wingspanCm ?w } ORDER BY DESC(?w)",
    "SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s",
    "SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l FILTER(LANG(?l) != \"en\") }",
    "SELECT ?x ?y WHERE { ?x <http://example.org/big/p0> ?o . OPTIONAL { ?x <http://example.org/big/n> ?y } } LIMIT 5000",
]


def cli_rows(index, query):
    """The rows `tern query` gives, as sets of (variable, term) pairs."""
    out = subprocess.run(
        [tern_bin(), "query", "--index", str(index), "--format", "json", query],
        capture_output=True, check=True,
    ).stdout
    doc = json.loads(out)
    rows = []
    for b in doc["results"]["bindings"]:
        rows.append(frozenset((k, v["value"], v.get("datatype"), v.get("xml:lang"), v["type"]) for k, v in b.items()))
    return sorted(rows, key=repr)


def embedded_rows(index, query):
    rows = []
    for row in tern.Index(str(index)).select(query):
        cells = []
        for k, t in row.items():
            if t is None:
                continue
            if isinstance(t, IRI):
                cells.append((k, t.value, None, None, "uri"))
            elif isinstance(t, Literal):
                datatype = None if t.lang or t.datatype.endswith("#string") else t.datatype
                cells.append((k, t.value, datatype, t.lang, "literal"))
            else:
                cells.append((k, t.value, None, None, "bnode"))
        rows.append(frozenset(cells))
    return sorted(rows, key=repr)


@pytest.mark.parametrize("query", QUERIES)
def test_the_same_rows_as_tern_query(sample_index, big_index, query):
    index = big_index if "big" in query else sample_index
    assert embedded_rows(index, query) == cli_rows(index, query)


def test_result_objects_are_the_clients(sample_index, tmp_path):
    index = tern.Index(str(sample_index))
    result = index.select("PREFIX ex: <http://example.org/birds/> SELECT ?b ?w WHERE { ?b a ex:Tern ; ex:wingspanCm ?w } ORDER BY ?w")
    assert isinstance(result, SolutionResult) and result.variables == ["b", "w"]
    rows = list(result)
    assert rows[0]["b"] == IRI("http://example.org/birds/arcticTern") and rows[0]["w"].to_python() == 80
    assert index.ask("ASK { ?s a <http://example.org/birds/Tern> }") is True
    triples = list(index.construct("CONSTRUCT WHERE { <http://example.org/birds/ana> ?p ?o }"))
    assert len(triples) == 3 and all(t.subject == IRI("http://example.org/birds/ana") for t in triples)
    frame = index.dataframe("SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY DESC(?n) LIMIT 2")
    assert list(frame.columns) == ["s", "n"] and frame["n"].tolist() == [14, 12]
    table = index.arrow("SELECT ?s ?o WHERE { ?s a ?o FILTER(isIRI(?s)) } LIMIT 4")
    # Typed: IRIs as dictionary strings, each beside its companion of misfits.
    assert table.num_rows == 4 and table.column_names == ["s", "s__term", "o", "o__term"]
    assert table.column("s")[0].as_py().startswith("http://")
    assert table.column("s__term").null_count == 4


def test_large_results_come_page_by_page(big_index):
    result = tern.Index(str(big_index)).select("SELECT ?s ?o WHERE { ?s <http://example.org/big/p0> ?o }")
    count = sum(1 for _ in result)
    assert count == 50_000 and len(result.stats.pages) > 1


def test_load_builds_an_index_and_errors_are_raised(tmp_path):
    assert tern.load(str(tmp_path / "birds"), [str(SAMPLE)]) == 145
    with pytest.raises(OSError):
        tern.load(str(tmp_path / "birds"), [str(SAMPLE)])  # exists, no force
    assert tern.load(str(tmp_path / "birds"), [str(SAMPLE)], force=True) == 145
    index = tern.Index(str(tmp_path / "birds"))
    with pytest.raises(ValueError, match="error at 1:"):
        index.select("SELECT * WHERE { ?s ?p }")
    with pytest.raises(OSError):
        tern.Index(str(tmp_path / "nowhere"))


def test_terms_made_by_the_extension_are_the_clients_terms(tmp_path):
    """The extension makes terms without running their constructors (it
    sets their slots): each must equal, hash, print and convert like the
    term the client's constructor makes, stay immutable, and triples must
    be the client's named tuples."""
    data = tmp_path / "kinds.ttl"
    data.write_text(
        '@prefix ex: <http://example.org/> .\n'
        'ex:s ex:p "plain", "Tagged"@EN-gb, "7"^^<http://www.w3.org/2001/XMLSchema#integer>, '
        '"x"^^ex:custom, _:b1, ex:o .\n'
    )
    tern.load(str(tmp_path / "kinds"), [str(data)])
    index = tern.Index(str(tmp_path / "kinds"))
    made = [row["o"] for row in index.select("SELECT ?o WHERE { ?s ?p ?o }")]
    expected = [
        Literal("plain"),
        Literal("Tagged", lang="en-GB"),
        Literal("7", "http://www.w3.org/2001/XMLSchema#integer"),
        Literal("x", "http://example.org/custom"),
        IRI("http://example.org/o"),
    ]
    for want in expected:
        got = next(t for t in made if t == want)
        assert type(got) is type(want) and hash(got) == hash(want) and repr(got) == repr(want)
        assert got.n3() == want.n3() and got.to_python() == want.to_python() and str(got) == str(want)
    blank = next(t for t in made if isinstance(t, BNode))
    assert blank == BNode(blank.value) and blank.n3() == "_:" + blank.value
    assert len(set(made)) == 6
    with pytest.raises(AttributeError):
        made[0].value = "changed"
    triples = list(index.construct("CONSTRUCT WHERE { ?s ?p ?o }"))
    assert all(isinstance(t, Triple) for t in triples) and len(triples) == 6
    assert {t.object for t in triples} == set(made) and triples[0].predicate == IRI("http://example.org/p")


def test_serve_from_python_answers_as_the_index_does(sample_index):
    """`Index.serve` runs the endpoint in this process: the HTTP client gets
    the rows the index gives in-process, the workbench answers, a second
    server on the same port is refused with the port named, and once
    stopped the port is free again."""
    import socket

    import requests
    from tern_client import Client

    index = tern.Index(str(sample_index))
    query = "PREFIX ex: <http://example.org/birds/> SELECT ?b ?w WHERE { ?b a ex:Tern ; ex:wingspanCm ?w } ORDER BY ?w"
    with index.serve(port=0, workers=2) as server:
        assert server.running and server.endpoint == f"http://127.0.0.1:{server.port}/sparql"
        over_http = list(Client(server.endpoint).select(query))
        assert over_http == list(index.select(query)) and len(over_http) == 3
        assert requests.get(server.url, timeout=10).status_code == 200
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{server.port}"):
            index.serve(port=server.port)
        port = server.port
    assert not server.running
    server.stop()  # stopping twice does nothing
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # free again


def test_a_writable_index_takes_updates_in_process_and_over_http(tmp_path):
    import requests

    tern.load(str(tmp_path / "w"), [str(SAMPLE)])
    index = tern.Index(str(tmp_path / "w"), writable=True)
    report = index.update("INSERT DATA { <http://example.org/a> <http://example.org/p> 1 }")
    assert report == {"operations": 1, "inserted": 1, "deleted": 0}
    with pytest.raises(ValueError):
        index.update("INSERT DATA { <http://example.org/a> }")
    with index.serve(port=0, update_token="s3cret") as server:
        answer = requests.post(
            server.endpoint, data={"update": "INSERT DATA { <http://example.org/b> <http://example.org/p> 2 }"},
            headers={"Authorization": "Bearer s3cret"}, timeout=10,
        )
        assert answer.status_code in (200, 204), answer.text
        refused = requests.post(server.endpoint, data={"update": "CLEAR ALL"}, timeout=10)
        assert refused.status_code in (401, 403)
    assert index.ask("ASK { <http://example.org/b> <http://example.org/p> 2 }")
    assert tern.Index(str(tmp_path / "w")).ask("ASK { <http://example.org/a> <http://example.org/p> 1 }")
