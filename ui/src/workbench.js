// The query page: toolbar, editor, and the output tabs (the query's result,
// its plan, and one tab per DESCRIBE opened by clicking an IRI).

import { h, replace, menu } from "./dom.js";
import * as api from "./api.js";
import { createEditor } from "./editor.js";
import { ResultView } from "./results.js";
import { planView, pagesTable } from "./plan.js";
import { queryForm, declaredPrefixes } from "./sparql.js";
import { history, remember, draft, saveDraft, shareURL, sharedQuery, age } from "./history.js";

const DEFAULT_QUERY = "SELECT * WHERE {\n  ?s ?p ?o\n}\nLIMIT 100\n";
const MAX_DESCRIBE_TABS = 8;

/** Output tabs: a strip of buttons and one visible panel. */
function tabStrip() {
  const strip = h("div.tabs", { role: "tablist" });
  const panels = h("div.panels");
  const tabs = new Map(); // id → {button, panel, onClose}

  function select(id) {
    for (const [key, tab] of tabs) {
      const on = key === id;
      tab.button.setAttribute("aria-selected", String(on));
      tab.panel.hidden = !on;
    }
  }
  function close(id) {
    const tab = tabs.get(id);
    if (!tab) return;
    tab.onClose?.();
    tab.button.remove();
    tab.panel.remove();
    tabs.delete(id);
    if (tab.button.getAttribute("aria-selected") === "true" && tabs.size) select([...tabs.keys()].at(-1));
  }
  /** Adds the tab, or replaces the content of an open tab with the same id. */
  function open(id, title, content, { closable = false, onClose } = {}) {
    let tab = tabs.get(id);
    if (!tab) {
      const label = h("span.tab-label");
      const button = h("div.tab", { role: "tab", dataset: { tab: id }, onclick: () => select(id) }, label,
        closable && h("button.tab-close", { type: "button", title: "Close", "aria-label": "Close tab",
          onclick: (event) => { event.stopPropagation(); close(id); } }, "×"));
      tab = { button, label, panel: h("div.panel", { role: "tabpanel", dataset: { panel: id } }) };
      tabs.set(id, tab);
      strip.append(button);
      panels.append(tab.panel);
    }
    tab.onClose = onClose;
    tab.label.textContent = title;
    tab.label.title = title;
    replace(tab.panel, content);
    select(id);
    return tab.panel;
  }
  const ids = () => [...tabs.keys()];
  return { el: h("div.output", strip, panels), open, close, select, ids, has: (id) => tabs.has(id) };
}

