#!/usr/bin/env python3
"""Crash trials: `tern serve` killed with SIGKILL at random moments while
clients write, restarted on the same directory, and checked.

    python3 bench/crash_trials.py                    # 100 trials
    python3 bench/crash_trials.py --trials 500 --out # and bench/results/crash-<date>.json

Each write is one update request inserting two triples for a number i:

    INSERT DATA { <http://e/n{i}> <http://e/v> i . <http://e/m{i}> <http://e/v> i }

A trial starts the server on the store (which replays the log the earlier
trials left: the directory is kept across trials), checks it, lets a few
clients write for a random 50-400 ms and kills the server. In a share of the
trials (--compaction-share) a POST /compact is started as well and the kill
comes while it runs. After the last trial the server is started once more
and checked.

Checked after every restart, and summed up at the end:
  reopen failures   the server did not come up on the directory
  lost              writes acknowledged (200) but missing
  half-applied      numbers with one of their two triples
  unknown           numbers present that no client sent
  version mismatch  tern_store_version is not the number of applied writes
  leftovers         compaction work or old bases left after the restart
Writes that were sent but not acknowledged (in flight at the kill) may be
present or not; both counts are reported.

SIGKILL ends the process, not the machine: this checks recovery and that
acknowledged writes were handed to the kernel, not power-loss durability.
The same trials run (fewer of them) in tests/server/test_crash.py.
"""
import argparse
import datetime
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from benchlib import BENCH, git_commit, machine

BASE_TRIPLES = 50
V = "http://e/v"
WRITTEN = re.compile(r"^http://e/([nm])(\d+)$")
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def default_tern() -> Path:
    if os.environ.get("TERN_BIN"):
        return Path(os.environ["TERN_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/tern-target"))
    release = target / "release/tern"
    return release if release.exists() else target / "debug/tern"


def write(i: int) -> str:
    return f"INSERT DATA {{ <http://e/n{i}> <{V}> {i} . <http://e/m{i}> <{V}> {i} }}"


