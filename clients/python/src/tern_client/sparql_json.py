"""Reading SPARQL 1.1 Query Results JSON pages, with Tern's two additions:
a top-level `"next"` (the continuation token) and a top-level `"error"`
(a result cut after it started)."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from .errors import IncompleteResult, ParseError
from .terms import IRI, AnyTerm, BNode, Literal

Row = Dict[str, Optional[AnyTerm]]


@dataclass
class SolutionsPage:
    """One decoded page: the variables, the rows (every variable a key,
    None when unbound), the ASK answer, and the token in the body."""

    variables: List[str]
    rows: List[Row]
    boolean: Optional[bool]
    next: Optional[str]


def term(value: Mapping[str, Any]) -> AnyTerm:
    """One RDF term of a binding."""
    try:
        kind = value["type"]
        text = value["value"]
    except (KeyError, TypeError):
        raise ParseError(f"SPARQL JSON term without type or value: {value!r}") from None
    if kind == "uri":
        return IRI(text)
    if kind == "literal" or kind == "typed-literal":
        return Literal(text, value.get("datatype"), value.get("xml:lang"))
    if kind == "bnode":
        return BNode(text)
    raise ParseError(f"SPARQL JSON term of unknown type {kind!r}")


def parse_page(body: bytes) -> SolutionsPage:
    """Decodes a page; raises IncompleteResult when the server reported in
    band that the result was cut.

    The cyclic garbage collector is paused meanwhile: a page creates
    millions of objects but no cycles, and the collections their count
    would trigger otherwise double the time of a large page.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return _parse_page(body)
    finally:
        if paused:
            gc.enable()


def _parse_page(body: bytes) -> SolutionsPage:
    try:
        doc = json.loads(body)
    except ValueError as e:
        raise ParseError(f"malformed SPARQL JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ParseError("SPARQL JSON result is not an object")
    error = doc.get("error")
    if isinstance(error, dict):
        raise IncompleteResult(str(error.get("message", "the result was cut")))
    next_token = doc.get("next")
    if "boolean" in doc:
        return SolutionsPage([], [], bool(doc["boolean"]), next_token)
    try:
        variables = list(doc["head"].get("vars", []))
        bindings = doc["results"]["bindings"]
    except (KeyError, AttributeError, TypeError):
        raise ParseError("SPARQL JSON result without head.vars or results.bindings") from None
    rows = [{v: term(b[v]) if v in b else None for v in variables} for b in bindings]
    return SolutionsPage(variables, rows, None, next_token)
