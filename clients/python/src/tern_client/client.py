"""The client: one object per endpoint, one method per query form.

Every query is sent with the same Accept header, SPARQL JSON for solutions
and N-Triples for graphs, so the server's answer (its Content-Type) tells
the query's form; `query()` returns whatever the form gives and the other
methods check that it is the form they promise.
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import requests

from .errors import ParseError, QueryFormError
from .ntriples import Triple, parse_line
from .paging import GraphResult, Page, PageStats, SolutionResult
from .sparql_json import parse_page
from .transport import Params, Timeout, Transport, iter_lines, read_all

SPARQL_JSON = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"
ACCEPT = f"{SPARQL_JSON}, {N_TRIPLES};q=0.9"

Quantum = Union[str, int, float, datetime.timedelta, None]


class _Default:
    """Marks a quantum argument left out: the client's quantum applies."""


_DEFAULT: Any = _Default()


def quantum_text(quantum: Quantum) -> Optional[str]:
    """The `quantum=` parameter for a quantum given as the server's syntax
    (`"50ms"`, `"2s"`, `"500us"`), a number of milliseconds or a timedelta;
    None (or 0, "0", "off") for an unpaged query."""
    if quantum is None:
        return None
    if isinstance(quantum, datetime.timedelta):
        micros = round(quantum.total_seconds() * 1e6)
        return f"{micros}us" if micros > 0 else None
    if isinstance(quantum, (int, float)):
        return f"{quantum}ms" if quantum > 0 else None
    text = str(quantum).strip()
    return None if text in ("", "0", "off", "none") else text


def form_params(params: Dict[str, Any]) -> Params:
    """Protocol parameters from keyword arguments: `default_graph_uri`
    becomes `default-graph-uri`; a list or tuple repeats the parameter."""
    pairs: Params = []
    for key, value in params.items():
        name = key.replace("_", "-")
        values: Iterable[Any] = value if isinstance(value, (list, tuple)) else [value]
        pairs.extend((name, str(v)) for v in values if v is not None)
    return pairs