class Server:
    """`tern serve --update-token` on a loopback port the OS picks."""

    def __init__(self, tern: Path, index: Path, credential: Path, log: Path):
        self.log_path = log
        self.log = open(log, "wb")
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [str(tern), "serve", "--index", str(index), "--port", "0",
             "--update-token", str(credential), "--workers", "2"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            m = re.search(r"SPARQL endpoint at http://([^/ ]+):(\d+)/sparql", text)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                self.open_seconds = time.monotonic() - started
                return
            if self.proc.poll() is not None:
                self.log.close()
                raise RuntimeError(f"tern serve exited:\n{text[-2000:]}")
            time.sleep(0.01)
        self.kill()
        raise RuntimeError("tern serve did not start within 60 s")

    def connect(self, timeout: float = 10) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def post(self, path: str, form: dict | None, headers: dict, conn=None, timeout: float = 60):
        """(status, body) of a POST; raises OSError/HTTPException when the
        server is gone."""
        own = conn is None
        conn = conn or self.connect(timeout)
        try:
            body = urllib.parse.urlencode(form or {})
            conn.request("POST", path, body=body, headers={
                "Content-Type": "application/x-www-form-urlencoded", **headers})
            r = conn.getresponse()
            return r.status, r.read().decode()
        finally:
            if own:
                conn.close()

    def metrics(self) -> dict:
        conn = self.connect()
        try:
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
        finally:
            conn.close()
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def select(self, query: str) -> list:
        status, body = self.post("/sparql", {"query": query},
                                 {"Accept": "application/sparql-results+json"})
        if status != 200:
            raise RuntimeError(f"query failed: {status} {body[:500]}")
        return json.loads(body)["results"]["bindings"]

    def kill(self):
        self.proc.kill()
        self.proc.wait(10)
        self.log.close()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class Ledger:
    """What the clients sent and what the server acknowledged, over all trials."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next_i = 0
        self.sent: set[int] = set()
        self.acked: set[int] = set()
        self.errors: list[str] = []

    def take(self) -> int:
        with self.lock:
            self.next_i += 1
            self.sent.add(self.next_i)
            return self.next_i


def check(server: Server, index: Path, ledger: Ledger) -> dict:
    """The restarted store against the ledger."""
    found: dict[int, set] = {}
    malformed = 0
    for b in server.select(f"SELECT ?s ?o WHERE {{ ?s <{V}> ?o }}"):
        m = WRITTEN.match(b["s"]["value"])
        if not m or b["o"].get("datatype") != INTEGER or b["o"]["value"] != m.group(2):
            malformed += 1
            continue
        found.setdefault(int(m.group(2)), set()).add(m.group(1))
    half = sorted(i for i, kinds in found.items() if kinds != {"n", "m"})
    lost = sorted(ledger.acked - found.keys())
    unknown = sorted(found.keys() - ledger.sent)
    version = int(server.metrics()["tern_store_version"])
    base = server.select("SELECT (COUNT(*) AS ?n) { ?s <http://e/base> ?o }")
    bases = index / "bases"
    leftovers = (index / "compaction").exists() or (bases.exists() and len(list(bases.iterdir())) > 1)
    return {
        "applied": set(found),
        "half": half,
        "lost": lost,
        "unknown": unknown,
        "malformed": malformed,
        "version_mismatch": version != len(found),
        "base_intact": int(base[0]["n"]["value"]) == BASE_TRIPLES,
        "leftovers": leftovers,
    }


def start_writers(server: Server, ledger: Ledger, auth: dict, count: int, stop: threading.Event):
    def run():
        conn = server.connect(10)
        try:
            while not stop.is_set():
                i = ledger.take()
                try:
                    status, body = server.post("/sparql", {"update": write(i)}, auth, conn=conn)
                except (OSError, http.client.HTTPException):
                    return  # the server is gone
                with ledger.lock:
                    if status == 200:
                        ledger.acked.add(i)
                    else:
                        ledger.errors.append(f"write {i}: {status} {body[:200]}")
        finally:
            conn.close()

    threads = [threading.Thread(target=run, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    return threads


def compact_in_background(server: Server, auth: dict) -> tuple:
    answer = {}

    def run():
        try:
            answer["status"], answer["body"] = server.post("/compact", None, auth, timeout=300)
        except (OSError, http.client.HTTPException) as e:
            answer["error"] = repr(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tern", type=Path, default=default_tern())
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--compaction-share", type=float, default=0.25,
                        help="share of the trials that kill during a POST /compact")
    parser.add_argument("--writers", type=int, default=3, help="concurrent writing clients")
    parser.add_argument("--kill-ms", type=float, nargs=2, default=(50, 400), metavar=("MIN", "MAX"),
                        help="random delay before the kill in write-only trials")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, help="work directory (default: a temporary one, removed)")
    parser.add_argument("--out", nargs="?", const="auto", type=str,
                        help="write JSON (default path: bench/results/crash-<date>.json)")
    args = parser.parse_args()
    if not args.tern.exists():
        print(f"no tern binary at {args.tern} (--tern or TERN_BIN)", file=sys.stderr)
        return 2

    work = args.dir or Path(tempfile.mkdtemp(prefix="tern-crash-"))
    work.mkdir(parents=True, exist_ok=True)
    index = work / "store"
    if index.exists():
        shutil.rmtree(index)
    source = work / "base.nt"
    with open(source, "w") as f:
        for k in range(BASE_TRIPLES):
            f.write(f"<http://e/base{k}> <http://e/base> \"base {k}\" .\n")
    subprocess.run([str(args.tern), "load", "--index", str(index), "--force", str(source)],
                   check=True, capture_output=True)
    credential = work / "update-token"
    credential.write_text(os.urandom(16).hex() + "\n")
    auth = {"Authorization": "Bearer " + credential.read_text().strip()}

    rng = random.Random(args.seed)
    ledger = Ledger()
    totals = {"lost": set(), "half": set(), "unknown": set(), "malformed": 0,
              "version_mismatches": 0, "base_damaged": 0, "leftovers": 0}
    reopen_failures, open_seconds, compaction_trials, killed_compacting = [], [], 0, 0
    compaction_seconds = 0.4
    started = time.monotonic()
    trial = 0
    applied: set = set()

    def restart() -> Server | None:
        nonlocal applied
        try:
            server = Server(args.tern, index, credential, work / f"serve-{trial}.log")
        except RuntimeError as e:
            reopen_failures.append({"trial": trial, "error": str(e)})
            return None
        open_seconds.append(server.open_seconds)
        result = check(server, index, ledger)
        for key in ("lost", "half", "unknown"):
            totals[key] |= set(result[key])
        totals["malformed"] += result["malformed"]
        totals["version_mismatches"] += result["version_mismatch"]
        totals["base_damaged"] += not result["base_intact"]
        totals["leftovers"] += result["leftovers"]
        applied = result["applied"]
        return server

    for trial in range(args.trials):
        server = restart()
        if server is None:
            break
        stop = threading.Event()
        writers = start_writers(server, ledger, auth, args.writers, stop)
        compacting = rng.random() < args.compaction_share
        if compacting:
            compaction_trials += 1
            time.sleep(rng.uniform(0.02, 0.1))
            compactor, answer = compact_in_background(server, auth)
            deadline = time.monotonic() + 30
            while compactor.is_alive() and time.monotonic() < deadline:
                try:
                    if server.metrics().get("tern_compacting") == 1:
                        break
                except (OSError, http.client.HTTPException):
                    break
                time.sleep(0.005)
            time.sleep(rng.uniform(0, compaction_seconds * 0.9))
        else:
            time.sleep(rng.uniform(*args.kill_ms) / 1e3)
        server.kill()
        for t in writers:
            t.join(30)
        if compacting:
            compactor.join(30)
            if "error" in answer:
                killed_compacting += 1
            elif answer.get("status") == 200 and '"compacted":true' in answer["body"]:
                compaction_seconds = json.loads(answer["body"])["seconds"]
        done = trial + 1
        if done % 10 == 0 or done == args.trials:
            print(f"trial {done}/{args.trials}: {len(ledger.acked)} acknowledged, "
                  f"{len(totals['lost'])} lost, {len(totals['half'])} half-applied, "
                  f"{len(reopen_failures)} reopen failures", flush=True)
    trial = args.trials
    server = restart()
    wal_bytes = None
    if server is not None:
        wal_bytes = int(server.metrics().get("tern_wal_bytes", 0))
        server.stop()
    elapsed = time.monotonic() - started

    in_flight = ledger.sent - ledger.acked
    summary = {
        "trials": args.trials,
        "compaction_trials": compaction_trials,
        "killed_during_compaction": killed_compacting,
        "writes_sent": len(ledger.sent),
        "acknowledged": len(ledger.acked),
        "applied": len(applied),
        "unacknowledged_applied": len(in_flight & applied),
        "unacknowledged_missing": len(in_flight - applied),
        "lost": len(totals["lost"]),
        "half_applied": len(totals["half"]),
        "unknown": len(totals["unknown"]),
        "malformed": totals["malformed"],
        "version_mismatches": totals["version_mismatches"],
        "base_damaged": totals["base_damaged"],
        "leftovers": totals["leftovers"],
        "reopen_failures": len(reopen_failures),
        "write_errors": len(ledger.errors),
        "open_seconds_first": round(open_seconds[0], 3) if open_seconds else None,
        "open_seconds_max": round(max(open_seconds), 3) if open_seconds else None,
        "final_wal_bytes": wal_bytes,
        "seconds": round(elapsed, 1),
    }
    width = max(map(len, summary))
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")
    failed = (summary["lost"] or summary["half_applied"] or summary["unknown"] or summary["malformed"]
              or summary["version_mismatches"] or summary["base_damaged"] or summary["leftovers"]
              or summary["reopen_failures"] or summary["write_errors"])
    print("FAILED" if failed else "OK: every acknowledged write survived, none half-applied")

    if args.out:
        date = datetime.date.today().isoformat()
        path = BENCH / "results" / f"crash-{date}.json" if args.out == "auto" else Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        report = {
            "date": date,
            "commit": git_commit(),
            "machine": machine(),
            "tern": str(args.tern),
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "summary": summary,
            "examples": {
                "lost": sorted(totals["lost"])[:20],
                "half_applied": sorted(totals["half"])[:20],
                "unknown": sorted(totals["unknown"])[:20],
                "reopen_failures": reopen_failures[:5],
                "write_errors": ledger.errors[:5],
            },
        }
        path.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {path}")
    if args.dir is None and not failed:
        shutil.rmtree(work, ignore_errors=True)
    elif failed:
        print(f"logs and store kept in {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
