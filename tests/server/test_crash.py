"""Crash safety of updates: `tern serve` killed with SIGKILL at random
moments while clients write, and restarted on the same directory.

Every write is one request inserting two triples for a number i:

    INSERT DATA { <http://e/n{i}> <http://e/v> i . <http://e/m{i}> <http://e/v> i }

After each restart the store must open, hold both triples of every i whose
request was acknowledged (200: the server answers only once the update is
in the synced log), hold no i with one triple of the two (a request is one
transaction), hold nothing that was never sent, have one version per
committed request, and still hold the data it was built from. The trials
share one directory, so later trials replay longer logs. A second test
kills the server while a POST /compact runs (the new base is being built,
or swapped in), and also checks that a restart clears what the broken
compaction left.

SIGKILL ends the process, not the machine: what the kernel has already
been given survives, so this checks that acknowledged writes were handed
over and that recovery is consistent, not power-loss durability.

TERN_CRASH_TRIALS sets the number of trials (20 by default; the compaction
test runs half as many, at least 4). bench/crash_trials.py runs the same
trials at length and reports on them.
"""

import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from conftest import Server
from writes import credential_file, fresh_index, rows

TRIALS = int(os.environ.get("TERN_CRASH_TRIALS", "20"))
COMPACTION_TRIALS = max(4, TRIALS // 2)
WRITERS = 3
BASE_TRIPLES = 50
V = "http://e/v"
WRITTEN = re.compile(r"^<http://e/([nm])(\d+)>$")


def write(i: int) -> str:
    return f"INSERT DATA {{ <http://e/n{i}> <{V}> {i} . <http://e/m{i}> <{V}> {i} }}"


@dataclass
class Ledger:
    """What the clients sent and what the server acknowledged, over all
    trials on one directory."""

    next_i: int = 0
    sent: set = field(default_factory=set)
    acked: set = field(default_factory=set)
    # Answers other than 200 (there should be none).
    errors: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Set by the first acknowledgement since `writers` last started.
    first_ack: threading.Event = field(default_factory=threading.Event)

    def take(self) -> int:
        with self.lock:
            self.next_i += 1
            self.sent.add(self.next_i)
            return self.next_i


@pytest.fixture
def crash_index(workdir) -> Path:
    source = workdir / "crash-base.nt"
    with open(source, "w") as f:
        for k in range(BASE_TRIPLES):
            f.write(f"<http://e/base{k}> <http://e/base> \"base {k}\" .\n")
    return fresh_index(workdir, "crash", str(source))


class Crashable:
    """`tern serve --update-token` on `index`, to be killed with SIGKILL."""

    def __init__(self, index: Path, credential: Path, *extra: str):
        # The restart must work: a server that cannot open the store fails
        # the test here, with its log.
        self.server = Server(index, "--update-token", str(credential), "--workers", "2", *extra)
        self.auth = {"Authorization": "Bearer " + credential.read_text().strip()}

    def kill(self):
        self.server.proc.kill()
        self.server.proc.wait(10)
        self.server.log.close()

    def stop(self):
        self.server.stop()


def check(server: Crashable, index: Path, ledger: Ledger) -> dict:
    """The restarted store against the ledger; returns what it holds."""
    found = {}
    for row in rows(server.server.url, f"SELECT ?s ?o WHERE {{ ?s <{V}> ?o }}"):
        row = dict(row)
        m = WRITTEN.match(row["s"])
        assert m, row
        i = int(m.group(2))
        assert row["o"] == f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>', row
        found.setdefault(i, set()).add(m.group(1))
    half = sorted(i for i, kinds in found.items() if kinds != {"n", "m"})
    lost = sorted(ledger.acked - found.keys())
    unknown = sorted(found.keys() - ledger.sent)
    assert not half, f"half-applied writes: {half[:20]}"
    assert not lost, f"acknowledged writes lost: {lost[:20]} (of {len(ledger.acked)})"
    assert not unknown, f"writes nobody sent: {unknown[:20]}"
    assert not ledger.errors, ledger.errors[:5]
    metrics = server.server.metrics()
    # One version per committed request; compactions add none.
    assert metrics["tern_store_version"] == len(found)
    (count,) = rows(server.server.url, "SELECT (COUNT(*) AS ?n) { ?s <http://e/base> ?o }")
    assert dict(count)["n"].startswith(f'"{BASE_TRIPLES}"')
    # A writable open clears what an interrupted compaction left.
    assert not (index / "compaction").exists()
    bases = index / "bases"
    if bases.exists():
        assert len(list(bases.iterdir())) <= 1, list(bases.iterdir())
    return found


def writers(server: Crashable, ledger: Ledger, stop: threading.Event) -> list:
    """Starts the writing clients: each sends numbered writes until its
    connection fails (the server died) or `stop` is set."""

    ledger.first_ack.clear()

    def run():
        session = requests.Session()
        while not stop.is_set():
            i = ledger.take()
            try:
                r = session.post(
                    server.server.url, data={"update": write(i)}, headers=server.auth,
                    timeout=(2, 10),
                )
            except requests.RequestException:
                return
            with ledger.lock:
                if r.status_code == 200:
                    ledger.acked.add(i)
                    ledger.first_ack.set()
                else:
                    ledger.errors.append(f"write {i}: {r.status_code} {r.text}")

    threads = [threading.Thread(target=run, daemon=True) for _ in range(WRITERS)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize("wal_sync", ["commit", "50ms"])
def test_acknowledged_writes_survive_sigkill(crash_index, workdir, wal_sync):
    """With `--wal-sync 50ms` an update is acknowledged once its log record
    is written to the kernel (synced later): that too must survive SIGKILL,
    which ends the process, not the kernel."""
    credential = credential_file(workdir)
    ledger = Ledger()
    rng = random.Random(20261125)
    acked_before = 0
    sync = ("--wal-sync", wal_sync)
    for trial in range(TRIALS if wal_sync == "commit" else COMPACTION_TRIALS):
        server = Crashable(crash_index, credential, *sync)
        check(server, crash_index, ledger)
        stop = threading.Event()
        threads = writers(server, ledger, stop)
        # The kill comes at a random moment once writes are flowing: on a
        # loaded machine the first synced write can take longer than the
        # shortest delay, and a trial that acknowledged nothing tests nothing.
        assert ledger.first_ack.wait(30), f"trial {trial}: no write acknowledged in 30 s"
        time.sleep(rng.uniform(0.05, 0.4))
        server.kill()
        for t in threads:
            t.join(15)
        assert not any(t.is_alive() for t in threads)
        assert len(ledger.acked) > acked_before, f"trial {trial}: no write acknowledged"
        acked_before = len(ledger.acked)
    server = Crashable(crash_index, credential, *sync)
    try:
        found = check(server, crash_index, ledger)
    finally:
        server.stop()
    print(
        f"{TRIALS} trials: {len(ledger.sent)} writes sent, {len(ledger.acked)} acknowledged, "
        f"{len(found)} applied"
    )


def test_compaction_killed_midway_leaves_a_store_that_opens(crash_index, workdir):
    credential = credential_file(workdir)
    ledger = Ledger()
    rng = random.Random(11252026)
    # How long a compaction of this store takes here, to kill within it.
    server = Crashable(crash_index, credential)
    stop = threading.Event()
    threads = writers(server, ledger, stop)
    time.sleep(0.2)
    r = requests.post(server.server.base + "/compact", headers=server.auth, timeout=60)
    assert r.status_code == 200 and r.json()["compacted"], r.text
    took = r.json()["seconds"]
    stop.set()
    for t in threads:
        t.join(15)
    check(server, crash_index, ledger)
    server.stop()

    midway = 0
    for trial in range(COMPACTION_TRIALS):
        server = Crashable(crash_index, credential)
        check(server, crash_index, ledger)
        stop = threading.Event()
        threads = writers(server, ledger, stop)
        time.sleep(rng.uniform(0.02, 0.1))  # something to compact
        answer = {}

        def compact():
            try:
                answer["r"] = requests.post(
                    server.server.base + "/compact", headers=server.auth, timeout=60
                )
            except requests.RequestException as e:
                answer["error"] = e

        compactor = threading.Thread(target=compact, daemon=True)
        compactor.start()
        deadline = time.monotonic() + 10
        while compactor.is_alive() and time.monotonic() < deadline:
            if server.server.metrics().get("tern_compacting") == 1:
                break
            time.sleep(0.005)
        time.sleep(rng.uniform(0, took * 0.9))
        server.kill()
        compactor.join(15)
        for t in threads:
            t.join(15)
        if "error" in answer:
            midway += 1
        else:
            assert answer["r"].status_code == 200, answer["r"].text
    server = Crashable(crash_index, credential)
    try:
        found = check(server, crash_index, ledger)
        # The store still compacts, and answers the same after it.
        r = requests.post(server.server.base + "/compact", headers=server.auth, timeout=60)
        assert r.status_code == 200, r.text
        assert check(server, crash_index, ledger) == found
    finally:
        server.stop()
    print(
        f"{COMPACTION_TRIALS} trials, {midway} killed during the compaction: "
        f"{len(ledger.acked)} writes acknowledged, {len(found)} applied (compaction took {took:.2f} s)"
    )
    assert midway >= 1, "no trial killed the server during a compaction"
