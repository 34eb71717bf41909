"""`tern-client ENDPOINT QUERY_OR_@FILE`: run a query and print its whole
result, pages joined, as one document.

SELECT prints CSV (SPARQL 1.1 CSV: plain values), TSV (terms in N-Triples
syntax) or SPARQL JSON; ASK prints `true`/`false` (a SPARQL JSON boolean
document with --format json); CONSTRUCT/DESCRIBE print N-Triples whatever
the format. Output is written page by page, so a result of any size goes
through in bounded memory.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import Dict, List, Optional, TextIO

from . import __version__
from .client import Client
from .errors import TernError
from .paging import GraphResult, SolutionResult
from .terms import IRI, XSD_STRING, BNode, Literal, Term


def _query_text(arg: str) -> str:
    """The query itself, or `@FILE` (`@-` for stdin)."""
    if not arg.startswith("@"):
        return arg
    if arg == "@-":
        return sys.stdin.read()
    with open(arg[1:], encoding="utf-8") as f:
        return f.read()


def _json_term(term: Term) -> Dict[str, str]:
    """A term as a SPARQL JSON binding value."""
    if isinstance(term, IRI):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": term.value}
    assert isinstance(term, Literal)
    value = {"type": "literal", "value": term.value}
    if term.lang is not None:
        value["xml:lang"] = term.lang
    elif term.datatype != XSD_STRING:
        value["datatype"] = str(term.datatype)
    return value


def write_solutions(result: SolutionResult, fmt: str, out: TextIO) -> None:
    variables = result.variables
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(variables)
        for row in result:
            writer.writerow(["" if row[v] is None else str(row[v]) for v in variables])
    elif fmt == "tsv":
        out.write("\t".join("?" + v for v in variables) + "\n")
        for row in result:
            out.write("\t".join("" if row[v] is None else row[v].n3() for v in variables) + "\n")
    else:
        out.write(json.dumps({"head": {"vars": variables}})[:-1] + ',"results":{"bindings":[')
        separator = "\n"
        for row in result:
            binding = {v: _json_term(t) for v, t in row.items() if t is not None}
            out.write(separator + json.dumps(binding, ensure_ascii=False))
            separator = ",\n"
        out.write("\n]}}\n")


def write_boolean(value: bool, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps({"head": {}, "boolean": value}) + "\n")
    else:
        out.write(("true" if value else "false") + "\n")


def write_triples(result: GraphResult, out: TextIO) -> None:
    for s, p, o in result:
        out.write(f"{s.n3()} {p.n3()} {o.n3()} .\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tern-client",
        description="Run a SPARQL query on a Tern endpoint, following its pages.",
    )
    p.add_argument("endpoint", help="the endpoint, e.g. http://127.0.0.1:7070/sparql")
    p.add_argument("query", help="the query, or @FILE to read it from a file (@- for stdin)")
    p.add_argument("--quantum", default="50ms", help="page length: 50ms, 2s, 500us; 0 for one unpaged response (default: 50ms)")
    p.add_argument("--format", choices=["csv", "tsv", "json"], default="csv", help="SELECT output format (default: csv)")
    p.add_argument("--stats", action="store_true", help="print page statistics as JSON on stderr at the end")
    p.add_argument("--timeout", type=float, default=300.0, help="HTTP timeout per page in seconds (default: 300)")
    p.add_argument("--version", action="version", version=f"tern-client {__version__}")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    out = sys.stdout
    try:
        query = _query_text(args.query)
        with Client(args.endpoint, quantum=args.quantum, timeout=args.timeout) as client:
            result = client.query(query)
            if isinstance(result, bool):
                write_boolean(result, args.format, out)
            elif isinstance(result, SolutionResult):
                write_solutions(result, args.format, out)
            else:
                assert isinstance(result, GraphResult)
                write_triples(result, out)
            out.flush()
            if args.stats and not isinstance(result, bool):
                print(json.dumps(result.stats.summary()), file=sys.stderr)
    except TernError as e:
        print(f"tern-client: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            # The reader went away (| head): not an error. Point stdout at
            # /dev/null so the interpreter's final flush does not fail too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(f"tern-client: {e}", file=sys.stderr)
        return 1
    return 0
