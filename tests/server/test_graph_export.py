"""CONSTRUCT and DESCRIBE results at size: the triples leave the engine as
rows of IDs and are written on all cores by forks of the graph writer, so
Turtle statements, JSON-LD node objects and RDF/XML descriptions are cut
between runs. Every format must still parse (rdflib) to exactly the
triples of the data; template blank nodes are fresh per solution; a triple
RDF/XML cannot write cuts the result with a clear error."""

import collections
import re

import pytest
import rdflib
import requests

from conftest import BIG_TRIPLES
from expected import graph_key

BIG = "http://example.org/big/"
# Two of the four triples of every subject, made by one solution each:
# Turtle groups them with ";", and the result spans many batches and
# parallel runs.
TWO_PREDICATES = (
    f"CONSTRUCT {{ ?s <{BIG}label> ?l ; <{BIG}knows> ?k }} "
    f"WHERE {{ ?s <{BIG}label> ?l ; <{BIG}knows> ?k }}"
)


def construct(server, query, accept, **params):
    r = requests.post(
        server.url,
        data={"query": query, **params},
        headers={"Accept": accept},
        timeout=300,
    )
    assert r.status_code == 200, r.text[:300]
    assert r.headers["content-type"].startswith(accept)
    return r


@pytest.fixture(scope="module")
def expected_two_predicates(big_nt):
    wanted = (f"<{BIG}label>", f"<{BIG}knows>")
    lines = [l for l in open(big_nt) if l.split(" ", 2)[1] in wanted]
    assert len(lines) == BIG_TRIPLES // 2
    g = rdflib.Graph().parse(data="".join(lines), format="nt")
    return graph_key(g)


@pytest.mark.parametrize(
    "accept,rdflib_format",
    [
        ("application/n-triples", "nt"),
        ("text/turtle", "turtle"),
        ("application/ld+json", "json-ld"),
        ('application/ld+json; profile="http://www.w3.org/ns/json-ld#compacted"', "json-ld"),
        ("application/rdf+xml", "xml"),
    ],
)
def test_large_construct_parses_to_the_data(big_server, expected_two_predicates, accept, rdflib_format):
    r = construct(big_server, TWO_PREDICATES, accept)
    g = rdflib.Graph().parse(data=r.content, format=rdflib_format)
    assert len(g) == BIG_TRIPLES // 2
    assert graph_key(g) == expected_two_predicates


def test_turtle_groups_a_subjects_triples(big_server):
    text = construct(big_server, TWO_PREDICATES, "text/turtle").text
    # Two triples per subject: nearly every statement has a ";".
    statements = text.count(" .\n")
    assert statements < BIG_TRIPLES // 4 * 1.05, statements
    assert text.count(" ;\n\t") > BIG_TRIPLES // 4 * 0.95


def test_the_data_s_own_namespace_gets_a_prefix(big_server):
    """The query declares no prefix, yet every IRI of the data is in one
    namespace: Turtle declares it (named after its path) and writes every
    IRI short; compacted JSON-LD puts it in its context, and writes plain
    strings and integers as bare JSON values."""
    query = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o FILTER(?s = <{BIG}s7>) }}"
    text = construct(big_server, query, "text/turtle").text
    assert f"@prefix big: <{BIG}> ." in text
    body = text.split("\n\n", 1)[1]
    assert "big:s7 " in body and "big:knows" in body and "big:p0 big:o" in body
    assert "<http://example.org/" not in body
    compacted = 'application/ld+json; profile="http://www.w3.org/ns/json-ld#compacted"'
    document = construct(big_server, query, compacted).json()
    assert document["@context"]["big"] == BIG
    (node,) = document["@graph"]
    assert node["@id"] == "big:s7"
    assert node["big:n"] == [30]
    assert node["big:p0"] == [{"@id": "big:o28"}]
    assert node["big:label"] == [{"@value": 'label 29 with "quotes", commas\tand tabs', "@language": "en"}]


def test_template_blank_nodes_are_fresh_per_solution(big_server):
    query = (
        f"CONSTRUCT {{ ?s <http://x/has> [ <http://x/n> ?n ] }} WHERE {{ ?s <{BIG}n> ?n }}"
    )
    text = construct(big_server, query, "application/n-triples").text
    lines = text.splitlines()
    solutions = BIG_TRIPLES // 4
    assert len(lines) == 2 * solutions
    labels = collections.Counter(re.findall(r"_:(\w+)", text))
    assert len(labels) == solutions
    assert set(labels.values()) == {2}
    # Not the label of any stored blank node (those are b0, b1, ...).
    assert all(label.startswith("c") for label in labels)
    g = rdflib.Graph().parse(data=construct(big_server, query, "text/turtle").content, format="turtle")
    assert len(g) == 2 * solutions


def test_large_describe_streams_every_description(big_server):
    query = f"DESCRIBE ?s WHERE {{ ?s <{BIG}p0> <{BIG}o5> }}"
    r = construct(big_server, query, "application/n-triples")
    g = rdflib.Graph().parse(data=r.content, format="nt")
    subjects = {s for s in g.subjects(rdflib.URIRef(f"{BIG}p0"), rdflib.URIRef(f"{BIG}o5"))}
    assert len(subjects) > 40
    # Each subject's four triples, and the blank node it knows has none.
    assert len(g) == 4 * len(subjects)


def test_rdfxml_cuts_a_result_it_cannot_write(big_server):
    """A predicate whose IRI ends in no XML name: a 406 when nothing was
    sent yet."""
    query = f"CONSTRUCT {{ ?s <http://x/1> ?o }} WHERE {{ ?s <{BIG}n> ?o }}"
    r = requests.post(
        big_server.url,
        data={"query": query},
        headers={"Accept": "application/rdf+xml"},
        timeout=300,
    )
    assert r.status_code == 406, r.text[:300]
    assert "local name" in r.text
