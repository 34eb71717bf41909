"""HTTP for the client: one POST per page, 503s waited out a bounded number
of times, and every failure turned into a `TernError`.

Retrying is safe for first pages and continuation pages alike: the server
answers 503 before it admits the query, so a refused request has neither
started the query nor used up its token.
"""

from __future__ import annotations

import time
from typing import Iterator, List, Optional, Tuple, Union

import requests

from . import __version__
from .errors import (
    IncompleteResult,
    QueryTimeout,
    ServerBusy,
    TernConnectionError,
    error_for_status,
)

Params = List[Tuple[str, str]]
Timeout = Union[float, Tuple[float, float], None]

# Errors while a body is read: the server cut the transfer.
_CUT = (
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ConnectionError,
    requests.exceptions.ContentDecodingError,
)


class Transport:
    """Posts forms to one endpoint with one `requests.Session`."""

    def __init__(
        self,
        endpoint: str,
        timeout: Timeout,
        session: Optional[requests.Session],
        retries: int,
        max_retry_wait: float,
    ):
        self.endpoint = endpoint
        self.timeout = timeout
        self.own_session = session is None
        self.session = session if session is not None else requests.Session()
        self.retries = retries
        self.max_retry_wait = max_retry_wait

    def post(self, data: Params, accept: str) -> Tuple[requests.Response, float, int]:
        """The response (body not read yet), seconds to its headers, and the
        503s retried before it. Raises a TernError for any error status."""
        headers = {"Accept": accept, "User-Agent": f"tern-client/{__version__}"}
        retried = 0
        reconnected = False
        while True:
            started = time.monotonic()
            try:
                response = self.session.post(
                    self.endpoint, data=data, headers=headers, timeout=self.timeout, stream=True
                )
            except requests.exceptions.Timeout as e:
                raise QueryTimeout(f"no response from {self.endpoint} within {self.timeout} s: {e}") from None
            except requests.exceptions.ConnectionError as e:
                # A kept-alive connection the server closed meanwhile fails
                # before the request is read; queries are read-only, so
                # sending once more on a fresh connection is harmless.
                if not reconnected:
                    reconnected = True
                    continue
                raise TernConnectionError(f"cannot reach {self.endpoint}: {e}") from None
            except requests.exceptions.RequestException as e:
                raise TernConnectionError(f"cannot reach {self.endpoint}: {e}") from None
            seconds = time.monotonic() - started
            if response.status_code < 400:
                return response, seconds, retried
            message = read_all(response).decode("utf-8", "replace").strip()
            if response.status_code == 503 and retried < self.retries:
                retried += 1
                time.sleep(self._retry_after(response))
                continue
            if response.status_code == 503:
                raise ServerBusy(f"{message} (after {retried} retries)", 503)
            raise error_for_status(response.status_code, message or response.reason)

    def _retry_after(self, response: requests.Response) -> float:
        """Retry-After in seconds (an HTTP date counts as 1 s), capped."""
        try:
            wait = float(response.headers.get("Retry-After", "1"))
        except ValueError:
            wait = 1.0
        return min(max(wait, 0.0), self.max_retry_wait)

    def close(self) -> None:
        if self.own_session:
            self.session.close()


def read_all(response: requests.Response) -> bytes:
    """The whole body; a cut transfer raises IncompleteResult."""
    try:
        return response.content
    except _CUT as e:
        response.close()  # never hand the broken connection back to the pool
        raise IncompleteResult(f"the result was cut: {e}") from None


def iter_lines(response: requests.Response) -> Iterator[bytes]:
    """The body's lines as they arrive (without their newline); a cut
    transfer raises IncompleteResult after the last complete line."""
    pending = b""
    try:
        for chunk in response.iter_content(chunk_size=1 << 16):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            yield from lines
    except _CUT as e:
        raise IncompleteResult(f"the result was cut: {e}") from None
    finally:
        response.close()
    if pending:
        yield pending
