// The plan view: the timings and operator tree of an explain=true run, and
// the per-page statistics of a paged run (each page is one quantum of work
// the server suspended and resumed).

import { h, fmt, ms } from "./dom.js";

const KNOWN = new Set(["operator", "detail", "estimated_rows", "rows", "time_ms", "batches", "blocks_read", "children"]);
const MISESTIMATE = 10; // highlight when estimate and actual differ by more than this factor

function misestimated(estimated, actual) {
  if (estimated == null || actual == null) return false;
  const [a, b] = [Math.max(estimated, 1), Math.max(actual, 1)];
  return Math.max(a, b) / Math.min(a, b) > MISESTIMATE;
}

function node(op) {
  const bad = misestimated(op.estimated_rows, op.rows);
  // Fields newer servers may add are shown too, rather than dropped.
  const extra = Object.entries(op).filter(([k, v]) => !KNOWN.has(k) && v != null && typeof v !== "object");
  return h("li",
    h("div.plan-node" + (bad ? ".misestimate" : ""),
      h("div.plan-head", h("span.op", op.operator), op.detail && h("code.detail", op.detail)),
      h("div.plan-stats",
        h("span.rows", { title: bad ? `the estimate is off by more than ${MISESTIMATE}×` : "actual rows (planner's estimate)" },
          `${op.rows == null ? "?" : fmt(op.rows)} rows`,
          op.estimated_rows != null && ` (est. ${fmt(op.estimated_rows)})`),
        op.time_ms != null && h("span", ms(op.time_ms)),
        op.batches != null && h("span", `${fmt(op.batches)} batches`),
        op.blocks_read != null && h("span", `${fmt(op.blocks_read)} blocks read`),
        extra.map(([k, v]) => h("span", `${k.replace(/_/g, " ")} ${typeof v === "number" ? fmt(v) : v}`)))),
    op.children?.length ? h("ul", op.children.map(node)) : null);
}

/** The explain answer: times on top, then the operator tree. */
export function planView(doc) {
  const times = [
    ["parse", doc.parse_ms], ["plan", doc.plan_ms], ["execute", doc.execute_ms],
    ["queue", doc.queue_ms], ["total", doc.total_ms],
  ].filter(([, v]) => v != null);
  return h("div.plan",
    h("div.plan-times", times.map(([name, v]) => h("div.stat", h("span.stat-label", name), h("span.stat-value", ms(v)))),
      doc.rows != null && h("div.stat", h("span.stat-label", "rows"), h("span.stat-value", fmt(doc.rows)))),
    doc.profile ? h("ul.plan-tree", node(doc.profile)) : h("p.muted", "The server gave no operator profile."));
}

const PAGE_COLUMNS = [
  ["rows", "Rows"],
  ["Tern-Rows-Before", "Rows before"],
  ["Tern-Suspend-Us", "Suspend µs"],
  ["Tern-Resume-Us", "Resume µs"],
  ["Tern-Resumed-From", "Resumed from"],
  ["Tern-Token-Bytes", "Token bytes"],
  ["Tern-Queue-Ms", "Queue ms"],
  ["fetchMs", "Round trip ms"],
];

/** One line per page (the latest ones): the Tern-* headers of its response. */
export function pagesTable(pages) {
  return h("table.pages",
    h("thead", h("tr", h("th", "Page"), PAGE_COLUMNS.map(([, label]) => h("th", label)))),
    h("tbody", pages.map((page) => h("tr", h("td", fmt(page.number)),
      PAGE_COLUMNS.map(([key]) => {
        const value = key in page ? page[key] : page.headers[key];
        return h("td", value == null ? "–" : typeof value === "number" ? fmt(Math.round(value * 10) / 10) : value);
      })))));
}