export function workbench({ getPrefixes }) {
  const tabs = tabStrip();
  const editorBox = h("div.editor");
  const shareInput = h("input.share-url", { readonly: true, "aria-label": "Share link" });
  const shareNote = h("span.share-note");
  const shareBox = h("div.share-box", { hidden: true }, shareInput, shareNote);
  const notice = h("span.notice");
  let mainView = null;
  let plan = null; // {query, pagesEl} of the open plan tab
  let describeCount = 0;

  const examplesButton = h("button", { type: "button", "aria-haspopup": "menu" }, "Examples ▾");
  let examples = [];
  const examplesMenu = menu(examplesButton, () => examples.map((e) => ({
    label: e.name, title: e.query, run: () => load(e.query),
  })));
  examplesMenu.hidden = true; // until /examples answers with some
  const historyButton = h("button", { type: "button", "aria-haspopup": "menu" }, "History ▾");

  const editor = createEditor(editorBox, {
    doc: sharedQuery() ?? draft() ?? DEFAULT_QUERY,
    onRun: run,
    onChange: debounce(() => saveDraft(editor.getText()), 400),
    getPrefixes,
    completion: { onUnavailable: () => { notice.textContent = "IRI completion needs a server with /complete."; } },
  });

  const toolbar = h("div.toolbar",
    h("button.primary.run", { type: "button", title: "Run (Ctrl-Enter)", onclick: run }, "Run ▶"),
    h("button.explain", { type: "button", title: "Show the query plan with actual rows and times", onclick: explain }, "Explain"),
    examplesMenu,
    menu(historyButton, () => history().map((e) => ({
      label: e.query.replace(/\s+/g, " ").trim().slice(0, 90), title: e.query, detail: age(e.at), run: () => load(e.query),
    }))),
    h("button.share", { type: "button", title: "Copy a link that opens this query", onclick: share }, "Share"),
    h("span.hint", "Ctrl/⌘-Enter runs"),
    notice);

  api.optionalJSON("/examples").then((doc) => {
    examples = doc?.examples || [];
    examplesMenu.hidden = examples.length === 0;
  }).catch(() => {});

  function load(query) {
    editor.setText(query);
    editor.focus();
  }

  function currentPrefixes(query) {
    return getPrefixes().with(declaredPrefixes(query));
  }

  // A 400 answer with "error at L:C" marks that place in the editor.
  function markError(error) {
    const where = error instanceof api.HttpError && error.status === 400 && api.syntaxErrorPosition(error.body);
    if (where) editor.showError(where.line, where.column, where.message);
  }

  function run() {
    const query = editor.getText();
    remember(query);
    editor.clearErrors();
    mainView?.abort();
    mainView = new ResultView({
      query,
      form: queryForm(query),
      prefixes: currentPrefixes(query),
      onDescribe: describe,
      onError: markError,
      onPage: (view) => { if (plan && plan.query === view.query) renderPlanPages(); },
    });
    tabs.open("result", "Result", mainView.el);
    if (plan && plan.query === query) renderPlanPages();
    mainView.start();
  }

  function describe(iri) {
    const prefixes = mainView?.prefixes ?? getPrefixes();
    const view = new ResultView({
      query: `DESCRIBE <${iri}>`, form: "DESCRIBE", prefixes, onDescribe: describe,
    });
    const id = `describe-${++describeCount}`;
    tabs.open(id, `DESCRIBE ${prefixes.shorten(iri)}`, view.el, { closable: true, onClose: () => view.abort() });
    const open = tabs.ids().filter((t) => t.startsWith("describe-"));
    if (open.length > MAX_DESCRIBE_TABS) tabs.close(open[0]);
    view.start();
  }

  async function explain() {
    const query = editor.getText();
    editor.clearErrors();
    const pagesEl = h("div.plan-pages");
    plan = { query, pagesEl };
    const panel = tabs.open("plan", "Plan", h("p.muted", "Explaining…"));
    let content;
    try {
      content = planView(await api.explain(query));
    } catch (error) {
      markError(error);
      content = h("pre.error", { role: "alert" }, error.message);
    }
    if (plan.pagesEl !== pagesEl) return; // a newer explain replaced this one
    replace(panel, content, h("h3", "Pages of the paged run"), pagesEl);
    renderPlanPages();
  }

  // The plan tab also lists the pages (quanta) of the last run of the same query.
  function renderPlanPages() {
    if (!plan) return;
    if (mainView && mainView.query === plan.query && mainView.pageCount)
      replace(plan.pagesEl, h("p.muted", `${mainView.pageCount} page(s) so far: each is one quantum of work, suspended and resumed.`),
        pagesTable(mainView.pages));
    else replace(plan.pagesEl, h("p.muted", "Run the query to see how its pages were produced."));
  }

  // The link is shown and copied, not put in the address bar: a reload
  // should bring back the edited draft, not the query as it was shared.
  async function share() {
    const url = shareURL(editor.getText());
    shareInput.value = url;
    shareBox.hidden = false;
    shareInput.select();
    try {
      await navigator.clipboard.writeText(url);
      shareNote.textContent = "Link copied.";
    } catch {
      shareNote.textContent = "Copy the link above.";
    }
  }

  tabs.open("result", "Result", h("p.muted.empty-state", "Run the query (Ctrl/⌘-Enter) to see its results here."));

  return {
    el: h("section.workbench", toolbar, shareBox, editorBox, tabs.el),
    /** Loads a query from a share link (the URL fragment changed). */
    showShared() {
      const query = sharedQuery();
      if (query == null) return;
      if (query !== editor.getText()) load(query);
      saveDraft(query);
      // Loaded: from here on it is the draft (saved locally), so the URL
      // drops it and a reload keeps later edits.
      window.history.replaceState(null, "", location.pathname + location.search);
    },
    run,
    editor,
  };
}

function debounce(fn, ms) {
  let timer = 0;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}
