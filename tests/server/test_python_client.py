"""Tern's Python client (clients/python, installed into the test venv by
run.sh) against real `tern serve` processes: paged results equal unpaged
ones, DataFrames, ASK, CONSTRUCT, errors mapped to exceptions, resuming on
another server, 503 retries and the CLI."""

import csv
import datetime
import io
import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlencode

import pytest
import rdflib
import requests

from conftest import BIG_TRIPLES, SILENT, Server
from tern_client import (
    IRI,
    BNode,
    Client,
    IncompleteResult,
    Literal,
    QueryError,
    QueryFormError,
    ServerBusy,
    TokenGone,
    Triple,
)
from tern_client.client import quantum_text
from tern_client.ntriples import parse as parse_ntriples
from tern_client.terms import RDF_LANG_STRING, XSD

BIG = "http://example.org/big/"
EX = "PREFIX ex: <http://example.org/birds/> "
ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
# 50,000 rows that need materializing (sort) before the first one leaves.
ORDERED = f"SELECT ?s ?n WHERE {{ ?s <{BIG}n> ?n }} ORDER BY DESC(?n) ?s"
GROUPED = f"SELECT ?o (COUNT(*) AS ?c) WHERE {{ ?s <{BIG}p0> ?o }} GROUP BY ?o"
LABELS = f"SELECT ?s ?l WHERE {{ ?s <{BIG}label> ?l }}"
# 145 x 145 rows from the sample: several pages at a quantum of a millisecond.
CROSS = "SELECT * WHERE { ?s ?p ?o . ?a ?b ?c }"
OBSERVATIONS = EX + """SELECT ?obs ?count ?at ?on ?verified WHERE {
  ?obs a ex:Observation ; ex:count ?count
  OPTIONAL { ?obs ex:observedAt ?at } OPTIONAL { ?obs ex:observedOn ?on }
  OPTIONAL { ?obs ex:verified ?verified } } ORDER BY ?obs"""


def key(row):
    """A row as a hashable value (rows list every variable, in order)."""
    return tuple(row.items())


def assert_pages_contiguous(stats):
    """Each page's Tern-Rows-Before counts exactly the rows of the earlier
    pages, and every page but the last carried a token."""
    seen = 0
    for i, page in enumerate(stats.pages):
        assert page.rows_before == seen, (i, page.rows_before, seen)
        seen += page.rows
        last = i == len(stats.pages) - 1
        assert (page.token_bytes is None) == last, (i, page.token_bytes)


@pytest.fixture(scope="module")
def token_key(workdir) -> Path:
    path = workdir / "token.key"
    path.write_bytes(b"a shared secret for the replicas of one index")
    return path


@pytest.fixture(scope="module")
def replicas(big_index, token_key):
    """Two servers on the same index with the same token key: replicas
    behind a load balancer."""
    servers = [Server(big_index, "--token-key", str(token_key)) for _ in range(2)]
    yield servers
    for s in servers:
        s.stop()


# -- paged results equal unpaged ones ---------------------------------------


def test_paged_rows_equal_unpaged_rows(big_server):
    client = Client(big_server.url)
    paged = client.select(ALL, quantum="1ms")
    paged_rows = Counter(key(r) for r in paged)
    unpaged = client.select(ALL, quantum=None)
    unpaged_rows = Counter(key(r) for r in unpaged)
    assert sum(paged_rows.values()) == BIG_TRIPLES
    assert paged_rows == unpaged_rows
    assert unpaged.stats.page_count == 1
    assert paged.stats.page_count > 5
    assert paged.stats.rows == BIG_TRIPLES
    assert_pages_contiguous(paged.stats)
    # The server's figures arrived: suspending and resuming were measured.
    assert paged.stats.suspend_us > 0 and paged.stats.resume_us > 0
    assert 0 < paged.stats.max_token_bytes < 1024
    # Terms of every kind came through: IRIs, blank nodes, tagged and typed literals.
    objects = {type(dict(r)["o"]) for r in paged_rows}
    assert objects == {IRI, BNode, Literal}


def test_paged_order_by_keeps_order(big_server):
    client = Client(big_server.url)
    paged = client.select(ORDERED, quantum="1ms")
    rows = list(paged)
    assert rows == list(client.select(ORDERED, quantum=None))
    assert len(rows) == BIG_TRIPLES // 4
    assert paged.stats.page_count > 1
    assert_pages_contiguous(paged.stats)
    numbers = [r["n"].to_python() for r in rows]
    assert numbers == sorted(numbers, reverse=True)
    assert numbers[0] == BIG_TRIPLES - 2


