"""Snapshot isolation through the protocol, against real `tern serve`
processes taking updates:

- readers never see part of an update: while a writer keeps invariants with
  multi-operation requests (two counters always equal, a fixed total over
  accounts), concurrent queries always find them holding, and each reader's
  view only moves forward;
- a paged query (continuation tokens) reads the snapshot it started on to
  its end, although matching triples are inserted and deleted between its
  pages and the store is compacted in the middle: its pages together are
  exactly the unpaged result on the data before the first update;
- the same across servers: a token issued by one server resumes on another
  with the same key started from a copy of the index, after the first has
  moved on;
- a token whose snapshot is no longer kept (--kept-snapshots) gets 410 with
  a message saying so.
"""

import collections
import os
import threading
import time

import pytest
import requests

from conftest import Server
from writes import (
    Writable,
    canonical,
    copy_index,
    fresh_index,
    page,
    rows,
)

E = "http://example.org/iso/"
TRIPLES = 30_000  # about eight pages of 4096 rows
# The shortest quantum: a page then holds a batch or a few.
QUANTUM = "100us"
# The paged-query test asks for pages of PAGE_ROWS rows, which end there
# exactly (README), so however fast the engine, PAGED_SUBJECTS rows take
# more pages than INTERLEAVED holds (and their whole answer, about 10 MB,
# still fits in one page of 16 MiB).
PAGE_ROWS = "4000"
PAGED_SUBJECTS = 60_000


def write_subjects(path, count: int):
    """`count` subjects with a number and a group each."""
    with open(path, "w") as f:
        for i in range(count):
            f.write(f"<{E}s{i:05d}> <{E}n> \"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n")
            f.write(f"<{E}s{i:05d}> <{E}group> <{E}g{i % 7}> .\n")
    return path


@pytest.fixture(scope="module")
def iso_nt(workdir):
    return write_subjects(workdir / "isolation.nt", TRIPLES)


@pytest.fixture(scope="module")
def paged_nt(workdir):
    return write_subjects(workdir / "isolation-paged.nt", PAGED_SUBJECTS)


@pytest.fixture(scope="module")
def key_file(workdir):
    path = workdir / "isolation-token.key"
    path.write_bytes(os.urandom(32).hex().encode())
    return path


# --- Concurrent readers and a writer -------------------------------------

ACCOUNTS = 5
TOTAL = 1000
COUNTERS = f"SELECT ?a ?b WHERE {{ <{E}c> <{E}a> ?a . <{E}c> <{E}b> ?b }}"
COUNTER_TRIPLES = f"SELECT (COUNT(*) AS ?n) WHERE {{ <{E}c> ?p ?o }}"
BALANCES = f"SELECT ?acct ?bal WHERE {{ ?acct <{E}balance> ?bal }}"


def integer(text: str) -> int:
    return int(text.split('"')[1])


