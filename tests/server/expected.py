"""Expected answers computed by rdflib's own SPARQL engine over the same
file, and term normalisation so results from different parsers compare."""

import functools

import rdflib
from rdflib import BNode, Literal, URIRef

from conftest import SAMPLE


@functools.lru_cache
def sample_graph() -> rdflib.Graph:
    g = rdflib.Graph()
    g.parse(SAMPLE, format="turtle")
    return g


def term_key(t):
    """A hashable description of a term; blank node labels are not compared."""
    if t is None:
        return None
    if isinstance(t, BNode):
        return ("bnode",)
    if isinstance(t, URIRef):
        return ("iri", str(t))
    if isinstance(t, Literal):
        dt = str(t.datatype) if t.datatype else None
        if dt == "http://www.w3.org/2001/XMLSchema#string":
            dt = None
        return ("literal", str(t), dt, t.language)
    raise TypeError(t)


def rows_key(rows):
    return sorted((tuple(term_key(t) for t in r) for r in rows), key=repr)


def expected_select(query: str):
    result = sample_graph().query(query)
    variables = [str(v) for v in result.vars]
    return variables, rows_key([tuple(row) for row in result])


def graph_key(g: rdflib.Graph):
    return sorted(((term_key(s), term_key(p), term_key(o)) for s, p, o in g), key=repr)


def expected_graph(query: str):
    return graph_key(sample_graph().query(query).graph)