def test_paged_group_by_equals_unpaged(big_server):
    client = Client(big_server.url)
    paged = Counter(key(r) for r in client.select(GROUPED, quantum="1ms"))
    assert paged == Counter(key(r) for r in client.select(GROUPED, quantum=None))
    assert len(paged) == 997
    assert sum(dict(k)["c"].to_python() for k in paged) == BIG_TRIPLES // 4


@pytest.mark.parametrize("quantum", ["500us", 1, datetime.timedelta(microseconds=300), "0.001s"])
def test_quantum_forms(server, quantum):
    client = Client(server.url, quantum=quantum)
    paged = client.select(CROSS)
    rows = Counter(key(r) for r in paged)
    assert rows == Counter(key(r) for r in client.select(CROSS, quantum=None))
    assert paged.stats.page_count > 1


def test_quantum_text():
    assert quantum_text("50ms") == "50ms"
    assert quantum_text(20) == "20ms"
    assert quantum_text(datetime.timedelta(milliseconds=2)) == "2000us"
    assert quantum_text(None) is None and quantum_text(0) is None and quantum_text("off") is None


def test_pages_are_fetched_lazily(big_server):
    result = Client(big_server.url, quantum="1ms").select(ALL)
    pages = result.iter_pages()
    # Reading the first page to its end does not fetch the second one...
    first = next(pages)
    assert result.stats.page_count == 1
    assert result.token
    # ...asking for more does.
    second = next(pages)
    assert result.stats.page_count == 2
    assert result.stats.pages[1].rows_before == len(first)
    assert all(set(row) == {"s", "p", "o"} for row in first + second)
    result.close()
    with pytest.raises(StopIteration):
        next(result)


# -- DataFrame, ASK, CONSTRUCT, terms ---------------------------------------


def test_dataframe_columns_and_values(server):
    df = Client(server.url, quantum="1ms").dataframe(OBSERVATIONS)
    assert list(df.columns) == ["obs", "count", "at", "on", "verified"]
    assert df.shape == (5, 5)
    assert list(df["obs"]) == [f"http://example.org/birds/obs{i}" for i in range(1, 6)]
    # "012"^^xsd:integer is the number 12.
    assert list(df["count"]) == [240, 1200, 35, 80, 12]
    assert str(df["count"].dtype) == "int64"
    utc = datetime.timezone.utc
    assert df["at"][0] == datetime.datetime(2024, 6, 14, 5, 30, tzinfo=utc)
    assert df["at"][2] == datetime.datetime(2024, 5, 2, 18, 45, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert df["at"][3] is None and df["on"][0] is None
    assert df["on"][3] == datetime.date(2024, 3, 21)
    assert df["verified"][4] is False and df["verified"][0] is None
    assert df.attrs["tern_stats"].rows == 5


def test_dataframe_without_conversion_keeps_terms(big_server):
    df = Client(big_server.url).dataframe(LABELS + " ORDER BY ?s LIMIT 3", convert=False)
    assert df.shape == (3, 2)
    assert df["s"][0] == IRI(BIG + "s0")
    assert df["l"][0] == Literal('label 1 with "quotes", commas\tand tabs', lang="en")


def test_literals_convert_to_python_values(server):
    row = next(Client(server.url).select("""
        PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
        SELECT ?b ?i ?d ?f ?date ?dt ?t ?l ?y ?bad WHERE {
          BIND(true AS ?b) BIND(-7 AS ?i) BIND(2.50 AS ?d) BIND(1.5e3 AS ?f)
          BIND("2024-01-02"^^xsd:date AS ?date) BIND("2024-01-02T03:04:05.123456789Z"^^xsd:dateTime AS ?dt)
          BIND("23:59:00"^^xsd:time AS ?t) BIND("tab\\tquote\\"é"@en-GB AS ?l)
          BIND("1763"^^xsd:gYear AS ?y) BIND("x1"^^xsd:integer AS ?bad) }"""))
    values = {v: t.to_python() for v, t in row.items()}
    assert values["b"] is True
    assert values["i"] == -7 and isinstance(values["i"], int)
    assert values["d"] == Decimal("2.50")
    assert values["f"] == 1500.0
    assert values["date"] == datetime.date(2024, 1, 2)
    assert values["dt"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
    assert values["t"] == datetime.time(23, 59)
    assert values["l"] == 'tab\tquote"é'
    assert row["l"] == Literal('tab\tquote"é', RDF_LANG_STRING, "en-gb")
    assert row["l"].n3() == '"tab\\tquote\\"é"@en-gb'
    assert values["y"] == "1763" and row["y"].datatype == XSD + "gYear"
    # An invalid lexical form stays text rather than failing the result.
    assert values["bad"] == "x1"


def test_ask(server):
    client = Client(server.url)
    assert client.ask(EX + "ASK { ex:arcticTern a ex:Tern }") is True
    assert client.ask(EX + "ASK { ex:arcticTern a ex:Gull }") is False


def test_query_forms_are_checked(server):
    client = Client(server.url)
    with pytest.raises(QueryFormError, match="SELECT"):
        client.select("ASK {}")
    with pytest.raises(QueryFormError, match="ASK"):
        client.ask("SELECT * WHERE { ?s ?p ?o }")
    with pytest.raises(QueryFormError, match="CONSTRUCT"):
        client.construct("SELECT * WHERE { ?s ?p ?o }")


def rdflib_term(term):
    if isinstance(term, IRI):
        return rdflib.URIRef(term.value)
    if isinstance(term, Literal):
        if term.lang:
            return rdflib.Literal(term.value, lang=term.lang)
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype))
    raise AssertionError(term)


