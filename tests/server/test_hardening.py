"""Inputs that once killed or wedged the server: each gets a clear 4xx (or a
correct answer), and the server keeps serving afterwards."""

import re
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
import requests

from conftest import SAMPLE, Server, tern_bin
from writes import credential_file, fresh_index

# The engine's documented limits (tern_engine::MAX_TEXT_NESTING and
# MAX_ALGEBRA_DEPTH).
TEXT_NESTING = 256
ALGEBRA_DEPTH = 2000

ALIVE = "ASK { ?s ?p ?o }"


def post(server, query, **kw):
    return requests.post(
        server.url,
        data=query.encode(),
        headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"},
        timeout=kw.pop("timeout", 120),
        **kw,
    )


def assert_alive(server):
    assert server.proc.poll() is None, server.access_log()[-4000:]
    r = post(server, ALIVE, timeout=30)
    assert r.status_code == 200 and r.json()["boolean"] is True


def deep_shapes():
    """The shapes of the fault report, each far past the limits."""
    return {
        "1,000 nested groups": "SELECT * WHERE " + "{" * 1000 + "?s ?p ?o" + "}" * 1000,
        "1,000 nested parentheses": "SELECT * WHERE { ?s ?p ?o FILTER(" + "(" * 1000 + "?o" + ")" * 1000 + ") }",
        "10,000 nested groups": "SELECT * WHERE " + "{" * 10000 + "?s ?p ?o" + "}" * 10000,
        "1,000 nested negations": "SELECT * WHERE { ?s ?p ?o FILTER(" + "!(" * 1000 + "?o" + ")" * 1000 + ") }",
        "2,000 OPTIONALs": "SELECT * WHERE { ?s ?p ?o " + "OPTIONAL { ?s ?p ?o } " * 2000 + "}",
        "20,000 UNION branches": "SELECT * WHERE { " + " UNION ".join(["{ ?s ?p ?o }"] * 20000) + " }",
        "10,000 FILTERs": "SELECT * WHERE { ?s ?p ?o " + "FILTER(?o != 1) " * 10000 + "}",
        "50,000 additions": "SELECT * WHERE { ?s ?p ?o FILTER(?o != 0" + " + 1" * 50000 + ") }",
        "20,000 path steps": "SELECT * WHERE { ?s " + "/".join(["<http://e/p>*"] * 20000) + " ?o }",
    }


def test_deep_queries_get_400_and_the_server_lives(server):
    for name, query in deep_shapes().items():
        r = post(server, query)
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
        assert "levels" in r.text and "limit" in r.text, (name, r.text[:300])
    assert_alive(server)


def test_long_sequences_of_plain_predicates_are_answered_or_refused(server):
    """The parser turns `p/p/.../p` into one basic graph pattern of a
    pattern per step (no depth, but ordering its joins takes quadratic
    time: 16,000 steps held a worker 51 s). Up to 1,000 are answered; a
    50,000-step one is refused at once."""
    query = "SELECT * WHERE { ?s " + "/".join(["a"] * 900) + " ?o }"
    r = post(server, query)
    assert r.status_code == 200, r.text[:300]
    assert r.json()["results"]["bindings"] == []
    started = time.monotonic()
    query = "SELECT * WHERE { ?s " + "/".join(["<http://e/p>"] * 50000) + " ?o }"
    r = post(server, query)
    assert r.status_code == 400 and "triple patterns" in r.text, r.text[:300]
    assert time.monotonic() - started < 3
    assert_alive(server)


def test_queries_the_parser_would_take_ages_over_are_refused(server):
    """The parser reads the operands of `!`, REGEX, SUBSTR and REPLACE twice;
    nested 30 deep that is 2^30 passes (22 took 13 s before the check).
    A megabyte of `!` would recurse a million levels deep."""
    shapes = [
        "ASK { FILTER(" + "!(" * 30 + "false" + ")" * 30 + ") }",
        "ASK { FILTER(" + "REGEX(" * 30 + '"a"' + ', "a")' * 30 + ") }",
        "ASK { FILTER(" + "SUBSTR(" * 30 + '"a"' + ", 1)" * 30 + ' = "a") }',
        "ASK { FILTER(" + "REPLACE(" * 30 + '"a"' + ', "a", "b")' * 30 + ' = "a") }',
        "ASK { FILTER(" + "!" * 1_000_000 + "?o) }",
    ]
    for query in shapes:
        r = post(server, query, timeout=30)
        assert r.status_code == 400, (query[:40], r.text[:300])
        assert "limit" in r.text, r.text[:300]
    assert_alive(server)


