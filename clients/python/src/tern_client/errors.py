"""Exceptions, one class per thing a caller may want to handle differently.

Everything the client raises for a failed query derives from `TernError`,
so `except TernError` catches them all; the subclasses say what to do next
(fix the query, run it again, wait, ask for less).
"""

from __future__ import annotations

from typing import Optional


class TernError(Exception):
    """A query failed. `status` is the HTTP status when the server answered,
    `message` the server's (or the client's) explanation."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message if status is None else f"{status}: {message}")
        self.message = message
        self.status = status


class QueryError(TernError):
    """400: the query is malformed (the message carries the parser's
    line:column), a parameter is bad, or a continuation token is not valid
    here (tampered with, signed with another key, or for another index)."""


class TokenGone(TernError):
    """410: a continuation token expired, or the query's intermediate state
    lives on another server or was evicted. The query must be run again
    from the start; rows already received would be received again."""


class ServerBusy(TernError):
    """503: the server's queue stayed full through all retries."""


class QueryTimeout(TernError):
    """504 from the server, or no response within the client's timeout."""


class ResultTooLarge(TernError):
    """507: the query went over its memory budget on the server."""


class IncompleteResult(TernError):
    """A result was cut after it started (the server reported an error in
    band, or the transfer broke): the rows received are not all of them."""


class QueryFormError(TernError, ValueError):
    """The query's form does not fit the method: `select()` on a
    CONSTRUCT query, `ask()` on a SELECT query, and so on."""


class TernConnectionError(TernError):
    """The endpoint could not be reached or the connection failed."""


class ParseError(TernError):
    """A response body was not valid in its own format."""


_BY_STATUS = {
    400: QueryError,
    410: TokenGone,
    503: ServerBusy,
    504: QueryTimeout,
    507: ResultTooLarge,
}


def error_for_status(status: int, message: str) -> TernError:
    """The exception for an HTTP error status and the server's message."""
    return _BY_STATUS.get(status, TernError)(message, status)
