"""Tern in-process: open an index built by `tern load` (or by `load()`
here), run SPARQL on it, and get rows, Arrow tables or DataFrames.

    import tern
    tern.load("/tmp/birds", ["data/sample.ttl"], force=True)
    index = tern.Index("/tmp/birds")
    for row in index.select("SELECT ?s ?o WHERE { ?s ?p ?o } LIMIT 3"):
        print(row["s"], row["o"].to_python())

Serving the same index over HTTP from the notebook, and updating it:

    with index.serve(port=0) as server:   # the endpoint of `tern serve`
        print(server.endpoint)            # http://127.0.0.1:PORT/sparql
    tern.Index("/tmp/birds", writable=True).update("INSERT DATA { ... }")

Results are the HTTP client's (`tern_client`): the same `IRI`, `BNode`,
`Literal` terms, `SolutionResult` and `GraphResult` iterators and
`dataframe()`, so code written against a server runs against a local index
unchanged. Rows are fetched from the engine a page at a time as they are
read; the engine works without holding the GIL.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Dict, List, Optional, Union

from tern_client.frame import to_dataframe
from tern_client.ntriples import Triple
from tern_client.paging import GraphResult, Page, PageStats, SolutionResult
from tern_client.terms import IRI, BNode, Literal

from . import _native

__all__ = ["Index", "load", "serve", "IRI", "BNode", "Literal", "Triple", "SolutionResult", "GraphResult"]

_CLASSES = _native.TermClasses(IRI, BNode, Literal, Triple)

# Rows taken from the engine at once: enough to amortize the call, few
# enough that a result read partly costs little.
PAGE_ROWS = 4096

def serve(path: str, host: str = "127.0.0.1", port: int = 7070, **options: Any) -> Any:
    """Opens the index in `path` and serves it (see `Index.serve`)."""
    return Index(path).serve(host, port, **options)


def load(path: str, files: List[str], force: bool = False) -> int:
    """Builds an index at `path` from RDF files (N-Triples, N-Quads,
    Turtle, TriG; .gz/.zst too); `force` replaces one there. Returns its
    number of triples."""
    return _native.load(str(path), [str(f) for f in files], force)


class Index:
    """An index opened in this process: queries, and with `writable=True`
    updates (one writer per index: not while a server writes it)."""

    def __init__(self, path: str, writable: bool = False):
        self._native = _native.Index(str(path), writable)

    def update(self, sparql: str) -> Dict[str, int]:
        """Applies a SPARQL update as one durable transaction (all of it, or
        nothing on an error, which raises ValueError). Returns the counts of
        operations and of triples inserted and deleted."""
        operations, inserted, deleted = self._native.update(sparql)
        return {"operations": operations, "inserted": inserted, "deleted": deleted}

    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 7070,
        workers: Optional[int] = None,
        timeout: Optional[float] = None,
        update_token: Optional[str] = None,
    ) -> Any:
        """Serves this index over HTTP from this process, as `tern serve`
        does: the SPARQL endpoint (`server.endpoint`), the workbench
        (`server.url`), paging and every result format. Returns a running
        `Server`; `server.stop()` or a `with` block stops it. `port=0` takes
        a free port; `update_token` lets clients that send it as a bearer
        token update a writable index. The server runs on its own threads,
        so queries from here and over HTTP run side by side."""
        return self._native.serve(host, port, workers, timeout, update_token)

    def query(self, sparql: str) -> Union[SolutionResult, bool, GraphResult]:
        """Runs any query: rows (SELECT), a bool (ASK) or triples
        (CONSTRUCT, DESCRIBE). A bad query raises ValueError here."""
        started = time.perf_counter()
        running, form, info, first = self._native.start(sparql, PAGE_ROWS, _CLASSES)
        if form == "ask":
            return info
        page = _page(first, time.perf_counter() - started)
        fetch = functools.partial(_next_page, running)
        if form == "graph":
            return GraphResult(page, fetch)
        return SolutionResult(info, page, fetch)

    def select(self, sparql: str) -> SolutionResult:
        result = self.query(sparql)
        if not isinstance(result, SolutionResult):
            raise ValueError("select() runs SELECT queries; use query() for the others")
        return result

    def ask(self, sparql: str) -> bool:
        result = self.query(sparql)
        if not isinstance(result, bool):
            raise ValueError("ask() runs ASK queries")
        return result

    def construct(self, sparql: str) -> GraphResult:
        result = self.query(sparql)
        if not isinstance(result, GraphResult):
            raise ValueError("construct() runs CONSTRUCT and DESCRIBE queries")
        return result

    describe = construct

    def dataframe(self, sparql: str, convert: bool = True) -> Any:
        """A pandas DataFrame, one column per variable (as the client's)."""
        return to_dataframe(self.select(sparql), convert=convert)

    def arrow(self, sparql: str) -> Any:
        """The result of a SELECT as a pyarrow Table with typed columns: per
        variable a column of its values' type (Int64, Float64, Decimal128,
        Boolean, Date32, Timestamp, strings; IRIs dictionary-encoded) and a
        ``VAR__term`` column with, in N-Triples syntax, the values that do not
        fit it; a variable with no common type is one column of N-Triples
        text. Field metadata ``tern:kind`` says which."""
        try:
            import pyarrow.ipc  # type: ignore[import-untyped]
        except ImportError:
            raise ImportError("arrow() needs pyarrow: pip install pyarrow") from None
        return pyarrow.ipc.open_stream(self._native.arrow_ipc(sparql)).read_all()


# A page's "next token" for the client's result classes: only a marker
# that more may follow (a full page) or that this was the last.
def _more() -> str:
    return "more"


def _last() -> None:
    return None


def _page(items: list, seconds: float) -> Page:
    return Page(iter(items), PageStats(rows=0, seconds=seconds), _more if len(items) == PAGE_ROWS else _last)


def _next_page(running: Any, _token: str) -> Page:
    """The next PAGE_ROWS items of a running query (rows as dicts or
    triples, made by the extension)."""
    started = time.perf_counter()
    items = running.next_page(PAGE_ROWS, _CLASSES)
    return _page(items, time.perf_counter() - started)