def test_deep_queries_by_get_and_form(server):
    query = "SELECT * WHERE " + "{" * 1000 + "?s ?p ?o" + "}" * 1000
    assert requests.post(server.url, data={"query": query}, timeout=60).status_code == 400
    assert requests.get(server.url, params={"query": query}, timeout=60).status_code == 400
    assert_alive(server)


def test_nesting_within_the_limits_is_answered(server):
    """Queries just inside both limits run to a correct answer: the worker
    stacks are sized for them."""
    inner = TEXT_NESTING - 10
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    expected = int(post(server, count).json()["results"]["bindings"][0]["n"]["value"])

    def n(query):
        r = post(server, query)
        assert r.status_code == 200, r.text[:300]
        return int(r.json()["results"]["bindings"][0]["n"]["value"])

    groups = "SELECT (COUNT(*) AS ?n) WHERE " + "{" * inner + "?s ?p ?o" + "}" * inner
    assert n(groups) == expected
    parens = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(" + "(" * inner + "true" + ")" * inner + ") }"
    assert n(parens) == expected
    # Negations make the parser read their operand twice: a dozen nested
    # ones inside 200 brackets is well within its budget.
    negations = (
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER("
        + "(" * 200 + "!(" * 13 + "false" + ")" * 13 + ")" * 200 + ") }"
    )
    assert n(negations) == expected

    branches = ALGEBRA_DEPTH - 100
    union = "SELECT (COUNT(*) AS ?n) WHERE { " + " UNION ".join(
        f"{{ BIND({i} AS ?x) }}" for i in range(branches)
    ) + " }"
    assert n(union) == branches
    optionals = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o " + "OPTIONAL { ?s ?p ?o } " * branches + "}"
    assert n(optionals) >= expected
    assert_alive(server)


def test_deep_expressions_over_large_batches(big_server):
    """A long chain of additions evaluated over batches large enough to be
    spread over the cores (rayon's threads need the stack too)."""
    steps = ALGEBRA_DEPTH - 100
    query = (
        "SELECT (COUNT(*) AS ?n) WHERE { ?s <http://example.org/big/n> ?v "
        f"FILTER(?v + {' + '.join(['0'] * steps)} >= 0) }}"
    )
    r = post(big_server, query)
    assert r.status_code == 200, r.text[:300]
    assert int(r.json()["results"]["bindings"][0]["n"]["value"]) == 50_000
    assert_alive(big_server)