class Client:
    """A Tern SPARQL endpoint.

    `quantum` is the page length asked of the server (None: one unpaged
    response). `timeout` is the HTTP timeout in seconds per request (a
    float or a (connect, read) pair). A 503 is retried up to `retries`
    times, waiting its Retry-After (at most `max_retry_wait` seconds).
    Pass a `session` to share connections or set auth/proxies; the client
    closes only a session it created.
    """

    def __init__(
        self,
        endpoint: str,
        quantum: Quantum = "50ms",
        timeout: Timeout = 300.0,
        session: Optional[requests.Session] = None,
        retries: int = 5,
        max_retry_wait: float = 30.0,
    ):
        self.endpoint = endpoint
        self.quantum = quantum
        self._transport = Transport(endpoint, timeout, session, retries, max_retry_wait)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._transport.close()

    def query(
        self, query: str, *, quantum: Quantum = _DEFAULT, **params: Any
    ) -> Union[SolutionResult, bool, GraphResult]:
        """Runs a query of any form: rows for SELECT, a bool for ASK,
        triples for CONSTRUCT and DESCRIBE.

        The first page is fetched now, so a bad query raises here; the
        others when iteration reaches them. `params` are further protocol
        parameters (`default_graph_uri=[...]`, `timeout=5` for the
        server-side limit), sent with every page; a token carries the
        query's dataset, which wins over them.
        """
        return self._run([("query", query)], quantum, params)

    def resume(
        self, token: str, *, quantum: Quantum = _DEFAULT, **params: Any
    ) -> Union[SolutionResult, bool, GraphResult]:
        """Continues a paged query from a continuation token (a result's
        `token`, saved earlier), on this endpoint or another one with the
        same index and token key; the rows come from the page after the one
        that gave the token. A token whose query keeps intermediate results
        on the server (ORDER BY, GROUP BY, DISTINCT, hash joins) resumes
        only on the server that issued it, and only once. Raises QueryError
        for a token that is not valid here and TokenGone for one whose
        query must be run again."""
        return self._run([("next", token)], quantum, params)

    def _run(self, start: Params, quantum: Quantum, params: Dict[str, Any]) -> Union[SolutionResult, bool, GraphResult]:
        paged = quantum_text(self.quantum if quantum is _DEFAULT else quantum)
        extra = form_params(params)
        if paged is not None:
            extra.append(("quantum", paged))

        def fetch(token: str) -> Page[Any]:
            page, _, _ = self._page([("next", token)] + extra)
            return page

        page, variables, boolean = self._page(start + extra)
        if boolean is not None:
            return boolean
        if variables is not None:
            return SolutionResult(variables, page, fetch)
        return GraphResult(page, fetch)

    def select(self, query: str, *, quantum: Quantum = _DEFAULT, **params: Any) -> SolutionResult:
        """The rows of a SELECT query, as dicts from variable to `IRI`,
        `BNode`, `Literal` or None (unbound); see `query()`."""
        result = self.query(query, quantum=quantum, **params)
        if not isinstance(result, SolutionResult):
            raise QueryFormError(f"select() needs a SELECT query; this one gave {_form(result)}")
        return result

    def ask(self, query: str, **params: Any) -> bool:
        """The answer of an ASK query."""
        result = self.query(query, **params)
        if not isinstance(result, bool):
            raise QueryFormError(f"ask() needs an ASK query; this one gave {_form(result)}")
        return result

    def construct(self, query: str, *, quantum: Quantum = _DEFAULT, **params: Any) -> GraphResult:
        """The triples of a CONSTRUCT or DESCRIBE query, as `Triple`s of
        terms; see `query()`."""
        result = self.query(query, quantum=quantum, **params)
        if not isinstance(result, GraphResult):
            raise QueryFormError(f"construct() needs a CONSTRUCT or DESCRIBE query; this one gave {_form(result)}")
        return result

    describe = construct

    def dataframe(self, query: str, *, convert: bool = True, quantum: Quantum = _DEFAULT, **params: Any) -> Any:
        """The rows of a SELECT query as a pandas DataFrame, one column per
        variable in the query's order. With `convert`, cells are plain
        Python values (`Term.to_python()`; None when unbound), else terms.
        The result's `ResultStats` is in `df.attrs["tern_stats"]`."""
        from .frame import to_dataframe

        return to_dataframe(self.select(query, quantum=quantum, **params), convert)

    def _page(self, data: Params) -> "Tuple[Page[Any], Optional[List[str]], Optional[bool]]":
        """Sends one request and opens its page: for solutions, the page's
        variables (and for ASK its answer); for graphs, neither."""
        response, seconds, retries = self._transport.post(data, ACCEPT)
        stats = PageStats.from_headers(response.headers, seconds)
        stats.retries = retries
        header_token = response.headers.get("Tern-Next")
        media = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media == SPARQL_JSON:
            body = read_all(response)
            stats.bytes = len(body)
            solutions = parse_page(body)
            token = header_token or solutions.next
            if solutions.boolean is not None:
                return Page(iter(()), stats, lambda: None), None, solutions.boolean
            return Page(iter(solutions.rows), stats, lambda: token), solutions.variables, None
        if media == N_TRIPLES:
            return Page(_triples(response, stats), stats, lambda: header_token), None, None
        response.close()
        raise ParseError(f"unexpected response type {media!r} (asked for {ACCEPT})")


def _triples(response: requests.Response, stats: PageStats) -> Iterator[Triple]:
    """The triples of an N-Triples page as its lines arrive."""
    for number, line in enumerate(iter_lines(response), 1):
        stats.bytes += len(line) + 1
        triple = parse_line(line.decode("utf-8"), number)
        if triple is not None:
            yield triple


def _form(result: object) -> str:
    if isinstance(result, bool):
        return "a boolean (ASK)"
    if isinstance(result, GraphResult):
        return "triples (CONSTRUCT/DESCRIBE)"
    return "rows (SELECT)"
