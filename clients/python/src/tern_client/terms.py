"""RDF terms as small immutable values, so that results need no RDF library.

A result row maps variable names to `IRI`, `BNode` or `Literal` (or `None`
when unbound). Terms compare by value, hash, print the way SPARQL CSV
prints them (`str`), render in N-Triples syntax (`n3`) and convert to
plain Python values (`to_python`).
"""

from __future__ import annotations

import abc
import datetime
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Dict, Optional, Tuple, Union

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


_set = object.__setattr__


class Term(abc.ABC):
    """Base of the three kinds of RDF term: immutable, compared by kind and
    value. Plain slotted classes rather than dataclasses, because results
    create one per cell and this keeps that cheap (~0.5 µs)."""

    __slots__ = ()
    _fields: Tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _key(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._key())

    def __repr__(self) -> str:
        args = ", ".join(repr(getattr(self, f)) for f in self._fields if getattr(self, f) is not None)
        return f"{type(self).__name__}({args})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), self._key())

    @abc.abstractmethod
    def n3(self) -> str:
        """The term in N-Triples syntax (also what SPARQL TSV uses)."""

    @abc.abstractmethod
    def to_python(self) -> Any:
        """The term as a plain Python value (see each kind)."""


class _OneString(Term):
    """A term that is a single string: an IRI or a blank node label.
    Specialized equality and hashing: results put terms in sets and Counters
    by the million."""

    __slots__ = ("value",)
    _fields = ("value",)
    value: str
    # Keeps an IRI and a blank node of the same text apart in hash tables.
    _salt = 0

    def __init__(self, value: str):
        _set(self, "value", value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.value == self.value  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.value) ^ self._salt


class IRI(_OneString):
    """An IRI; `to_python()` and `str()` give the IRI text."""

    __slots__ = ()

    def __str__(self) -> str:
        return self.value

    def n3(self) -> str:
        return f"<{self.value}>"

    def to_python(self) -> str:
        return self.value


class BNode(_OneString):
    """A blank node. `value` is its label without `_:`. Labels are the
    server's and only mean something within one result."""

    __slots__ = ()
    _salt = 0x5BD1E995

    def __str__(self) -> str:
        return "_:" + self.value

    def n3(self) -> str:
        return "_:" + self.value

    def to_python(self) -> str:
        return "_:" + self.value


class Literal(Term):
    """A literal: lexical `value`, full `datatype` IRI and `lang` tag.

    The datatype is always set, so that `Literal("a")` equals
    `Literal("a", XSD_STRING)` whichever syntax a result used: simple
    literals get xsd:string, language-tagged ones rdf:langString. Language
    tags are lower-cased, as they compare without case.
    """

    __slots__ = ("value", "datatype", "lang")
    _fields = ("value", "datatype", "lang")
    value: str
    datatype: str
    lang: Optional[str]

    def __init__(self, value: str, datatype: Optional[str] = None, lang: Optional[str] = None):
        _set(self, "value", value)
        if lang is not None:
            _set(self, "lang", lang.lower())
            _set(self, "datatype", RDF_LANG_STRING)
        else:
            _set(self, "lang", None)
            _set(self, "datatype", XSD_STRING if datatype is None else datatype)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Literal
            and other.value == self.value
            and other.datatype == self.datatype
            and other.lang == self.lang
        )

    def __hash__(self) -> int:
        return hash((self.value, self.datatype, self.lang))

    def __str__(self) -> str:
        return self.value

    def n3(self) -> str:
        text = '"' + escape_string(self.value) + '"'
        if self.lang is not None:
            return f"{text}@{self.lang}"
        if self.datatype == XSD_STRING:
            return text
        return f"{text}^^<{self.datatype}>"

    def to_python(self) -> Any:
        """int, Decimal, float, bool, date, datetime or time for those XSD
        datatypes; the lexical form (str) for strings, language-tagged and
        other literals, and for a lexical form that is not valid for its
        datatype (a result should never fail to convert)."""
        convert = _CONVERTERS.get(self.datatype)
        if convert is None:
            return self.value
        try:
            return convert(self.value.strip())
        except (ValueError, InvalidOperation, OverflowError):
            return self.value


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'[\\"\n\r\t]')


def escape_string(text: str) -> str:
    """Escapes a literal's text for N-Triples and TSV: tabs too, so a TSV
    cell never holds a raw separator."""
    return _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _boolean(text: str) -> bool:
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise ValueError(text)


def _integer(text: str) -> int:
    # int() accepts "1_000" and surrounding spaces; XSD does not.
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError(text)
    return int(text)


def _decimal(text: str) -> Decimal:
    if not re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)", text):
        raise ValueError(text)
    return Decimal(text)


def _double(text: str) -> float:
    if text in ("INF", "+INF"):
        return float("inf")
    if text == "-INF":
        return float("-inf")
    if text == "NaN":
        return float("nan")
    if not re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", text):
        raise ValueError(text)
    return float(text)


def _iso(text: str) -> str:
    """Adapts XSD's time zone and fractions to what `fromisoformat` reads on
    Python 3.9 (no `Z`, at most six fraction digits)."""
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", text)


def _date(text: str) -> datetime.date:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        raise ValueError(text)  # a time zone or a year beyond 9999
    return datetime.date.fromisoformat(text)


def _datetime(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(_iso(text))


def _time(text: str) -> datetime.time:
    return datetime.time.fromisoformat(_iso(text))


_INTEGER_TYPES = (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
    "negativeInteger", "nonPositiveInteger", "unsignedLong", "unsignedInt",
    "unsignedShort", "unsignedByte",
)
_CONVERTERS: Dict[str, Callable[[str], Any]] = {
    **{XSD + name: _integer for name in _INTEGER_TYPES},
    XSD + "decimal": _decimal,
    XSD + "double": _double,
    XSD + "float": _double,
    XSD + "boolean": _boolean,
    XSD + "date": _date,
    XSD + "dateTime": _datetime,
    XSD + "time": _time,
}

AnyTerm = Union[IRI, BNode, Literal]