def test_construct_paged_equals_unpaged_and_rdflib(big_server):
    client = Client(big_server.url)
    query = f"CONSTRUCT WHERE {{ ?s <{BIG}label> ?l . ?s <{BIG}knows> ?k }}"
    paged = client.construct(query, quantum="1ms")
    triples = Counter(paged)
    assert triples == Counter(client.construct(query, quantum=None))
    assert sum(triples.values()) == BIG_TRIPLES // 2
    assert paged.stats.page_count > 1
    assert_pages_contiguous(paged.stats)
    assert all(isinstance(t, Triple) and isinstance(t.subject, IRI) for t in triples)
    # The client's N-Triples reader agrees with rdflib's on the same bytes
    # (escaped quotes and tabs, language tags; blank nodes aside, as rdflib
    # renames them).
    text = requests.post(big_server.url, data={"query": query + " LIMIT 4000"},
                         headers={"Accept": "application/n-triples"}, timeout=60).text
    ours = list(parse_ntriples(text))
    assert len(ours) == 8000  # two triples per solution
    theirs = rdflib.Graph().parse(data=text, format="nt")
    assert len(theirs) == 8000
    named = {(rdflib_term(s), rdflib_term(p), rdflib_term(o)) for s, p, o in ours if not isinstance(o, BNode)}
    assert named == {t for t in theirs if not isinstance(t[2], rdflib.BNode)}
    assert len(named) == 4000


def test_describe(server):
    triples = list(Client(server.url).construct("DESCRIBE <http://example.org/birds/ana>"))
    assert {t.subject for t in triples} == {IRI("http://example.org/birds/ana")}
    assert Triple(IRI("http://example.org/birds/ana"), IRI("http://xmlns.com/foaf/0.1/name"),
                  Literal("Ana Jónsdóttir")) in triples


# -- errors -----------------------------------------------------------------


def test_bad_query_is_query_error_with_parser_message(server):
    with pytest.raises(QueryError) as e:
        Client(server.url).select("SELECT * WHERE { ?s ?p }")
    assert e.value.status == 400
    assert "syntax" in e.value.message and "1:" in e.value.message


def test_bad_quantum_is_query_error(server):
    with pytest.raises(QueryError, match="quantum"):
        Client(server.url, quantum="5 minutes").select(CROSS)


def test_tampered_token_is_query_error(big_server):
    client = Client(big_server.url, quantum="1ms")
    result = client.select(ALL)
    token = result.token
    i = len(token) // 2
    tampered = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]
    with pytest.raises(QueryError) as e:
        client.resume(tampered)
    assert e.value.status == 400 and "token" in e.value.message
    # The genuine token still works.
    assert next(client.resume(token))
    result.close()


def test_token_from_a_server_with_another_key_is_refused(big_server, big_index):
    token = Client(big_server.url, quantum="1ms").select(ALL).token
    other = Server(big_index)  # a random key of its own
    try:
        with pytest.raises(QueryError) as e:
            Client(other.url).resume(token)
        assert e.value.status == 400 and "token" in e.value.message
    finally:
        other.stop()


def test_replica_with_the_shared_key_resumes_pipelined_query(replicas):
    first, second = (Client(s.url, quantum="1ms") for s in replicas)
    result = first.select(LABELS)
    rows = next(result.iter_pages())
    token = result.token
    assert token
    result.close()
    rest = second.resume(token)
    rows += list(rest)
    assert rest.stats.pages[0].rows_before == result.stats.pages[0].rows
    assert Counter(key(r) for r in rows) == Counter(key(r) for r in first.select(LABELS, quantum=None))


