"""A `tern serve` process for tests: started on a port the OS chooses, its
log kept, its endpoint read from the log. Shared by the endpoint's tests
(tests/server) and the workbench's browser tests (tests/browser)."""

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
