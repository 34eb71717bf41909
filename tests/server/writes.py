"""Helpers of the update tests: a `tern serve` that takes writes (on an index
of its own, with a write credential), updates sent with that credential, and
query results as values that compare across requests."""

import json
import os
import shutil
import time
from pathlib import Path

import requests

from conftest import Server, load

JSON = "application/sparql-results+json"


def fresh_index(workdir: Path, name: str, *sources: str) -> Path:
    """A new index of `sources`, in a directory no other test uses (updates
    change it for good; `tern load --force` does not replace a compacted
    store, so the directory is new rather than reloaded)."""
    index = workdir / f"{name}-{time.monotonic_ns()}"
    return load(index, *sources)


def credential_file(workdir: Path) -> Path:
    """A write credential (32 hex bytes) with a trailing newline, as `echo`
    writes it: the server trims it."""
    path = workdir / f"update-token-{time.monotonic_ns()}"
    path.write_text(os.urandom(16).hex() + "\n")
    return path


def copy_index(source: Path, workdir: Path, name: str) -> Path:
    """A copy of an index directory (base, store.json and wal/): a server
    started on it has the same data at the same snapshot version."""
    target = workdir / f"{name}-{time.monotonic_ns()}"
    shutil.copytree(source, target)
    return target


class Writable:
    """A `tern serve --update-token` and its credential."""

    def __init__(self, index: Path, *args: str, credential: Path | None = None):
        self.index = index
        self.credential_path = credential or credential_file(index.parent)
        self.credential = self.credential_path.read_text().strip()
        self.server = Server(index, "--update-token", str(self.credential_path), *args)
        self.url = self.server.url
        self.base = self.server.base

    @property
    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.credential}"}

    def update(self, text: str, headers: dict | None = None, **form) -> requests.Response:
        """POSTs `update=text` (and `form`, e.g. using-graph-uri) as a form."""
        data = {"update": text}
        data.update({k.replace("_", "-"): v for k, v in form.items()})
        return requests.post(
            self.url, data=data, headers=self.auth if headers is None else headers, timeout=60
        )

    def ok(self, text: str, **form) -> dict:
        """An update that must succeed; its report."""
        r = self.update(text, **form)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json")
        return r.json()

    def compact(self) -> dict:
        r = requests.post(self.base + "/compact", headers=self.auth, timeout=120)
        assert r.status_code == 200, r.text
        return r.json()

    def rows(self, query: str) -> list:
        return rows(self.url, query)

    def ask(self, query: str) -> bool:
        r = requests.post(self.url, data={"query": query}, headers={"Accept": JSON}, timeout=60)
        assert r.status_code == 200, r.text
        return r.json()["boolean"]

    def metrics(self) -> dict:
        return self.server.metrics()

    def version(self) -> int:
        return int(self.metrics()["tern_store_version"])

    def stop(self):
        self.server.stop()


def term(binding: dict) -> str:
    """A SPARQL JSON term as N-Triples-like text."""
    kind, value = binding["type"], binding["value"]
    if kind == "uri":
        return f"<{value}>"
    if kind == "bnode":
        return f"_:{value}"
    if "xml:lang" in binding:
        return f'"{value}"@{binding["xml:lang"]}'
    if "datatype" in binding:
        return f'"{value}"^^<{binding["datatype"]}>'
    return f'"{value}"'


def rows(url: str, query: str) -> list:
    """A SELECT's solutions as sorted tuples of (variable, term) pairs."""
    r = requests.post(url, data={"query": query}, headers={"Accept": JSON}, timeout=120)
    assert r.status_code == 200, r.text
    return sorted(solutions(r))


def solutions(r: requests.Response) -> list:
    return [
        tuple(sorted((k, term(v)) for k, v in b.items()))
        for b in r.json()["results"]["bindings"]
    ]


def values(url: str, query: str, var: str) -> list:
    """One variable's values in a SELECT's solutions, sorted."""
    return sorted(dict(row).get(var) for row in rows(url, query))


def page(url: str, data: dict, quantum: str) -> requests.Response:
    r = requests.post(
        url, data={**data, "quantum": quantum}, headers={"Accept": JSON}, timeout=120
    )
    assert r.status_code == 200, r.text
    return r


def canonical(r: requests.Response) -> list:
    """A page's solutions as canonical JSON strings (for multiset checks)."""
    return [json.dumps(b, sort_keys=True) for b in r.json()["results"]["bindings"]]
