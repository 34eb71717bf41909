"""A Python client for Tern's SPARQL endpoint.

`Client(endpoint).select(query)` yields rows while following the server's
continuation tokens; see the README for the rest.
"""

__version__ = "0.1.0"

from .client import Client  # noqa: E402
from .errors import (  # noqa: E402
    IncompleteResult,
    ParseError,
    QueryError,
    QueryFormError,
    QueryTimeout,
    ResultTooLarge,
    ServerBusy,
    TernConnectionError,
    TernError,
    TokenGone,
)
from .ntriples import Triple  # noqa: E402
from .paging import GraphResult, PagedResult, PageStats, ResultStats, SolutionResult  # noqa: E402
from .terms import IRI, BNode, Literal, Term  # noqa: E402

__all__ = [
    "Client",
    "TernError",
    "QueryError",
    "TokenGone",
    "ServerBusy",
    "QueryTimeout",
    "ResultTooLarge",
    "IncompleteResult",
    "QueryFormError",
    "TernConnectionError",
    "ParseError",
    "IRI",
    "BNode",
    "Literal",
    "Term",
    "Triple",
    "PagedResult",
    "SolutionResult",
    "GraphResult",
    "PageStats",
    "ResultStats",
]