def raw_exchange(server, data: bytes, timeout=10.0) -> bytes:
    """Sends `data` on a fresh connection and reads until the server closes
    it (or `timeout`)."""
    with socket.create_connection((server.host, server.port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        try:
            while part := sock.recv(65536):
                received += part
        except (socket.timeout, ConnectionResetError):
            pass
    return received


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def test_numbers_out_of_range_are_400_not_a_panic(server):
    for timeout in ["1e20", "1e300", "inf", "nan", "-1", "0", "1e400", "999999999999"]:
        r = requests.get(server.url, params={"query": ALIVE, "timeout": timeout}, timeout=10)
        assert r.status_code == 400, (timeout, r.status_code, r.text)
        assert "timeout" in r.text
    for quantum in ["1e300ms", "nan", "infs", "-5ms", "1e20s"]:
        r = requests.get(server.url, params={"query": ALIVE, "quantum": quantum}, timeout=10)
        assert r.status_code == 400, (quantum, r.status_code, r.text)
    # An unreadable q-value counts as 1, as an absent one does.
    r = requests.get(server.url, params={"query": ALIVE}, headers={"Accept": "text/csv;q=nan, application/json;q=inf"}, timeout=10)
    assert r.status_code == 200
    assert_alive(server)


def test_a_bad_chunk_size_is_400(server):
    head = (
        f"POST /sparql HTTP/1.1\r\nHost: {server.host}\r\nContent-Type: application/sparql-query\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    response = raw_exchange(server, head + b"zz\r\nASK {}\r\n0\r\n\r\n")
    assert status_of(response) == 400, response[:200]
    assert_alive(server)


def test_bytes_that_do_not_decode_to_utf8_are_refused(server):
    r = requests.post(
        server.url,
        data=b"query=ASK%20%7B%20FILTER(%22%FF%22)%20%7D",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=10,
    )
    assert r.status_code == 400 and "UTF-8" in r.text, r.text
    r = requests.get(server.url + "?query=ASK%7B%7D%C3", timeout=10)
    assert r.status_code == 400 and "UTF-8" in r.text, r.text
    # Well-formed percent-encoded UTF-8 still works, `+` is a space.
    r = requests.get(server.url + "?query=ASK+%7B+FILTER(%22%C3%A9%22+%3D+%22%C3%A9%22)+%7D", timeout=10)
    assert r.status_code == 200 and r.json()["boolean"] is True


@pytest.fixture(scope="module")
def strict_server(sample_index):
    s = Server(sample_index, "--header-timeout", "1s", "--body-timeout", "1s")
    yield s
    s.stop()


def test_slow_request_heads_lose_their_connections(strict_server):
    """300 connections that never finish their request head (slowloris):
    each is closed after the header timeout, and others are served meanwhile."""
    started = time.monotonic()
    socks = []
    for _ in range(300):
        sock = socket.create_connection((strict_server.host, strict_server.port), timeout=10)
        sock.sendall(b"GET /sparql?query=ASK%7B%7D HTTP/1.1\r\nHost: x\r\n")
        socks.append(sock)
    assert_alive(strict_server)
    closed = 0
    for sock in socks:
        try:
            data = sock.recv(65536)  # the server's close (maybe after a 408)
            closed += 1 if not data or data.startswith(b"HTTP/1.1 408") or data == b"" else 0
        except (socket.timeout, ConnectionResetError):
            closed += 1  # reset: closed too; a timeout would be 10 s
        finally:
            sock.close()
    elapsed = time.monotonic() - started
    assert closed == 300
    assert elapsed < 8, f"connections were held {elapsed:.1f} s"
    assert_alive(strict_server)


def test_a_body_that_never_arrives_is_408(strict_server):
    head = (
        f"POST /sparql HTTP/1.1\r\nHost: {strict_server.host}\r\nContent-Type: application/sparql-query\r\n"
        "Content-Length: 100\r\nConnection: close\r\n\r\nASK"
    ).encode()
    started = time.monotonic()
    response = raw_exchange(strict_server, head, timeout=10)
    assert status_of(response) == 408, response[:200]
    assert time.monotonic() - started < 5
    assert_alive(strict_server)


def test_refused_queries_are_not_logged_as_clients_that_left(server):
    before = server.access_log().count("client went away")
    for query in ["SELECT * WHERE { ?s ?p }", "SELECT * WHERE " + "{" * 300 + "}" * 300]:
        assert post(server, query).status_code == 400
    time.sleep(0.2)
    assert server.access_log().count("client went away") == before


def rss_mb(server) -> float:
    status = open(f"/proc/{server.proc.pid}/status").read()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024


def test_memory_is_given_back_when_the_server_is_idle(big_index):
    """Heavy queries in parallel raise RSS by a few hundred MB; once the
    last one ends, the allocator hands that back (caches kept small so
    that what stays is not the caches' rightful content)."""
    s = Server(big_index, "--workers", "2", "--vocab-cache", "1M", "--block-cache", "1M")
    try:
        heavy = [
            "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?o LIMIT 5",
            # STR(): a set of terms (COUNT(DISTINCT ?o) keeps only IDs).
            "SELECT (COUNT(DISTINCT STR(?o)) AS ?n) WHERE { ?s ?p ?o }",
            "SELECT ?s (COUNT(?o) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY DESC(?c) LIMIT 3",
            "SELECT (COUNT(*) AS ?n) WHERE { ?a <http://example.org/big/p0> ?o . ?b <http://example.org/big/p0> ?o }",
        ]
        for query in heavy:  # warm: what stays after one run of each is the baseline
            assert post(s, query, timeout=300).status_code == 200
        time.sleep(0.5)
        before = rss_mb(s)
        peak = before
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(post, s, heavy[i % 4], timeout=300) for i in range(16)]
            while not all(f.done() for f in futures):
                peak = max(peak, rss_mb(s))
                time.sleep(0.02)
            assert all(f.result().status_code == 200 for f in futures)
        assert peak > before + 40, (before, peak)
        # Finished queries' operators are dropped on a background thread
        # (run/retire.rs), which on a loaded machine takes longer than a
        # second: wait for the memory to come back, up to a bound.
        limit = before * 1.2 + 10
        deadline = time.monotonic() + 20
        after = rss_mb(s)
        while after > limit and time.monotonic() < deadline:
            time.sleep(0.2)
            after = rss_mb(s)
        assert after <= limit, (before, peak, after)
    finally:
        s.stop()


ENDLESS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"  # 4e10 rows of the big index


def stalled_client(server, query=ENDLESS):
    """A connection that asks for a huge result and never reads it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((server.host, server.port))
    target = "/sparql?" + urlencode({"query": query})
    sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nAccept: text/tab-separated-values\r\n\r\n".encode())
    return sock


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_clients_that_never_read_hold_no_admission_slot(big_index):
    """70 clients start endless results and never read: their queries are
    parked off the run queue, so another client is still served at once
    (they used to hold every slot: 503 for everyone)."""
    s = Server(big_index, "--workers", "2", "--max-queued", "8", "--max-per-client", "1000")
    socks = []
    try:
        # They come a few at a time (arriving all in the same millisecond,
        # the ones past the queue would get 503 before the first ones have
        # filled their buffers and been parked).
        for wave in range(14):
            socks.extend(stalled_client(s) for _ in range(5))
            want = 5 * (wave + 1)
            assert wait_for(lambda: s.metrics().get("tern_queries_stalled", 0) >= want), s.metrics()
        started = time.monotonic()
        r = post(s, "SELECT (COUNT(*) AS ?n) WHERE { ?s <http://example.org/big/n> ?v }", timeout=30)
        assert r.status_code == 200, r.text
        assert int(r.json()["results"]["bindings"][0]["n"]["value"]) == 50_000
        assert time.monotonic() - started < 5
        # No worker spins on them: the parked queries use no CPU.
        cpu = lambda: sum(map(int, open(f"/proc/{s.proc.pid}/stat").read().rsplit(")", 1)[1].split()[11:13]))
        before = cpu()
        time.sleep(1.0)
        assert cpu() - before < 50, "parked queries still run"  # clock ticks: < 0.5 s of CPU in 1 s
    finally:
        for sock in socks:
            sock.close()
        s.stop()


def test_parked_queries_are_dropped_after_the_stall_timeout(big_index):
    s = Server(big_index, "--workers", "2", "--stall-timeout", "2s", "--max-per-client", "1000")
    socks = []
    try:
        for _ in range(5):
            socks.append(stalled_client(s))
        assert wait_for(lambda: s.metrics().get("tern_queries_stalled", 0) >= 5)
        assert wait_for(lambda: s.metrics().get("tern_stalled_dropped_total", 0) >= 5, timeout=20)
        metrics = s.metrics()
        assert metrics["tern_queries_stalled"] == 0 and metrics["tern_queries_active"] == 0, metrics
        # The dropped responses end unfinished: a reader sees no final chunk.
        socks[0].settimeout(10)
        data = b""
        while part := socks[0].recv(1 << 20):
            data += part
        assert data.startswith(b"HTTP/1.1 200") and not data.endswith(b"\r\n0\r\n\r\n")
        assert_alive(s)
    finally:
        for sock in socks:
            sock.close()
        s.stop()


def test_one_client_gets_429_beyond_its_share(big_index):
    s = Server(big_index, "--workers", "2", "--max-per-client", "2")
    socks = []
    try:
        socks = [stalled_client(s), stalled_client(s)]
        assert wait_for(lambda: s.metrics().get("tern_queries_stalled", 0) >= 2)
        r = post(s, ALIVE, timeout=30)
        assert r.status_code == 429, r.text
        assert r.headers["Retry-After"] == "1" and "already has 2 queries" in r.text
        for sock in socks:
            sock.close()
        # Closed clients cancel their queries and give their slots back.
        assert wait_for(lambda: post(s, ALIVE, timeout=30).status_code == 200, timeout=20)
    finally:
        for sock in socks:
            sock.close()
        s.stop()


@pytest.fixture
def one_worker_fcfs(big_index):
    s = Server(big_index, "--workers", "1", "--quantum", "0")
    yield s
    s.stop()


def test_time_waiting_for_a_worker_counts_against_the_timeout(one_worker_fcfs):
    """A request's timeout counts from when it came, as its client sees it:
    a quick query queued behind a 3-second one with timeout=1 gets its 504
    when a worker takes it up, instead of a full second more."""
    s = one_worker_fcfs
    long_query = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    with ThreadPoolExecutor(1) as pool:
        long = pool.submit(
            lambda: requests.post(s.url, data={"query": long_query, "timeout": "3"}, timeout=60)
        )
        time.sleep(0.5)
        quick = requests.post(s.url, data={"query": ALIVE, "timeout": "1"}, timeout=60)
        assert long.result().status_code == 504
    assert quick.status_code == 504, quick.text[:300]
    assert "timeout" in quick.text.lower() or "time" in quick.text.lower(), quick.text[:300]
    assert_alive(s)


def test_a_log_that_cannot_be_written_loses_lines_not_requests(workdir):
    """The server's log (stderr) on a full disk: /dev/full fails every write
    with ENOSPC. Log lines are lost; queries and updates are still answered
    and the server stays up (the log's error report used to panic request
    threads and stopped the server under a write benchmark)."""
    index = fresh_index(workdir, "log-full", str(SAMPLE))
    credential = credential_file(workdir)
    auth = {"Authorization": "Bearer " + credential.read_text().strip()}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open("/dev/full", "wb") as full:
        proc = subprocess.Popen(
            [tern_bin(), "serve", "--index", str(index), "--port", str(port),
             "--update-token", str(credential)],
            stdout=full, stderr=full,
        )
    url = f"http://127.0.0.1:{port}/sparql"
    try:
        assert wait_for(lambda: _answers(url), timeout=30), "the server did not start"

        def query(i):
            return requests.get(url, params={"query": f"SELECT ?s WHERE {{ ?s ?p {i} }}"}, timeout=30)

        def update(i):
            return requests.post(url, data={"update": f"INSERT DATA {{ <http://e/full{i}> <http://e/p> {i} }}"},
                                 headers=auth, timeout=30)

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda i: (query if i % 2 else update)(i), range(200)))
        assert [r.status_code for r in answers] == [200] * 200
        assert proc.poll() is None
        count = requests.get(url, params={"query": "SELECT (COUNT(*) AS ?n) { ?s <http://e/p> ?o }"},
                             headers={"Accept": "text/csv"}, timeout=30)
        assert count.text.split()[-1] == "100"
    finally:
        proc.terminate()
        proc.wait(10)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, params={"query": "ASK {}"}, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def test_a_load_whose_stderr_closes_finishes_the_index(workdir, big_nt):
    """`tern load ... 2>&1 | head -1`: the reader goes away after the first
    progress line; the load goes on, builds the index and exits 0 (its
    progress and summary lines used to panic on the closed pipe)."""
    index = workdir / f"head-closed-{time.monotonic_ns()}"
    proc = subprocess.Popen([tern_bin(), "load", "--index", str(index), str(big_nt)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert b" [tern load] " in proc.stdout.readline()
    proc.stdout.close()
    assert proc.wait(300) == 0
    s = Server(index)
    try:
        r = requests.get(s.url, params={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"},
                         headers={"Accept": "text/csv"}, timeout=60)
        assert int(r.text.split()[-1]) > 0
    finally:
        s.stop()
