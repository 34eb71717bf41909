"""An N-Triples reader for CONSTRUCT and DESCRIBE pages.

The client asks for N-Triples because it is line-based: triples can be
yielded while a page is still arriving, whatever its size, and one regular
expression per line reads it without an RDF library.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, NamedTuple, Union

from .errors import ParseError
from .terms import IRI, BNode, Literal

_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_IRI = rf"<((?:[^\x00-\x20<>\"{{}}|^`\\]|{_UCHAR})*)>"
# PN_CHARS approximated as ASCII letters, digits, '_', '-' and any non-ASCII.
_BNODE = r"_:([A-Za-z0-9_\u0080-\U0010FFFF](?:[A-Za-z0-9_\-.\u0080-\U0010FFFF]*[A-Za-z0-9_\-\u0080-\U0010FFFF])?)"
_STRING = rf"\"((?:[^\"\\\n\r]|\\[tbnrf\"'\\]|{_UCHAR})*)\""
_LANG = r"@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)"
_LINE = re.compile(
    rf"[ \t]*(?:"
    rf"(?:{_IRI}|{_BNODE})[ \t]*"  # subject: groups 1, 2
    rf"{_IRI}[ \t]*"  # predicate: group 3
    rf"(?:{_IRI}|{_BNODE}|{_STRING}(?:\^\^{_IRI}|{_LANG})?)"  # object: groups 4-8
    rf"[ \t]*\.[ \t]*)?(?:#.*)?"
)
_ESCAPE = re.compile(rf"\\[tbnrf\"'\\]|{_UCHAR}")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class Triple(NamedTuple):
    subject: Union[IRI, BNode]
    predicate: IRI
    object: Union[IRI, BNode, Literal]


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(
        lambda m: _ECHAR[m.group(0)[1]] if len(m.group(0)) == 2 else chr(int(m.group(0)[2:], 16)),
        text,
    )


def parse_line(line: str, number: int = 0) -> Union[Triple, None]:
    """The triple on one line, or None for a blank or comment line."""
    m = _LINE.fullmatch(line)
    if m is None:
        raise ParseError(f"N-Triples line {number}: cannot read {line[:200]!r}")
    s_iri, s_bnode, p, o_iri, o_bnode, o_text, o_type, o_lang = m.groups()
    if p is None:
        return None
    subject: Union[IRI, BNode] = IRI(_unescape(s_iri)) if s_iri is not None else BNode(s_bnode)
    obj: Union[IRI, BNode, Literal]
    if o_iri is not None:
        obj = IRI(_unescape(o_iri))
    elif o_bnode is not None:
        obj = BNode(o_bnode)
    else:
        obj = Literal(
            _unescape(o_text),
            _unescape(o_type) if o_type is not None else None,
            o_lang,
        )
    return Triple(subject, IRI(_unescape(p)), obj)


def parse_lines(lines: Iterable[str]) -> Iterator[Triple]:
    """The triples of N-Triples text given line by line."""
    for number, line in enumerate(lines, 1):
        triple = parse_line(line.rstrip("\r\n"), number)
        if triple is not None:
            yield triple


def parse(text: str) -> Iterator[Triple]:
    """The triples of an N-Triples document."""
    return parse_lines(text.split("\n"))
