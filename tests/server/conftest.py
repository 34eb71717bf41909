"""Fixtures: indexes built with `tern load`, and `tern serve` processes on
loopback ports chosen by the OS."""

import os
from pathlib import Path

import pytest
import requests

from tern_process import Server, free_port, load, tern_bin  # noqa: F401 (the tests import them from here)

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
