"""Inference through the protocol: the `inference` and `sameas` request
parameters, the `FROM <urn:tern:inference:…>` marker, the server default
(`--inference`), bad values answered 400 with the reason, and paged
queries that keep their regime from page to page."""

import pytest
import requests

from conftest import Server, load

DATA = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:Professor rdfs:subClassOf ex:Faculty .
ex:Faculty rdfs:subClassOf ex:Person .
ex:Student rdfs:subClassOf ex:Person .
ex:teaches rdfs:domain ex:Faculty .
ex:headOf rdfs:subPropertyOf ex:worksFor .
ex:worksFor owl:inverseOf ex:employs .
ex:partOf a owl:TransitiveProperty .
ex:alice a ex:Professor ; ex:headOf ex:cs .
ex:bob ex:teaches ex:c1 .
ex:carol a ex:Student .
ex:cs ex:partOf ex:sci . ex:sci ex:partOf ex:uni .
ex:uni ex:employs ex:dave .
ex:al owl:sameAs ex:alice .
"""
# Enough students that a paged query with a tiny page size spans pages.
STUDENTS = 50_000
EX = "http://example.org/"
PERSONS = "PREFIX ex: <http://example.org/> SELECT ?x WHERE { ?x a ex:Person }"


@pytest.fixture(scope="module")
def index(workdir):
    path = workdir / "inference.ttl"
    students = "".join(f"ex:s{i} a ex:Student .\n" for i in range(STUDENTS))
    path.write_text(DATA + students)
    return load(workdir / "inference", str(path))


@pytest.fixture(scope="module")
def plain(index):
    s = Server(index)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def rdfs_by_default(index):
    s = Server(index, "--inference", "rdfs")
    yield s
    s.stop()


def names(url: str, query: str, **params) -> set:
    r = requests.post(url, data={"query": query, **params},
                      headers={"Accept": "application/sparql-results+json"}, timeout=60)
    assert r.status_code == 200, r.text
    doc = r.json()
    var = doc["head"]["vars"][0]
    return {b[var]["value"].removeprefix(EX) for b in doc["results"]["bindings"]}


def test_without_inference_only_stored_triples_answer(plain):
    assert names(plain.url, PERSONS) == set()


def test_the_request_parameter_chooses_the_regime(plain):
    persons = names(plain.url, PERSONS, inference="rdfs")
    assert {"alice", "bob", "carol", "s0"} <= persons
    assert len(persons) == 3 + STUDENTS
    # owl-rl adds the sameAs synonym of alice.
    assert names(plain.url, PERSONS, inference="owl-rl") == persons | {"al"}
    # Canonical: one name per sameAs class, the least in N-Triples order.
    canonical = names(plain.url, PERSONS, inference="owl-rl", sameas="canonical")
    assert canonical == (persons - {"alice"}) | {"al"}


def test_the_query_text_marker_chooses_the_regime(plain):
    query = ("PREFIX ex: <http://example.org/> SELECT ?y FROM <urn:tern:inference:owl-rl> "
             "WHERE { ex:cs ex:partOf ?y }")
    assert names(plain.url, query) == {"sci", "uni"}
    employer = ("PREFIX ex: <http://example.org/> SELECT ?y FROM <urn:tern:inference:owl-rl> "
                "WHERE { ex:dave ex:worksFor ?y }")
    assert names(plain.url, employer) == {"uni"}
    # The request's parameter wins over the marker.
    assert names(plain.url, query, inference="none") == {"sci"}


def test_the_server_default_applies_and_a_request_can_turn_it_off(rdfs_by_default):
    assert len(names(rdfs_by_default.url, PERSONS)) == 3 + STUDENTS
    assert names(rdfs_by_default.url, PERSONS, inference="none") == set()


@pytest.mark.parametrize("params,says", [
    ({"inference": "rdfs++"}, "unknown inference mode"),
    ({"sameas": "some"}, "unknown sameAs answers"),
])
def test_bad_settings_are_400_with_the_reason(plain, params, says):
    r = requests.post(plain.url, data={"query": PERSONS, **params}, timeout=30)
    assert r.status_code == 400
    assert says in r.text


def test_an_unknown_marker_is_400(plain):
    query = "SELECT * FROM <urn:tern:inferense:rdfs> WHERE { ?s ?p ?o }"
    r = requests.post(plain.url, data={"query": query}, timeout=30)
    assert r.status_code == 400
    assert "urn:tern:inference" in r.text


def test_paged_queries_keep_their_regime(plain):
    """Every page after the first resumes from its token alone, which must
    carry the regime: the pages together give the unpaged answers."""
    whole = names(plain.url, PERSONS, inference="rdfs")
    rows, token, pages = set(), None, 0
    while True:
        data = {"next": token} if token else {"query": PERSONS, "inference": "rdfs"}
        r = requests.post(plain.url, data={**data, "page-rows": "500", "quantum": "1s"},
                          headers={"Accept": "application/sparql-results+json"}, timeout=60)
        assert r.status_code == 200, r.text
        pages += 1
        rows |= {b["x"]["value"].removeprefix(EX) for b in r.json()["results"]["bindings"]}
        token = r.headers.get("tern-next")
        if token is None:
            break
    assert pages > 1
    assert rows == whole
