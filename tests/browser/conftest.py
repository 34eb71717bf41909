"""Fixtures for the workbench's browser tests: indexes built with `tern
load`, real `tern serve` processes on free loopback ports, and Debian's
headless Chromium driven by Playwright.

The `tern serve` process is the one the endpoint's tests use
(tests/server/tern_process.py)."""

import os
import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
import tern_process  # noqa: E402 (found through the path above)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample.ttl"
EXAMPLES = ROOT / "data" / "sample-examples.rq"
DIST = ROOT / "ui" / "dist"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("TERN_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium stalls on a closed network.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
BIG_ROWS = 100_000
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


class Server(tern_process.Server):
    """A `tern serve` with the workbench's files read from ui/dist (so the
    tests see the current build even when the binary embeds an older one)
    and, on the sample, its example queries."""

    def __init__(self, index: Path, *args: str, ui_dir: bool = True):
        if ui_dir:
            args = ("--ui-dir", str(DIST), *args)
        if index.name == "sample":
            args = ("--examples", str(EXAMPLES), *args)
        super().__init__(index, *args)


def load(index: Path, source: Path) -> Path:
    return tern_process.load(index, str(source))


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tern-browser")


@pytest.fixture(scope="session")
def sample_server(workdir):
    s = Server(load(workdir / "sample", SAMPLE))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def big_server(workdir):
    """100,000 triples `<item{i}> <n> i`: a 100k-row result whose order
    (ORDER BY ?n) says exactly which row must start each page."""
    nt = workdir / "big.nt"
    with open(nt, "w") as f:
        for i in range(BIG_ROWS):
            f.write(f'<http://example.org/big/item{i}> <http://example.org/big/n> "{i}"^^<{XSD_INTEGER}> .\n')
    s = Server(load(workdir / "big", nt))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.exit(f"{CHROMIUM} is missing (apt-get install chromium)", returncode=2)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Workbench:
    """A page on the workbench with helpers for its editor and views."""

    def __init__(self, page, server: Server, name: str):
        self.page = page
        self.name = name
        self.base = server.base
        self.errors = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def snap(self, label: str):
        """A screenshot of a moment the end of the test no longer shows."""
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{self.name}-{label}.png"), full_page=True)

    def open(self, fragment: str = ""):
        self.page.goto(self.base + "/" + fragment)
        self.page.wait_for_selector("body[data-ready=true]")
        return self

    def set_query(self, text: str):
        """Replaces the editor's text as a paste would."""
        self.page.click(".cm-content")
        self.page.keyboard.press("Control+A")
        self.page.keyboard.press("Delete")
        self.page.keyboard.insert_text(text)

    def type(self, text: str, delay: int = 30):
        self.page.keyboard.type(text, delay=delay)

    def query_text(self) -> str:
        return self.page.eval_on_selector_all(".cm-content .cm-line", "ls => ls.map(l => l.textContent).join('\\n')")

    def run(self):
        """Runs the query with the editor's shortcut."""
        self.page.focus(".cm-content")
        self.page.keyboard.press("Control+Enter")

    def rows(self, panel: str = "result") -> list:
        """The rendered rows of a result panel as lists of cell texts."""
        return self.page.eval_on_selector_all(
            f'[data-panel="{panel}"] .vt-body .vt-row',
            "rs => rs.map(r => [...r.children].map(c => c.textContent))")

    def status(self, panel: str = "result") -> str:
        return self.page.inner_text(f'[data-panel="{panel}"] .result-status')

    def completions(self) -> list:
        """The labels of the open completion list, once it has settled
        (requests are debounced; CodeMirror ignores Enter for a moment after
        the list changes)."""
        self.page.wait_for_selector(".cm-tooltip-autocomplete li")
        self.page.wait_for_timeout(400)
        return self.page.eval_on_selector_all(
            ".cm-tooltip-autocomplete li", "ls => ls.map(l => l.querySelector('.cm-completionLabel').textContent)")


@pytest.fixture
def workbench_for(browser, request):
    """workbench_for(server) → a Workbench in a fresh browser context (its own
    localStorage); a screenshot of it is saved when the test ends."""
    contexts = []
    name = re.sub(r"[^\w.-]+", "_", request.node.name)

    def make(server: Server) -> Workbench:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        # Generous: the machine may be busy compiling while the tests run.
        context.set_default_timeout(30_000)
        contexts.append(context)
        return Workbench(context.new_page(), server, name)

    yield make
    ARTIFACTS.mkdir(exist_ok=True)
    for i, context in enumerate(contexts):
        for j, page in enumerate(context.pages):
            suffix = "" if (i, j) == (0, 0) else f"-{i}-{j}"
            try:
                page.screenshot(path=str(ARTIFACTS / f"{name}{suffix}.png"), full_page=True)
            except Exception:  # a closed page has nothing to show
                pass
        context.close()