def test_replica_without_the_state_answers_token_gone(replicas):
    first, second = (Client(s.url, quantum="1ms") for s in replicas)
    result = first.select(ORDERED)
    token = result.token
    assert token
    with pytest.raises(TokenGone) as e:
        second.resume(token)
    assert e.value.status == 410 and "again" in e.value.message
    # The server that holds the state still resumes it.
    assert next(first.resume(token))


def test_expired_token_raises_token_gone_while_iterating(sample_index):
    s = Server(sample_index, "--token-ttl", "1s")
    try:
        result = Client(s.url, quantum="100us").select(CROSS)
        next(result.iter_pages())  # a page may be empty: the quantum can end before the first row
        assert result.token
        time.sleep(1.5)
        with pytest.raises(TokenGone, match="expired"):
            next(result)
    finally:
        s.stop()


def test_cut_result_is_incomplete(server):
    client = Client(server.url, quantum=None)
    with pytest.raises(IncompleteResult):
        client.select(ALL, tern_fault_after=3)
    triples = []
    with pytest.raises(IncompleteResult):
        for t in client.construct("CONSTRUCT WHERE { ?s ?p ?o }", tern_fault_after=3):
            triples.append(t)
    assert len(triples) <= 3


def test_busy_server_is_retried_then_served(big_index):
    s = Server(big_index, "--workers", "1", "--max-queued", "1")
    holders = []
    try:
        for _ in range(2):  # one running, one queued
            sock = socket.create_connection((s.host, s.port))
            sock.sendall(f"GET /sparql?{urlencode({'query': SILENT})} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            holders.append(sock)
            time.sleep(0.3)
        with pytest.raises(ServerBusy) as e:
            Client(s.url, retries=0).ask("ASK {}")
        assert e.value.status == 503
        # Disconnecting cancels the held queries; a patient client gets through.
        threading.Timer(1.5, lambda: [h.close() for h in holders]).start()
        result = Client(s.url, retries=20, max_retry_wait=1).select("SELECT * WHERE { ?s ?p ?o } LIMIT 5")
        assert len(list(result)) == 5
        assert result.stats.retries >= 1
    finally:
        for h in holders:
            h.close()
        s.stop()


# -- CLI --------------------------------------------------------------------


def cli(*args, module=False):
    command = [sys.executable, "-m", "tern_client"] if module else [str(Path(sys.executable).parent / "tern-client")]
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("module", [False, True])
def test_cli_csv_joins_pages(big_server, module):
    out = cli(big_server.url, LABELS, "--quantum", "1ms", "--stats", module=module)
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout, newline="")))
    assert rows[0] == ["s", "l"]
    expected = Counter((str(r["s"]), str(r["l"])) for r in Client(big_server.url).select(LABELS, quantum=None))
    assert Counter(tuple(r) for r in rows[1:]) == expected
    stats = json.loads(out.stderr)
    assert stats["pages"] > 1 and stats["rows"] == BIG_TRIPLES // 4
    assert stats["max_token_bytes"] > 0


def test_cli_tsv_and_json(server, tmp_path):
    query_file = tmp_path / "q.rq"
    query_file.write_text(OBSERVATIONS)
    tsv = cli(server.url, f"@{query_file}", "--format", "tsv", "--quantum", "100us")
    assert tsv.returncode == 0, tsv.stderr
    lines = tsv.stdout.splitlines()
    assert lines[0] == "?obs\t?count\t?at\t?on\t?verified"
    assert lines[1].split("\t")[:2] == ["<http://example.org/birds/obs1>", f'"240"^^<{XSD}integer>']
    assert lines[5].split("\t")[4] == f'"false"^^<{XSD}boolean>'
    assert len(lines) == 6
    got = json.loads(cli(server.url, f"@{query_file}", "--format", "json", "--quantum", "100us").stdout)
    want = requests.post(server.url, data={"query": OBSERVATIONS}, timeout=10).json()
    assert got["head"] == want["head"]
    assert got["results"]["bindings"] == want["results"]["bindings"]


def test_cli_ask_construct_and_errors(server):
    out = cli(server.url, "ASK { ?s ?p ?o }")
    assert (out.returncode, out.stdout) == (0, "true\n")
    out = cli(server.url, "ASK { ?s ?p ?o }", "--format", "json")
    assert json.loads(out.stdout) == {"head": {}, "boolean": True}
    out = cli(server.url, EX + "CONSTRUCT WHERE { ex:ana ?p ?o }", "--quantum", "100us")
    assert out.returncode == 0, out.stderr
    graph = rdflib.Graph().parse(data=out.stdout, format="nt")
    assert len(graph) == 3
    out = cli(server.url, "SELECT * WHERE { ?s ?p }")
    assert out.returncode == 1
    assert "QueryError" in out.stderr and "1:" in out.stderr and out.stdout == ""