def test_readers_never_see_half_of_an_update(workdir, iso_nt):
    s = Writable(fresh_index(workdir, "iso-readers", str(iso_nt)), "--workers", "2")
    try:
        s.ok(
            f"INSERT DATA {{ <{E}c> <{E}a> 0 . <{E}c> <{E}b> 0 . "
            + " ".join(f"<{E}acct{k}> <{E}balance> {TOTAL // ACCOUNTS} ." for k in range(ACCOUNTS))
            + " }"
        )
        stop = threading.Event()
        failures = []
        written = []
        seen = collections.Counter()

        def writer():
            i = 0
            try:
                while not stop.is_set():
                    i += 1
                    # Three operations: the counters are briefly gone, then
                    # both new; a reader must never see that.
                    s.ok(
                        f"DELETE WHERE {{ <{E}c> <{E}a> ?x }} ;\n"
                        f"DELETE WHERE {{ <{E}c> <{E}b> ?y }} ;\n"
                        f"INSERT DATA {{ <{E}c> <{E}a> {i} . <{E}c> <{E}b> {i} }}"
                    )
                    # One DELETE/INSERT moving an amount between accounts,
                    # then a request taking it back in two operations.
                    src, dst = i % ACCOUNTS, (i * 3 + 1) % ACCOUNTS
                    amount = i % 17 + 1
                    s.ok(
                        f"DELETE {{ ?from <{E}balance> ?f . ?to <{E}balance> ?t }} "
                        f"INSERT {{ ?from <{E}balance> ?f2 . ?to <{E}balance> ?t2 }} "
                        f"WHERE {{ BIND(<{E}acct{src}> AS ?from) BIND(<{E}acct{dst}> AS ?to) "
                        f"?from <{E}balance> ?f . ?to <{E}balance> ?t "
                        f"FILTER(?from != ?to) BIND(?f - {amount} AS ?f2) BIND(?t + {amount} AS ?t2) }}"
                    )
                    written.append(i)
            except Exception as e:  # noqa: BLE001 - reported by the test
                failures.append(f"writer: {e!r}")

        def reader(n):
            last = -1
            try:
                while not stop.is_set():
                    found = rows(s.url, COUNTERS)
                    if len(found) != 1:
                        failures.append(f"reader {n}: counters {found}")
                        return
                    a, b = (integer(dict(found[0])[v]) for v in ("a", "b"))
                    if a != b:
                        failures.append(f"reader {n}: a={a} b={b}")
                    if a < last:
                        failures.append(f"reader {n}: went back from {last} to {a}")
                    last = a
                    seen[a] += 1
                    (count,) = rows(s.url, COUNTER_TRIPLES)
                    if integer(dict(count)["n"]) != 2:
                        failures.append(f"reader {n}: {count} counter triples")
                    balances = rows(s.url, BALANCES)
                    total = sum(integer(dict(r)["bal"]) for r in balances)
                    if len(balances) != ACCOUNTS or total != TOTAL:
                        failures.append(f"reader {n}: balances {balances}")
            except Exception as e:  # noqa: BLE001
                failures.append(f"reader {n}: {e!r}")

        threads = [threading.Thread(target=writer)] + [
            threading.Thread(target=reader, args=(n,)) for n in range(3)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and not failures:
            time.sleep(0.05)
        stop.set()
        for t in threads:
            t.join(60)
        assert not failures, failures[:10]
        # The readers did read while the writer wrote, at many versions.
        assert len(written) >= 20, written
        assert len(seen) >= 10, seen
        final = rows(s.url, COUNTERS)
        assert [integer(dict(final[0])[v]) for v in ("a", "b")] == [written[-1]] * 2
    finally:
        s.stop()


# --- A paged query across updates and a compaction ----------------------

PAGED_QUERIES = {
    "scan": f"SELECT ?s ?o WHERE {{ ?s <{E}n> ?o }}",
    "filter": f"SELECT ?s ?o WHERE {{ ?s <{E}n> ?o FILTER(?o >= 100) }}",
    "join": f"SELECT ?s ?o ?g WHERE {{ ?s <{E}n> ?o . ?s <{E}group> ?g }}",
}

# Between the pages: updates touching what the query matches, ahead of and
# behind its position (subjects are read in order), and a compaction.
INTERLEAVED = [
    f"DELETE DATA {{ <{E}s29999> <{E}n> 29999 . <{E}s00000> <{E}n> 0 . "
    f"<{E}s12000> <{E}group> <{E}g2> }} ;\n"
    f"INSERT DATA {{ <{E}s29999x> <{E}n> -1 . <{E}s00000x> <{E}n> -2 . "
    f"<{E}s29999x> <{E}group> <{E}g0> . <{E}s00001> <{E}group> <{E}g9> }}",
    f"DELETE {{ ?s <{E}n> ?o }} WHERE {{ ?s <{E}n> ?o FILTER(?o >= 20000) }}",
    "COMPACT",
    f"DELETE {{ ?s <{E}n> ?o }} INSERT {{ ?s <{E}n> ?o2 }} "
    f"WHERE {{ ?s <{E}n> ?o FILTER(?o < 5000) BIND(?o + 1000000 AS ?o2) }}",
    f"INSERT {{ ?s <{E}group> <{E}late> }} WHERE {{ ?s <{E}n> ?o }}",
]


def interleave(s: Writable, step: int) -> str:
    if step >= len(INTERLEAVED):
        return "none"
    action = INTERLEAVED[step]
    if action == "COMPACT":
        assert s.compact()["compacted"] is True
    else:
        s.ok(action)
    return action.split()[0]


@pytest.mark.parametrize("resume", ["parked", "token"])
@pytest.mark.parametrize("name", sorted(PAGED_QUERIES))
def test_paged_query_reads_its_snapshot_across_updates_and_compaction(
    workdir, paged_nt, name, resume
):
    """Pages resumed the usual way continue the query parked on the server;
    with `resume="token"` every token is sent twice and the second answer
    is kept: the query is rebuilt from the token on the snapshot it names,
    each time after more updates (and, later, over the base from before
    the compaction)."""
    query = PAGED_QUERIES[name]
    s = Writable(fresh_index(workdir, f"iso-paged-{name}", str(paged_nt)))
    try:
        # The whole answer in one page: a page also ends at 16 MiB, which
        # 120,000 subjects pass (and the comparison below would then be
        # with the first page only).
        first = page(s.url, {"query": query}, "60s")
        assert "tern-next" not in first.headers
        whole = canonical(first)
        got, tokens, done = [], [], []
        # Pages end at a quantum or at PAGE_ROWS rows, whichever comes
        # first: a query fast enough to finish in a few quanta still takes
        # more pages than there are updates to interleave.
        r = page(s.url, {"query": query, "page-rows": PAGE_ROWS}, QUANTUM)
        while True:
            got += canonical(r)
            token = r.headers.get("tern-next")
            if token is None:
                break
            tokens.append((token, len(got)))
            done.append(interleave(s, len(tokens) - 1))
            r = page(s.url, {"next": token, "page-rows": PAGE_ROWS}, QUANTUM)
            if resume == "token":
                r = page(s.url, {"next": token, "page-rows": PAGE_ROWS}, QUANTUM)
            assert r.headers["tern-resumed-from"] == resume
            assert int(r.headers["tern-rows-before"]) == len(got)
        assert len(tokens) >= len(INTERLEAVED), "the query should take more pages than that"
        assert done[: len(INTERLEAVED)] == [a.split()[0] for a in INTERLEAVED]
        assert sorted(got) == sorted(whole)
        assert s.metrics()["tern_compactions_total"] == 1
        # The data did change under the query.
        assert sorted(canonical(page(s.url, {"query": query}, "60s"))) != sorted(whole)
        # The first token once more, after all the updates: the same rest.
        token, before = tokens[0]
        r = page(s.url, {"next": token}, QUANTUM)
        assert r.headers["tern-resumed-from"] == "token"
        rest = canonical(r)
        while "tern-next" in r.headers:
            r = page(s.url, {"next": r.headers["tern-next"]}, QUANTUM)
            rest += canonical(r)
        assert sorted(got[:before] + rest) == sorted(whole)
    finally:
        s.stop()


# --- Across servers ------------------------------------------------------


def test_token_resumes_on_another_server_with_a_copy_of_the_index(workdir, iso_nt, key_file):
    query = PAGED_QUERIES["filter"]
    a = Writable(fresh_index(workdir, "iso-a", str(iso_nt)), "--token-key", str(key_file))
    b = None
    try:
        a.ok(f"DELETE {{ ?s <{E}n> ?o }} WHERE {{ ?s <{E}n> ?o FILTER(?o >= 23000) }}")
        a.ok(f"INSERT DATA {{ <{E}s30000> <{E}n> 30000 . <{E}s00100> <{E}n> 100100 }}")
        version = a.version()
        assert version == 2
        # A is idle: its log is durable; the copy is A's data at `version`.
        copy = copy_index(a.index, workdir, "iso-b")
        b = Server(copy, "--token-key", str(key_file))
        assert b.metrics()["tern_store_version"] == version
        on_snapshot = sorted(canonical(page(b.url, {"query": query}, "60s")))
        assert sorted(canonical(page(a.url, {"query": query}, "60s"))) == on_snapshot

        r = page(a.url, {"query": query}, QUANTUM)
        first = canonical(r)
        token = r.headers["tern-next"]
        # A moves on: deletes and inserts matching triples, and compacts.
        a.ok(f"DELETE {{ ?s <{E}n> ?o }} WHERE {{ ?s <{E}n> ?o FILTER(?o >= 10000) }}")
        assert a.compact()["compacted"] is True
        a.ok(f"INSERT DATA {{ <{E}s99999> <{E}n> 99999 }}")
        assert a.version() == version + 2
        assert sorted(canonical(page(a.url, {"query": query}, "60s"))) != on_snapshot

        r = page(b.url, {"next": token}, QUANTUM)
        assert r.headers["tern-resumed-from"] == "token"
        rest = canonical(r)
        pages = 2
        while "tern-next" in r.headers:
            # Alternate between the servers: both can read that snapshot.
            url = (a.url, b.url)[pages % 2]
            r = page(url, {"next": r.headers["tern-next"]}, QUANTUM)
            rest += canonical(r)
            pages += 1
        assert pages >= 4
        assert sorted(first + rest) == on_snapshot
    finally:
        a.stop()
        if b:
            b.stop()


# --- Snapshots no longer kept --------------------------------------------


def test_token_of_a_snapshot_no_longer_kept_is_410(workdir, iso_nt):
    query = PAGED_QUERIES["scan"]
    s = Writable(fresh_index(workdir, "iso-kept", str(iso_nt)), "--kept-snapshots", "1")
    try:
        whole = sorted(canonical(page(s.url, {"query": query}, "60s")))
        r = page(s.url, {"query": query}, QUANTUM)
        got = canonical(r)
        s.ok(f"INSERT DATA {{ <{E}new1> <{E}n> 1 }}")
        # The one kept snapshot is the token's: it resumes after the update.
        r = page(s.url, {"next": r.headers["tern-next"]}, QUANTUM)
        got += canonical(r)
        token = r.headers["tern-next"]
        # A second update and a paged query on the new data: keeping that
        # query's snapshot drops the first one.
        s.ok(f"INSERT DATA {{ <{E}new2> <{E}n> 2 }}")
        other = page(s.url, {"query": query}, QUANTUM)
        assert "tern-next" in other.headers
        assert s.metrics()["tern_snapshots_kept"] == 1
        r = requests.post(s.url, data={"next": token, "quantum": QUANTUM}, timeout=60)
        assert r.status_code == 410, r.text
        assert "no longer kept" in r.text and "run the query again" in r.text
        assert "@0" in r.text and "@2" in r.text  # the token's snapshot, the store's
        # The newer query's token still works, and gives the new data.
        r = other
        newer = canonical(r)
        while "tern-next" in r.headers:
            r = page(s.url, {"next": r.headers["tern-next"]}, QUANTUM)
            newer += canonical(r)
        assert len(newer) == len(whole) + 2
        assert len(got) < len(whole)
    finally:
        s.stop()
