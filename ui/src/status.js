// The status page: GET /status rendered generically (one card per section,
// nested objects as nested tables, so fields the server adds later show up
// without UI changes), refreshed every 2 s while visible, and the raw
// Prometheus text of /metrics in a collapsible section.

import { h, replace, fmt } from "./dom.js";
import { optionalJSON, optionalText } from "./api.js";

const REFRESH_MS = 2000;

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// Field names carry their unit (wal_bytes, uptime_s), so the value can be
// shown in a readable form without a schema.
function value(key, v) {
  if (v == null) return h("span.muted", "–");
  if (typeof v === "boolean") return h("span.bool", { dataset: { value: String(v) } }, v ? "yes" : "no");
  if (typeof v === "number") {
    if (/bytes$/.test(key)) return `${bytes(v)}${v >= 1024 ? ` (${fmt(v)})` : ""}`;
    if (/_s$/.test(key)) return v >= 120 ? `${fmt(Math.round(v))} s (${duration(v)})` : `${fmt(v)} s`;
    if (/_ms$/.test(key)) return `${fmt(v)} ms`;
    return fmt(v);
  }
  if (Array.isArray(v)) return v.length ? h("ul.plain", v.map((item, i) => h("li", value(String(i), item)))) : h("span.muted", "none");
  if (typeof v === "object") return table(v);
  return String(v);
}

function duration(s) {
  const d = Math.floor(s / 86400), hh = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return [d && `${d}d`, (d || hh) && `${hh}h`, `${m}m`].filter(Boolean).join(" ");
}

const label = (key) => key.replace(/_/g, " ");

const table = (obj) => h("table.kv", h("tbody", Object.entries(obj).map(([k, v]) =>
  h("tr", { dataset: { key: k } }, h("th", label(k)), h("td", value(k, v))))));

function cards(doc, onCancel) {
  // The queries in the server get a table of their own, with a cancel
  // button each; the rest is shown generically.
  const inServer = doc.queries?.in_server;
  if (inServer) doc = { ...doc, queries: Object.fromEntries(Object.entries(doc.queries).filter(([k]) => k !== "in_server")) };
  const scalars = Object.entries(doc).filter(([, v]) => v === null || typeof v !== "object");
  const sections = Object.entries(doc).filter(([, v]) => v !== null && typeof v === "object");
  return [
    inServer ? h("div.card.wide", { dataset: { section: "in_server" } }, h("h3", "queries in the server"), queriesTable(inServer, onCancel)) : null,
    scalars.length ? h("div.card", h("h3", "general"), table(Object.fromEntries(scalars))) : null,
    sections.map(([k, v]) => h("div.card", { dataset: { section: k } }, h("h3", label(k)), value(k, v))),
  ];
}

function queriesTable(queries, onCancel) {
  if (!queries.length) return h("p.muted", "none");
  return h("table.queries",
    h("thead", h("tr", ["id", "client", "running", "paged", "query", ""].map((t) => h("th", t)))),
    h("tbody", queries.map((q) => h("tr", { dataset: { id: String(q.id) } },
      h("td", String(q.id)),
      h("td", q.client || "–"),
      h("td", `${fmt(q.seconds)} s`),
      h("td", q.paged ? "yes" : "no"),
      h("td", h("code.query-text", q.query)),
      h("td", q.cancelled ? h("span.muted", "cancelling…")
        : h("button.cancel", { type: "button", onclick: () => onCancel(q.id) }, "Cancel"))))));
}

// The operator's credential (the server's --update-token), asked for once
// per browser tab.
const CREDENTIAL_KEY = "tern-operator-credential";

async function cancelQuery(id, report) {
  let credential = sessionStorage.getItem(CREDENTIAL_KEY);
  if (!credential) {
    credential = window.prompt("Cancelling needs the server's write credential (its --update-token):");
    if (!credential) return;
  }
  const response = await fetch(`/queries/${id}/cancel`, {
    method: "POST",
    headers: { Authorization: `Bearer ${credential.trim()}` },
  });
  if (response.ok) {
    sessionStorage.setItem(CREDENTIAL_KEY, credential);
    report(`query ${id} cancelled`);
  } else {
    if (response.status === 401 || response.status === 403) sessionStorage.removeItem(CREDENTIAL_KEY);
    report(`query ${id}: ${(await response.text()).trim()}`);
  }
}

/** Builds the page; `start()` begins refreshing, `stop()` ends it. */
export function statusPage() {
  const grid = h("div.cards");
  const updated = h("span.muted");
  const metrics = h("pre.metrics");
  const metricsBox = h("details.metrics-box", h("summary", "Metrics (/metrics)"), metrics);
  const notice = h("p.notice", { role: "status" });
  const el = h("section.status-page", h("div.status-head", h("h2", "Server status"), updated), notice, grid, metricsBox);
  const onCancel = async (id) => {
    await cancelQuery(id, (message) => { notice.textContent = message; });
    refresh();
  };
  let timer = 0; // 0: stopped

  async function refresh() {
    try {
      const doc = await optionalJSON("/status");
      if (doc == null) replace(grid, h("p.muted", "This server has no /status endpoint."));
      else replace(grid, cards(doc, onCancel));
      updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      updated.textContent = `status unavailable: ${error.message}`;
    }
    // Metrics can be long: only fetched while their section is open.
    if (metricsBox.open || !metrics.textContent) {
      try {
        metrics.textContent = (await optionalText("/metrics")) ?? "This server has no /metrics endpoint.";
      } catch (error) {
        metrics.textContent = `metrics unavailable: ${error.message}`;
      }
    }
  }

  // Each start() begins a new generation; a refresh still in flight from an
  // older one does not schedule another, so stop/start never doubles the loop.
  let generation = 0;
  async function loop(g) {
    await refresh();
    if (g === generation) timer = setTimeout(() => loop(g), REFRESH_MS);
  }

  return {
    el,
    start() { if (!timer) { timer = -1; loop(++generation); } },
    stop() { clearTimeout(timer); timer = 0; generation++; },
  };
}
