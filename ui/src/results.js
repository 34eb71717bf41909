// A result view: runs a query one page at a time (POST /sparql with a
// quantum and a row cap, then `next=TOKEN` for each further page) and shows
// the current page as a table or chart. Only the current page is kept: the
// result may have millions of rows; the browser never holds more than a page.

import { h, replace, fmt } from "./dom.js";
import * as api from "./api.js";
import { parseNTriples, renderTerm, termText } from "./terms.js";
import { virtualTable } from "./table.js";
import { chartView, numericColumns } from "./chart.js";
import { pagesTable } from "./plan.js";
import { isGraphForm } from "./sparql.js";

const SOLUTION_FORMATS = [["json", "json"], ["xml", "xml"], ["csv", "csv"], ["tsv", "tsv"], ["arrow", "arrow"], ["parquet", "parquet"]];
const GRAPH_FORMATS = [["turtle", "ttl"], ["ntriples", "nt"], ["nquads", "nq"], ["rdfxml", "rdf"], ["jsonld", "jsonld"]];
const MAX_PAGE_LOG = 500; // per-page statistics kept (the latest)

export class ResultView {
  /**
   * query: the SPARQL text; form: its query form (SELECT, …) or null;
   * prefixes: PrefixMap for display; onDescribe(iri): an IRI was clicked;
   * onError(error): the first page failed (the editor marks syntax errors);
   * onPage(view): a page arrived (the plan view's paging table follows it).
   */
  constructor({ query, form, prefixes, onDescribe, onError = () => {}, onPage = () => {} }) {
    Object.assign(this, { query, form, prefixes, onError, onPage });
    this.pages = []; // statistics of the latest pages (small), never their rows
    this.pageCount = 0; // requests, each a quantum (pages without rows too)
    this.rowPages = 0; // pages with rows, as the reader numbers them
    this.rowsSoFar = 0;
    this.page = null;
    this.mode = "table";

    this.status = h("span.result-status", { role: "status" });
    this.nextButton = h("button.next", { type: "button", hidden: true, onclick: () => this.next() }, "Next page ▸");
    this.tableButton = h("button.mode", { type: "button", "aria-pressed": "true", onclick: () => this.setMode("table") }, "Table");
    this.chartButton = h("button.mode", { type: "button", "aria-pressed": "false", disabled: true, onclick: () => this.setMode("chart") }, "Chart");
    this.modes = h("span.modes", this.tableButton, this.chartButton);
    this.downloads = h("span.downloads");
    this.body = h("div.result-body");
    this.pagesSummary = h("summary", "Pages");
    this.pagesBox = h("details.pages-box", { hidden: true }, this.pagesSummary, h("div"));
    this.pagesBox.addEventListener("toggle", () => this.renderPages());
    this.body.addEventListener("click", (event) => {
      const link = event.target.closest("a.iri");
      if (!link) return;
      event.preventDefault();
      onDescribe(link.dataset.iri);
    });
    this.el = h("section.result",
      h("div.result-bar", this.status, this.nextButton, h("span.spacer"),
        this.modes, this.downloads),
      this.body, this.pagesBox);
    this.renderDownloads(form);
  }

  get accept() {
    if (isGraphForm(this.form)) return api.TRIPLES;
    if (this.form === "SELECT" || this.form === "ASK") return api.SOLUTIONS;
    return `${api.SOLUTIONS}, ${api.TRIPLES};q=0.9`;
  }

  start() {
    return this.load({ query: this.query }, true);
  }

  next() {
    if (this.page?.next) return this.load({ next: this.page.next }, false);
  }

  abort() {
    this.controller?.abort();
  }

