"""Following continuation tokens: a result as one lazy iterator over pages.

The server answers a paged query one quantum of work at a time; each page
but the last carries a token for the next one. `PagedResult` hides that:
it yields the items of the page at hand and asks for the next page only
when the caller wants an item beyond it, so a caller that stops early
never makes the server do more work, and memory holds one page at most.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar

from .ntriples import Triple

T = TypeVar("T")


def _int(headers: Mapping[str, str], name: str) -> Optional[int]:
    value = headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _float(headers: Mapping[str, str], name: str) -> Optional[float]:
    value = headers.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class PageStats:
    """What one page cost, from the server's response headers (None when
    the server did not send the figure) and the client's own counts."""

    rows: int = 0
    """Items (rows or triples) in this page."""
    bytes: int = 0
    """Body bytes of the page after decompression."""
    token_bytes: Optional[int] = None
    rows_before: Optional[int] = None
    """Rows of the earlier pages, as the server counted them."""
    suspend_us: Optional[int] = None
    resume_us: Optional[int] = None
    queue_ms: Optional[float] = None
    parse_ms: Optional[float] = None
    plan_ms: Optional[float] = None
    seconds: float = 0.0
    """Time from sending the request to the response's headers."""
    retries: int = 0
    """503 answers waited out and retried before this page came."""

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], seconds: float) -> "PageStats":
        return cls(
            token_bytes=_int(headers, "Tern-Token-Bytes"),
            rows_before=_int(headers, "Tern-Rows-Before"),
            suspend_us=_int(headers, "Tern-Suspend-Us"),
            resume_us=_int(headers, "Tern-Resume-Us"),
            queue_ms=_float(headers, "Tern-Queue-Ms"),
            parse_ms=_float(headers, "Tern-Parse-Ms"),
            plan_ms=_float(headers, "Tern-Plan-Ms"),
            seconds=seconds,
        )


@dataclass
class ResultStats:
    """The pages of one result so far, and their totals."""

    pages: List[PageStats] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        return len(self.pages)

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.pages)

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.pages)

    @property
    def token_bytes(self) -> int:
        """Bytes of all tokens received (each was also sent back once)."""
        return sum(p.token_bytes or 0 for p in self.pages)

    @property
    def max_token_bytes(self) -> int:
        return max((p.token_bytes or 0 for p in self.pages), default=0)

    @property
    def retries(self) -> int:
        return sum(p.retries for p in self.pages)

    @property
    def suspend_us(self) -> int:
        return sum(p.suspend_us or 0 for p in self.pages)

    @property
    def resume_us(self) -> int:
        return sum(p.resume_us or 0 for p in self.pages)

    def summary(self) -> Dict[str, Any]:
        """The totals as a JSON-ready dict (what the CLI's --stats prints)."""
        return {
            "pages": self.page_count,
            "rows": self.rows,
            "bytes": self.bytes,
            "token_bytes": self.token_bytes,
            "max_token_bytes": self.max_token_bytes,
            "suspend_us": self.suspend_us,
            "resume_us": self.resume_us,
            "retries": self.retries,
            "seconds": round(sum(p.seconds for p in self.pages), 6),
        }


class Page(Generic[T]):
    """A page being read: its items, and the token that is known once the
    items are (for formats that carry it in the body, at the end)."""

    def __init__(self, items: Iterator[T], stats: PageStats, next_token: Callable[[], Optional[str]]):
        self.items = items
        self.stats = stats
        self.next_token = next_token


_END = object()


class PagedResult(Generic[T]):
    """An iterator over a whole result, page after page.

    Iterate it for items, or call `iter_pages()` for lists of them, one
    per page (to store a page and then its `token`, say). `stats` grows as
    pages arrive. `close()` (or leaving a `with` block) drops the
    connection of a page not read to its end; the server keeps nothing for
    an abandoned paged query beyond what its stash expires by itself.
    """

    def __init__(self, first: Page[T], fetch: Callable[[str], Page[T]]):
        self.stats = ResultStats()
        self._page = first
        self._fetch = fetch
        self._done = False
        self.stats.pages.append(first.stats)

    @property
    def token(self) -> Optional[str]:
        """The token of the page after the one being read (None on the last
        page): `Client.resume(token)` continues from there, so a caller
        that saves it once a page's rows are stored can pick up later."""
        return self._page.next_token()

    def __iter__(self) -> Iterator[T]:
        # A generator rather than `self`: `for` and `list()` then resume a
        # frame per item instead of calling `__next__`, half the cost per row.
        while True:
            page = self._page
            stats = page.stats
            for item in page.items:
                stats.rows += 1
                yield item
                if self._done:  # closed while being read
                    return
            if not self._advance():
                return

    def __next__(self) -> T:
        while True:
            item = next(self._page.items, _END)
            if item is not _END:
                self._page.stats.rows += 1
                return item  # type: ignore[return-value]
            if not self._advance():
                raise StopIteration

    def iter_pages(self) -> Iterator[List[T]]:
        """The rest of the page being read (unless it was read to its end),
        then each following page, as lists."""
        fresh = self._page.stats.rows == 0
        while True:
            rest = list(self._page.items)
            self._page.stats.rows += len(rest)
            if rest or fresh:
                yield rest
            if not self._advance():
                return
            fresh = True

    def _advance(self) -> bool:
        """Fetches the next page; False when there is none."""
        if self._done:
            return False
        token = self._page.next_token()
        if token is None:
            self._done = True
            return False
        self._page = self._fetch(token)
        self.stats.pages.append(self._page.stats)
        return True

    def close(self) -> None:
        self._done = True
        close = getattr(self._page.items, "close", None)
        if close is not None:
            close()
        self._page.items = iter(())

    def __enter__(self) -> "PagedResult[T]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SolutionResult(PagedResult[Dict[str, Any]]):
    """The rows of a SELECT query: dicts from each of `variables` (in the
    query's order) to an RDF term, or None when unbound."""

    def __init__(self, variables: List[str], first: Page[Dict[str, Any]], fetch: Callable[[str], Page[Dict[str, Any]]]):
        super().__init__(first, fetch)
        self.variables = variables


class GraphResult(PagedResult[Triple]):
    """The triples of a CONSTRUCT or DESCRIBE query."""
