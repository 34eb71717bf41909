"""Fixtures: indexes built with `tern load`, and `tern serve` processes on
loopback ports chosen by the OS."""

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample.ttl"
W3C_PROTOCOL = Path(
    os.environ.get("TERN_W3C_DIR", ROOT.parent / "shared" / "w3c-sparql")
) / "sparql11" / "protocol"
# Triples in the generated data set: enough that a cross product of it never
# ends, and that a full export spans many chunks.
BIG_TRIPLES = 200_000
# Seconds of work over the big index's 2.5 million joined rows before its one
# row (both terms of every row decoded and concatenated): keeps a worker busy.
SILENT = (
    "SELECT (SUM(STRLEN(CONCAT(STR(?a), STR(?b)))) AS ?n) "
    "WHERE { ?a <http://example.org/big/p0> ?o . ?b <http://example.org/big/p0> ?o }"
)


def require(path: Path, variable: str) -> Path:
    """A shared input of the tests: under CI its absence fails the run;
    elsewhere the tests that need it are skipped, saying where to point
    `variable`."""
    if not path.exists():
        message = f"{path} is missing (set {variable})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def tern_bin() -> str:
    path = os.environ.get("TERN_BIN") or shutil.which("tern")
    if not path:
        pytest.exit("set TERN_BIN to the tern binary", returncode=2)
    return path


def load(index: Path, *args: str) -> Path:
    subprocess.run(
        [tern_bin(), "load", "--index", str(index), "--force", *args],
        check=True,
        capture_output=True,
    )
    return index


class Server:
    """A running `tern serve`; `url` is its /sparql endpoint."""

    def __init__(self, index: Path | None, *args: str, log_dir: Path | None = None, env: dict | None = None):
        """`index` None: `tern serve` chooses (its FILE arguments, or the
        bundled sample); the log then goes to `log_dir`."""
        log_dir = log_dir or index.parent
        self.log_path = log_dir / f"serve-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "wb")
        where = ["--index", str(index)] if index is not None else []
        self.proc = subprocess.Popen(
            [tern_bin(), "serve", *where, "--port", "0", *args],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=None if env is None else {**os.environ, **env},
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            text = self.log_path.read_text(errors="replace")
            m = re.search(r"SPARQL endpoint at (http://[^ ]+/sparql)", text)
            if m:
                self.url = m.group(1)
                self.base = self.url.rsplit("/", 1)[0]
                self.host, port = self.base.split("//")[1].split(":")
                self.port = int(port)
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"tern serve exited:\n{text}")
            time.sleep(0.05)
        raise RuntimeError("tern serve did not start")

    def metrics(self) -> dict:
        text = requests.get(self.base + "/metrics", timeout=10).text
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def access_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tern-server")


@pytest.fixture(scope="session")
def sample_index(workdir) -> Path:
    return load(workdir / "sample", str(SAMPLE))


@pytest.fixture(scope="session")
def big_nt(workdir) -> Path:
    path = workdir / "big.nt"
    with open(path, "w") as f:
        for i in range(BIG_TRIPLES):
            s = f"<http://example.org/big/s{i // 4}>"
            k = i % 4
            if k == 0:
                f.write(f"{s} <http://example.org/big/p0> <http://example.org/big/o{i % 997}> .\n")
            elif k == 1:
                f.write(f'{s} <http://example.org/big/label> "label {i} with \\"quotes\\", commas\\tand tabs"@en .\n')
            elif k == 2:
                f.write(f'{s} <http://example.org/big/n> "{i}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')
            else:
                f.write(f"{s} <http://example.org/big/knows> _:b{i % 1000} .\n")
    return path


@pytest.fixture(scope="session")
def big_index(workdir, big_nt) -> Path:
    return load(workdir / "big", str(big_nt))


@pytest.fixture(scope="session")
def server(sample_index):
    s = Server(sample_index, "--inject-faults")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def big_server(big_index):
    s = Server(big_index, "--inject-faults", "--workers", "2")
    yield s
    s.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