  async load(params, first) {
    this.abort();
    const controller = (this.controller = new AbortController());
    this.nextButton.disabled = true;
    this.status.textContent = first ? "Running…" : `Fetching page ${this.rowPages + 1}…`;
    this.el.classList.add("loading");
    let page;
    try {
      const fetch = (p) => api.fetchPage(p, this.accept, { signal: controller.signal, parseTriples: parseNTriples });
      page = await fetch(params);
      // A page can end before the query has its first rows (a sort still
      // sorting when the quantum ends): such pages are followed at once,
      // counted in the pages log, and the status says the query runs on.
      while (page.next && page.kind !== "boolean" && page.kind !== "text" && page.rows.length === 0) {
        this.pages.push({ number: ++this.pageCount, rows: 0, headers: page.headers, fetchMs: page.fetchMs });
        if (this.pages.length > MAX_PAGE_LOG) this.pages.shift();
        this.status.textContent = `${first ? "Running" : "Fetching"}… (${this.pageCount} quanta so far)`;
        page = await fetch({ next: page.next });
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      this.el.classList.remove("loading");
      this.showError(error, first);
      return;
    }
    this.el.classList.remove("loading");
    const rows = page.rows?.length ?? (page.kind === "boolean" ? 1 : 0);
    this.rowsBefore = this.rowsSoFar;
    this.rowsSoFar += page.kind === "boolean" ? 0 : rows;
    this.page = page; // the previous page is dropped here
    this.pages.push({ number: ++this.pageCount, rows, headers: page.headers, fetchMs: page.fetchMs });
    if (this.pages.length > MAX_PAGE_LOG) this.pages.shift();
    this.rowPages += 1;
    if (first && !this.form) this.renderDownloads(page.kind === "triples" ? "CONSTRUCT" : "SELECT");
    this.render();
    this.onPage(this);
  }

  showError(error, first) {
    const text = error.message || String(error);
    if (!first) {
      // Keep the page on screen; the button tries the same token again.
      this.status.replaceChildren(h("span.inline-error", { role: "alert" }, `Page ${this.rowPages + 1} failed: ${text}`));
      this.nextButton.disabled = false;
      return;
    }
    this.status.textContent = "Query failed";
    this.nextButton.hidden = true;
    this.modes.hidden = true;
    this.downloads.hidden = true; // the same query would fail again
    replace(this.body, h("pre.error", { role: "alert" }, text));
    this.onError(error);
  }

  render() {
    const page = this.page;
    this.nextButton.hidden = !page.next;
    this.nextButton.disabled = false;
    const n = this.rowPages;
    this.modes.hidden = page.kind === "boolean" || page.kind === "text";
    if (page.kind === "boolean") {
      this.status.textContent = "ASK answer";
      this.chartButton.disabled = true;
      replace(this.body, h("div.boolean", { dataset: { value: String(page.boolean) } }, String(page.boolean)));
    } else if (page.kind === "text") {
      this.status.textContent = `Answer in ${page.type}`;
      this.chartButton.disabled = true;
      replace(this.body, h("pre.raw", page.text));
    } else {
      const count = page.rows.length;
      const range = count ? `rows ${fmt(this.rowsBefore + 1)}–${fmt(this.rowsSoFar)}` : "no rows";
      this.status.replaceChildren(
        h("span.page-number", `Page ${fmt(n)}`), " · ", range, " · ",
        h("strong.rows-so-far", { dataset: { rows: this.rowsSoFar } }, `${fmt(this.rowsSoFar)} rows so far`), " · ",
        h("span.more", { dataset: { more: String(!!page.next) } }, page.next ? "more remain" : "complete"));
      this.columns = page.kind === "solutions" ? page.vars : ["subject", "predicate", "object"];
      this.cells = page.kind === "solutions" ? page.rows.map((b) => this.columns.map((v) => b[v])) : page.rows;
      this.chartButton.disabled = numericColumns(this.columns, this.cells).length === 0;
      if (this.chartButton.disabled) this.mode = "table";
      this.renderBody();
    }
    this.renderPages();
  }

  setMode(mode) {
    this.mode = mode;
    if (this.cells) this.renderBody();
  }

  renderBody() {
    this.tableButton.setAttribute("aria-pressed", String(this.mode === "table"));
    this.chartButton.setAttribute("aria-pressed", String(this.mode === "chart"));
    if (this.mode === "chart") {
      replace(this.body, chartView(this.columns, this.cells, this.prefixes));
    } else if (!this.cells.length) {
      replace(this.body, h("p.muted", "No results."));
    } else {
      replace(this.body, virtualTable({
        columns: this.columns,
        rows: this.cells,
        firstNumber: this.rowsBefore + 1,
        renderCell: (term) => renderTerm(term, this.prefixes),
        cellTitle: (term) => (term?.type === "uri" ? term.value : termText(term, this.prefixes)),
      }));
    }
  }

  renderPages() {
    this.pagesBox.hidden = this.pageCount === 0;
    this.pagesSummary.textContent = `Pages: ${fmt(this.pageCount)} (quanta used)`;
    if (this.pagesBox.open) this.pagesBox.lastChild.replaceChildren(pagesTable(this.pages));
  }

  /** Full-result links in every format of the query's kind (not paged). */
  renderDownloads(form) {
    const graph = isGraphForm(form);
    const formats = graph ? GRAPH_FORMATS : SOLUTION_FORMATS;
    replace(this.downloads, h("span.muted", "Download "), formats.map(([format, ext]) =>
      h("a.download", { href: api.downloadURL(this.query, format), download: `result.${ext}`, dataset: { format } }, format)));
    this.downloads.hidden = form != null && !graph && form !== "SELECT" && form !== "ASK";
  }
}
