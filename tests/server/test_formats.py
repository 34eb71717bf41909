"""Every result format, parsed back by a real parser and compared with what
rdflib computes for the same query over the same data."""

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
import rdflib
import requests
from rdflib import BNode, Literal, URIRef

from expected import expected_graph, expected_select, graph_key, rows_key

SELECT = """PREFIX ex: <http://example.org/birds/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?bird ?label ?span ?note WHERE {
  ?bird a ex:Tern ; rdfs:label ?label .
  OPTIONAL { ?bird ex:wingspanCm ?span }
  OPTIONAL { ?bird rdfs:comment ?note }
}"""

ALL_TRIPLES = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"

CONSTRUCT = """PREFIX ex: <http://example.org/birds/>
CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"""


def fetch(server, query, accept=None, **params):
    headers = {"Accept": accept} if accept else {}
    r = requests.get(server.url, params={"query": query, **params}, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    return r


def parse_json(data):
    doc = json.loads(data)
    variables = doc["head"]["vars"]

    def term(b):
        if b is None:
            return None
        if b["type"] == "uri":
            return URIRef(b["value"])
        if b["type"] == "bnode":
            return BNode(b["value"])
        return Literal(b["value"], lang=b.get("xml:lang"), datatype=b.get("datatype"))

    rows = [[term(row.get(v)) for v in variables] for row in doc["results"]["bindings"]]
    return variables, rows


def parse_xml(data):
    ns = "{http://www.w3.org/2005/sparql-results#}"
    root = ET.fromstring(data)
    variables = [v.get("name") for v in root.find(f"{ns}head")]
    rows = []
    for result in root.find(f"{ns}results"):
        values = {}
        for binding in result:
            (node,) = list(binding)
            tag = node.tag[len(ns):]
            if tag == "uri":
                values[binding.get("name")] = URIRef(node.text)
            elif tag == "bnode":
                values[binding.get("name")] = BNode(node.text)
            else:
                values[binding.get("name")] = Literal(
                    node.text or "",
                    lang=node.get("{http://www.w3.org/XML/1998/namespace}lang"),
                    datatype=node.get("datatype"),
                )
        rows.append([values.get(v) for v in variables])
    return variables, rows


def parse_tsv(data):
    """TSV terms are N-Triples terms: let rdflib's N-Triples parser read them."""
    lines = data.decode().split("\n")
    variables = [v[1:] for v in lines[0].split("\t")]
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        row = []
        for field in line.split("\t"):
            if not field:
                row.append(None)
                continue
            g = rdflib.Graph()
            g.parse(data=f"<http://x/s> <http://x/p> {field.replace(chr(92) + 't', chr(92) + 'u0009')} .\n", format="nt")
            (obj,) = list(g.objects())
            row.append(obj)
        rows.append(row)
    return variables, rows


@pytest.mark.parametrize(
    "accept,parse",
    [
        ("application/sparql-results+json", parse_json),
        ("application/sparql-results+xml", parse_xml),
        ("text/tab-separated-values", parse_tsv),
    ],
)
@pytest.mark.parametrize("query", [SELECT, ALL_TRIPLES])
def test_select_formats_match_rdflib(server, accept, parse, query):
    r = fetch(server, query, accept)
    assert r.headers["content-type"].startswith(accept)
    variables, rows = parse(r.content)
    expected_vars, expected_rows = expected_select(query)
    assert variables == expected_vars
    assert rows_key(rows) == expected_rows


def test_csv_matches_rdflib_values(server):
    r = fetch(server, SELECT, "text/csv")
    assert r.headers["content-type"].startswith("text/csv")
    reader = csv.reader(io.StringIO(r.content.decode(), newline=""))
    header, *rows = list(reader)
    expected_vars, expected_rows = expected_select(SELECT)
    assert header == expected_vars
    # CSV keeps values only: compare lexical forms and IRIs.
    plain = lambda key: "" if key is None else key[1]
    want = sorted(tuple(plain(k) for k in row) for row in expected_rows)
    assert sorted(tuple(r) for r in rows) == want
    assert r.content.endswith(b"\r\n")


def test_format_parameter_overrides_accept(server):
    r = fetch(server, SELECT, "text/html", format="csv")
    assert r.headers["content-type"].startswith("text/csv")
    r = fetch(server, SELECT, None, format="application/sparql-results+xml")
    assert r.headers["content-type"].startswith("application/sparql-results+xml")


def test_ask_in_json_and_xml(server):
    q = "PREFIX ex: <http://example.org/birds/> ASK { ex:arcticTern ex:wingspanCm 80 }"
    assert fetch(server, q, "application/sparql-results+json").json() == {"head": {}, "boolean": True}
    r = fetch(server, "ASK { <http://nothing> ?p ?o }", "application/sparql-results+xml")
    root = ET.fromstring(r.content)
    assert root.find("{http://www.w3.org/2005/sparql-results#}boolean").text == "false"


@pytest.mark.parametrize(
    "accept,rdflib_format",
    [
        ("text/turtle", "turtle"),
        ("application/n-triples", "nt"),
        ("application/n-quads", "nquads"),
        ("application/rdf+xml", "xml"),
        ("application/ld+json", "json-ld"),
        ('application/ld+json; profile="http://www.w3.org/ns/json-ld#compacted"', "json-ld"),
    ],
)
def test_construct_formats_match_rdflib(server, accept, rdflib_format):
    r = fetch(server, CONSTRUCT, accept)
    assert r.headers["content-type"].startswith(accept)
    if rdflib_format == "nquads":
        ds = rdflib.Dataset()
        ds.parse(data=r.content, format="nquads")
        g = rdflib.Graph()
        for s, p, o, _ in ds.quads():
            g.add((s, p, o))
    else:
        g = rdflib.Graph()
        g.parse(data=r.content, format=rdflib_format)
    assert graph_key(g) == expected_graph(CONSTRUCT)


def test_turtle_is_compact_with_query_prefixes(server):
    text = fetch(server, CONSTRUCT, "text/turtle").text
    assert "@prefix ex: <http://example.org/birds/> ." in text
    assert "\nex:arcticTern " in text and "\ta ex:Tern" in text + "\nex:arcticTern a ex:Tern"
    assert " ;\n\t" in text
    assert " ,\n" in text
    assert "<http://example.org/birds/arcticTern>" not in text


def test_describe(server):
    r = fetch(server, "DESCRIBE <http://example.org/birds/arcticTern>", "text/turtle")
    g = rdflib.Graph().parse(data=r.content, format="turtle")
    assert (URIRef("http://example.org/birds/arcticTern"), URIRef("http://example.org/birds/wingspanCm"), Literal(80)) in g


def test_arrow_stream(server):
    """Typed columns and their companions give back exactly the expected
    rows (test_arrow_types.py checks every type)."""
    import pyarrow.ipc
    from test_arrow_types import terms_of_table

    r = fetch(server, SELECT, "application/vnd.apache.arrow.stream")
    assert r.headers["content-type"] == "application/vnd.apache.arrow.stream"
    table = pyarrow.ipc.open_stream(r.content).read_all()
    expected_vars, expected_rows = expected_select(SELECT)
    variables, rows = terms_of_table(table)
    assert variables == expected_vars
    lines = ["\t".join("?" + v for v in variables)]
    lines += ["\t".join(cell or "" for cell in row) for row in rows]
    _, parsed = parse_tsv(("\n".join(lines) + "\n").encode())
    assert rows_key(parsed) == expected_rows


def test_service_description(server):
    r = requests.get(server.url, headers={"Accept": "text/turtle"}, timeout=10)
    assert r.status_code == 200
    g = rdflib.Graph().parse(data=r.content, format="turtle")
    SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
    (service,) = list(g.subjects(rdflib.RDF.type, SD.Service))
    assert (service, SD.endpoint, URIRef(server.url)) in g
    assert (service, SD.supportedLanguage, SD.SPARQL11Query) in g
    assert (service, SD.resultFormat, URIRef("http://www.w3.org/ns/formats/SPARQL_Results_JSON")) in g
