"""The query workbench in a real browser against a real `tern serve`: run,
complete, page, download, explain, error markers, share links, history,
examples, status."""

import re
import threading
import urllib.parse
import urllib.request

import pytest

from conftest import BIG_ROWS, Server

EX = "PREFIX ex: <http://example.org/birds/>\n"
RDFS = "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
TERNS = EX + RDFS + """SELECT ?bird ?label WHERE {
  ?bird a ex:Tern ; rdfs:label ?label .
  FILTER(LANG(?label) = "en")
}
ORDER BY ?label
"""


def wait_rows(wb, count=None, panel="result"):
    wb.page.wait_for_function(
        """([panel, count]) => {
            const rows = document.querySelectorAll(`[data-panel="${panel}"] .vt-body .vt-row`);
            return count == null ? rows.length > 0 : rows.length === count;
        }""", arg=[panel, count])
    return wb.rows(panel)


def test_run_query_shows_rows(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query(TERNS)
    wb.run()
    rows = wait_rows(wb, 3)
    assert [r[2] for r in rows] == ["Arctic tern@en", "Common tern@en", "Sandwich tern@en"]
    # IRIs shortened with the query's own prefix, and clickable.
    assert [r[1] for r in rows] == ["ex:arcticTern", "ex:commonTern", "ex:sandwichTern"]
    links = wb.page.locator('[data-panel="result"] a.iri')
    assert links.first.get_attribute("data-iri") == "http://example.org/birds/arcticTern"
    assert re.search(r"3 rows so far · complete", wb.status())
    # Ctrl-Enter ran it; nothing was left over from a previous page.
    assert wb.page.inner_text('[data-panel="result"] .pages-box summary').startswith("Pages: 1")
    assert not wb.errors


def test_iri_click_describes(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query(TERNS)
    wb.run()
    wait_rows(wb, 3)
    wb.page.click('[data-panel="result"] a.iri[data-iri="http://example.org/birds/arcticTern"]')
    tab = wb.page.locator(".tab", has_text="DESCRIBE ex:arcticTern")
    assert tab.get_attribute("aria-selected") == "true"
    panel = tab.get_attribute("data-tab")
    rows = wait_rows(wb, panel=panel)
    # One line per triple: subject, predicate, object.
    assert all(r[1] == "ex:arcticTern" for r in rows)
    assert ["ex:arcticTern", "ex:scientificName", "Sterna paradisaea"] in [r[1:] for r in rows]
    assert ["ex:arcticTern", "ex:wingspanCm", "80^^xsd:integer"] in [r[1:] for r in rows]
    # Graph results offer graph formats.
    formats = wb.page.eval_on_selector_all(f'[data-panel="{panel}"] a.download', "as => as.map(a => a.dataset.format)")
    assert formats == ["turtle", "ntriples", "nquads", "rdfxml", "jsonld"]


def test_chart_of_numeric_column(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query(EX + "SELECT ?bird ?wingspan WHERE { ?bird ex:wingspanCm ?wingspan } ORDER BY ?wingspan")
    wb.run()
    rows = wait_rows(wb)
    wb.page.click('[data-panel="result"] button.mode:has-text("Chart")')
    bars = wb.page.locator('[data-panel="result"] svg.bar-chart rect.bar')
    bars.first.wait_for()
    assert bars.count() == len(rows)
    titles = wb.page.eval_on_selector_all('[data-panel="result"] rect.bar title', "ts => ts.map(t => t.textContent)")
    assert "ex:arcticTern: 80" in titles


def test_autocomplete_prefixed_name(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query("")
    # rdfs: is not declared: the server's /prefixes knows it, so the
    # declaration is added at the top as soon as the colon is typed.
    wb.type("SELECT * WHERE {\n?s rdfs:la")
    assert "rdfs:label" in wb.completions()
    assert wb.query_text().startswith("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n")
    wb.page.keyboard.press("Enter")
    assert "?s rdfs:label" in wb.query_text()

    # A prefix the query declares; in object position after `a` only classes.
    wb.set_query(EX + "SELECT * WHERE {\n  ?x ")
    wb.page.keyboard.press("Control+End")
    wb.type("a ex:")
    classes = wb.completions()
    assert "ex:Tern" in classes and "ex:Place" in classes
    assert "ex:arcticTern" not in classes
    wb.page.keyboard.press("Escape")
    wb.type(" . ex:arc")
    wb.page.wait_for_function(
        "() => [...document.querySelectorAll('.cm-tooltip-autocomplete .cm-completionLabel')]"
        ".some(l => l.textContent === 'ex:arcticTern')")
    detail = wb.page.inner_text(".cm-tooltip-autocomplete li[aria-selected] .cm-completionDetail")
    assert re.fullmatch(r"\d+×", detail)


def test_autocomplete_iri(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    requests = []
    wb.page.on("request", lambda r: "/complete?" in r.url and requests.append(urllib.parse.urlparse(r.url).query))
    wb.set_query("")
    wb.type("SELECT * WHERE { <http://example.org/birds/arc")
    labels = wb.completions()
    # The server knows no prefix for this namespace: the full IRI is shown.
    assert "<http://example.org/birds/arcticTern>" in labels
    params = urllib.parse.parse_qs(requests[-1])
    assert params["prefix"] == ["http://example.org/birds/arc"]
    assert params["context"] == ["subject"]
    assert params["limit"] == ["20"]
    # Debounced: far fewer requests than keystrokes.
    assert len(requests) < 5
    wb.page.keyboard.press("Enter")
    # (the closing brace came from bracket auto-closing)
    assert wb.query_text() == "SELECT * WHERE { <http://example.org/birds/arcticTern>}"

    wb.type(" <http://example.org/birds/breed")
    assert "<http://example.org/birds/breedsIn>" in wb.completions()
    assert urllib.parse.parse_qs(requests[-1])["context"] == ["predicate"]


def test_paging_large_result(big_server, workbench_for):
    wb = workbench_for(big_server).open()
    wb.set_query("SELECT ?item ?n WHERE { ?item <http://example.org/big/n> ?n } ORDER BY ?n")
    wb.run()
    wait_rows(wb)
    table = wb.page.locator('[data-panel="result"] .vt')

    def page_state():
        rows_so_far = int(wb.page.get_attribute('[data-panel="result"] .rows-so-far', "data-rows"))
        in_page = int(table.get_attribute("aria-rowcount"))
        first = wb.rows()[0]
        more = wb.page.get_attribute('[data-panel="result"] .more', "data-more") == "true"
        return rows_so_far, in_page, first, more

    so_far1, in_page1, first1, more1 = page_state()
    assert more1 and 0 < in_page1 == so_far1 < BIG_ROWS
    # page-rows=500 is a target the server may exceed by a batch; a page
    # must still be a small part of the result.
    assert in_page1 <= 20_000
    assert first1[0] == "1" and first1[2] == "0^^xsd:integer"
    # The table only renders the rows in view, not the whole page.
    assert len(wb.rows()) < min(in_page1, 200)

    wb.page.click('[data-panel="result"] button.next')
    wb.page.wait_for_function(
        "n => document.querySelector('[data-panel=\"result\"] .rows-so-far')?.dataset.rows > n", arg=so_far1)
    so_far2, in_page2, first2, _ = page_state()
    # Page 2 starts with the row after page 1's last, numbered accordingly.
    assert first2[0] == str(so_far1 + 1)
    assert first2[2] == f"{so_far1}^^xsd:integer"
    assert first2[1] == f"<http://example.org/big/item{so_far1}>"
    assert so_far2 == so_far1 + in_page2 and in_page2 < BIG_ROWS
    assert "Page 2" in wb.status()
    # Scrolling to the bottom of page 2 shows its last row.
    table.evaluate("t => t.scrollTop = t.scrollHeight")
    wb.page.wait_for_function(
        "n => [...document.querySelectorAll('[data-panel=\"result\"] .vt-body .vt-row')].some(r => r.dataset.row == n)",
        arg=so_far2)
    last = [r for r in wb.rows() if r[0] == str(so_far2)][0]
    assert last[2] == f"{so_far2 - 1}^^xsd:integer"
    # The pages box counts quanta: the two pages of rows, and any page
    # that ended before the sort had its first rows (followed at once).
    summary = wb.page.inner_text('[data-panel="result"] .pages-box summary')
    assert summary.startswith("Pages: ") and int(summary.split()[1]) >= 2


def test_construct_pages_as_triples(big_server, workbench_for):
    """Graph results page through N-Triples, the token in Tern-Next."""
    wb = workbench_for(big_server).open()
    wb.set_query("CONSTRUCT { ?s <http://example.org/big/m> ?n } WHERE { ?s <http://example.org/big/n> ?n }")
    wb.run()
    rows = wait_rows(wb)
    assert all(r[2] == "<http://example.org/big/m>" and r[3].endswith("^^xsd:integer") for r in rows)
    more = wb.page.get_attribute('[data-panel="result"] .more', "data-more")
    so_far = int(wb.page.get_attribute('[data-panel="result"] .rows-so-far', "data-rows"))
    assert more == "true" and 0 < so_far < BIG_ROWS
    first_page_items = {r[1] for r in rows}
    wb.page.click('[data-panel="result"] button.next')
    wb.page.wait_for_function(
        "n => document.querySelector('[data-panel=\"result\"] .rows-so-far')?.dataset.rows > n", arg=so_far)
    rows2 = wb.rows()
    assert rows2[0][0] == str(so_far + 1)
    assert not first_page_items & {r[1] for r in rows2}
    formats = wb.page.eval_on_selector_all('[data-panel="result"] a.download', "as => as.map(a => a.dataset.format)")
    assert formats == ["turtle", "ntriples", "nquads", "rdfxml", "jsonld"]


def test_csv_download(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query(TERNS)
    wb.run()
    wait_rows(wb, 3)
    link = wb.page.locator('[data-panel="result"] a.download[data-format="csv"]')
    href = link.get_attribute("href")
    assert href.startswith("/sparql?") and "format=csv" in href
    assert link.get_attribute("download") == "result.csv"
    with wb.page.expect_download() as info:
        link.click()
    text = open(info.value.path(), encoding="utf-8").read()
    lines = text.strip().splitlines()
    assert lines[0].strip() == "bird,label"
    assert lines[1].strip() == "http://example.org/birds/arcticTern,Arctic tern"
    assert len(lines) == 4
    # Every solution format is offered.
    formats = wb.page.eval_on_selector_all('[data-panel="result"] a.download', "as => as.map(a => a.dataset.format)")
    assert formats == ["json", "xml", "csv", "tsv", "arrow", "parquet"]


def test_explain_shows_operator_tree(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query(TERNS)
    wb.run()
    wait_rows(wb, 3)
    wb.page.click("button.explain")
    wb.page.wait_for_selector('[data-panel="plan"] .plan-tree .plan-node')
    operators = wb.page.eval_on_selector_all('[data-panel="plan"] .plan-node .op', "os => os.map(o => o.textContent)")
    assert len(operators) >= 2
    assert any("Scan" in op for op in operators)
    # Nested: the root has children drawn under it.
    assert wb.page.locator('[data-panel="plan"] .plan-tree > li > ul > li .plan-node').count() >= 1
    stats = wb.page.inner_text('[data-panel="plan"] .plan-tree')
    assert re.search(r"\d+ rows \(est\. [\d,]+\)", stats)  # Scans carry estimates
    times = wb.page.inner_text('[data-panel="plan"] .plan-times')
    for name in ("parse", "plan", "execute", "total"):
        assert name in times
    # The pages of the run of the same query, with the server's headers.
    pages = wb.page.locator('[data-panel="plan"] table.pages tbody tr')
    assert pages.count() == 1
    cells = pages.first.locator("td").all_inner_texts()
    assert cells[0] == "1" and cells[1] == "3" and cells[2] == "0"  # page, rows, rows before


def test_syntax_error_marker(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    wb.set_query("SELECT * WHERE { ?s ?p ?o }\nLIMIT abc\n")
    wb.run()
    error = wb.page.locator('[data-panel="result"] pre.error')
    error.wait_for()
    assert "error at 2:7" in error.inner_text()
    marker = wb.page.locator(".cm-lintRange-error")
    marker.wait_for()
    # The marked text is the `a` of `abc` on line 2, with a gutter marker.
    line = marker.evaluate("m => [...m.closest('.cm-content').children].indexOf(m.closest('.cm-line')) + 1")
    assert line == 2
    assert marker.inner_text() == "a"
    assert wb.page.locator(".cm-lint-marker-error").count() == 1
    wb.snap("marker")
    # Editing clears the stale marker.
    wb.page.keyboard.press("Control+End")
    wb.type("x")
    wb.page.wait_for_selector(".cm-lintRange-error", state="detached")


def test_share_link_restores_query(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    query = TERNS + "# shared & kept: 100% ?#\n"
    wb.set_query(query)
    wb.page.click("button.share")
    url = wb.page.input_value(".share-url")
    assert url.startswith(sample_server.base + "/#query=")
    assert urllib.parse.unquote(url.split("#query=", 1)[1]) == query
    # A fresh browser (no history, no draft) opening the link gets the query.
    other = workbench_for(sample_server)
    other.page.goto(url)
    other.page.wait_for_selector("body[data-ready=true]")
    assert other.query_text() == query.rstrip("\n") + "\n" or other.query_text() == query
    other.run()
    assert len(wait_rows(other, 3)) == 3


def test_history_restores_query(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    first = "SELECT (1 AS ?one) WHERE {}"
    wb.set_query(first)
    wb.run()
    wait_rows(wb, 1)
    wb.set_query("ASK { ?s ?p ?o }")
    wb.run()
    wb.page.wait_for_selector('[data-panel="result"] .boolean[data-value="true"]')
    wb.page.click("button:has-text('History')")
    items = wb.page.locator(".menu-item .menu-label").all_inner_texts()
    assert items[:2] == ["ASK { ?s ?p ?o }", first]
    wb.page.click(f".menu-item:has-text('{first}')")
    assert wb.query_text() == first


def test_examples_menu(sample_server, workbench_for):
    wb = workbench_for(sample_server).open()
    button = wb.page.locator("button:has-text('Examples')")
    button.wait_for()
    button.click()
    names = wb.page.locator(".menu-item .menu-label").all_inner_texts()
    assert "Terns by wingspan" in names
    wb.page.click(".menu-item:has-text('Terns by wingspan')")
    assert "ex:wingspanCm ?wingspan" in wb.query_text()
    wb.run()
    rows = wait_rows(wb, 3)
    assert rows[0][1] == "ex:herringGull" or rows[0][2].startswith("Sandwich tern")


def test_status_page(sample_server, workbench_for):
    wb = workbench_for(sample_server).open("#status")
    card = wb.page.locator('.card[data-section="index"]')
    card.wait_for()
    assert card.locator('tr[data-key="triples"] td').inner_text() == "145"
    # To the workbench and back: each page shows alone.
    wb.page.click("a.nav:has-text('Query')")
    wb.page.locator(".cm-content").wait_for(state="visible")
    assert wb.page.locator(".status-page").is_hidden()
    wb.page.click("a.nav:has-text('Status')")
    card.wait_for()
    # Refreshed every 2 s.
    before = wb.page.inner_text(".status-head .muted")
    wb.page.wait_for_function("t => document.querySelector('.status-head .muted').textContent !== t", arg=before)
    wb.page.click(".metrics-box summary")
    wb.page.wait_for_function("() => /tern_/.test(document.querySelector('.metrics-box pre').textContent)")


def test_status_page_cancels_a_query(workdir, big_server, workbench_for):
    """A query that would run for minutes shows on the status page; the
    operator cancels it there with the write credential."""
    credential = "operator-credential-0123456789"
    (workdir / "operator.token").write_text(credential + "\n")
    server = Server(workdir / "big", "--update-token", str(workdir / "operator.token"))
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?x . ?b ?q ?y }"
    outcome = {}

    def run():
        data = urllib.parse.urlencode({"query": endless}).encode()
        try:
            urllib.request.urlopen(server.base + "/sparql", data, timeout=120).read()
            outcome["ended"] = "answered"
        except Exception as e:  # a cancelled query's response is cut
            outcome["ended"] = type(e).__name__

    client = threading.Thread(target=run)
    try:
        client.start()
        wb = workbench_for(server).open("#status")
        row = wb.page.locator('table.queries tr:has(code:has-text("COUNT(*)"))')
        row.wait_for()
        wb.page.once("dialog", lambda dialog: dialog.accept(credential))
        row.locator("button.cancel").click()
        wb.page.wait_for_function("() => /cancelled/.test(document.querySelector('.status-page .notice').textContent)")
        client.join(60)
        assert not client.is_alive() and outcome["ended"]
        row.wait_for(state="detached")
    finally:
        server.stop()


def test_embedded_workbench(workdir, workbench_for):
    """The copy built into the binary (no --ui-dir) is served and starts."""
    server = Server(workdir / "sample", ui_dir=False)
    try:
        html = urllib.request.urlopen(server.base + "/").read().decode()
        assert 'src="/ui/app.js"' in html and 'href="/ui/app.css"' in html
        wb = workbench_for(server).open()
        wb.run()
        assert len(wait_rows(wb)) > 0
    finally:
        server.stop()
