"""Real SPARQL clients: SPARQLWrapper and rdflib's SPARQLStore."""

import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, JSONLD, N3, TURTLE, XML, SPARQLWrapper

from expected import expected_graph, expected_select, graph_key, rows_key

QUERY = """PREFIX ex: <http://example.org/birds/>
SELECT ?bird ?span WHERE { ?bird ex:wingspanCm ?span }"""


def wrapper(server, method: str, query: str, return_format) -> SPARQLWrapper:
    sw = SPARQLWrapper(server.url)
    sw.setMethod(method)
    sw.setQuery(query)
    sw.setReturnFormat(return_format)
    return sw


def test_sparqlwrapper_json_xml_csv(server):
    for method in ["GET", "POST"]:
        sw = wrapper(server, method, QUERY, JSON)
        result = sw.queryAndConvert()
        assert result["head"]["vars"] == ["bird", "span"]
        spans = sorted(int(b["span"]["value"]) for b in result["results"]["bindings"])
        _, expected = expected_select(QUERY)
        assert spans == sorted(int(row[1][1]) for row in expected)
    sw.setReturnFormat(XML)
    doc = sw.queryAndConvert()
    assert len(doc.getElementsByTagName("result")) == len(spans)
    sw.setReturnFormat(CSV)
    text = sw.queryAndConvert().decode()
    assert text.startswith("bird,span\r\n")


def test_sparqlwrapper_construct(server):
    q = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    sw = SPARQLWrapper(server.url)
    sw.setQuery(q)
    sw.setReturnFormat(TURTLE)
    data = sw.queryAndConvert()
    g = rdflib.Graph().parse(data=data, format="turtle")
    assert graph_key(g) == expected_graph(q)


def test_sparqlwrapper_n3_and_json_ld(server):
    """SPARQLWrapper sends format=n3 / format=json-ld with an Accept that
    fits: N3 answered as Turtle (a subset of N3), JSON-LD as JSON-LD."""
    q = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    for method in ["GET", "POST"]:
        sw = wrapper(server, method, q, N3)
        g = sw.queryAndConvert()
        g = g if isinstance(g, rdflib.Graph) else rdflib.Graph().parse(data=g, format="n3")
        assert graph_key(g) == expected_graph(q)
        sw.setReturnFormat(JSONLD)
        g = sw.queryAndConvert()
        g = g if isinstance(g, rdflib.Graph) else rdflib.Graph().parse(data=g, format="json-ld")
        assert graph_key(g) == expected_graph(q)


def test_rdflib_sparqlstore(server):
    store = SPARQLStore(server.url, returnFormat="json")
    g = rdflib.Graph(store=store)
    rows = list(g.query(QUERY))
    _, expected = expected_select(QUERY)
    assert rows_key([tuple(r) for r in rows]) == expected
    assert bool(g.query("ASK { ?s ?p ?o }").askAnswer)
    # Triple pattern access goes through the endpoint too.
    ex = rdflib.Namespace("http://example.org/birds/")
    assert (ex.arcticTern, ex.wingspanCm, rdflib.Literal(80)) in g
