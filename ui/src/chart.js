// A chart of the current page for results with numeric columns: bars for a
// few rows, a line for many. Drawn as SVG by hand; a charting library would
// outweigh the rest of the bundle for this.

import { h, svg, fmt } from "./dom.js";
import { isNumeric, termText } from "./terms.js";

const WIDTH = 900, HEIGHT = 320;
const PAD = { top: 16, right: 16, bottom: 70, left: 64 };
const MAX_BARS = 60;
const MAX_POINTS = 2000;

/** Columns whose bound values on this page are all numeric literals. */
export function numericColumns(columns, rows) {
  return columns.filter((_, c) => {
    let seen = false;
    for (const row of rows) {
      const term = row[c];
      if (!term) continue;
      if (!isNumeric(term)) return false;
      seen = true;
    }
    return seen;
  });
}

// About five round tick values spanning [min, max].
function ticks(min, max) {
  if (min === max) return [min];
  const raw = (max - min) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step / 1e6; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The chart panel: pickers for the value and label columns, and the plot. */
export function chartView(columns, rows, prefixes) {
  const numeric = numericColumns(columns, rows);
  if (!numeric.length) return h("p.muted", "No numeric column on this page to chart.");
  const labelChoices = ["(row number)", ...columns];
  const valueSelect = h("select", { "aria-label": "value column" }, numeric.map((c) => h("option", { value: c }, c)));
  const firstText = columns.find((c) => !numeric.includes(c));
  const labelSelect = h("select", { "aria-label": "label column" },
    labelChoices.map((c) => h("option", { value: c, selected: c === firstText }, c)));
  const plot = h("div.chart-plot");
  const draw = () => plot.replaceChildren(plotSVG(columns, rows, valueSelect.value, labelSelect.value, prefixes));
  valueSelect.addEventListener("change", draw);
  labelSelect.addEventListener("change", draw);
  draw();
  return h("div.chart", h("div.chart-controls", h("label", "Value ", valueSelect), h("label", "Label ", labelSelect)), plot);
}

function plotSVG(columns, rows, valueColumn, labelColumn, prefixes) {
  const v = columns.indexOf(valueColumn);
  const l = columns.indexOf(labelColumn);
  let points = rows
    .map((row, i) => ({ value: row[v] ? Number(row[v].value) : NaN, label: l >= 0 ? termText(row[l], prefixes) : String(i + 1) }))
    .filter((p) => Number.isFinite(p.value));
  const bars = points.length <= MAX_BARS;
  if (points.length > MAX_POINTS) {
    const stride = Math.ceil(points.length / MAX_POINTS);
    points = points.filter((_, i) => i % stride === 0);
  }
  const values = points.map((p) => p.value);
  const min = Math.min(0, ...values), max = Math.max(0, ...values);
  const innerW = WIDTH - PAD.left - PAD.right, innerH = HEIGHT - PAD.top - PAD.bottom;
  const y = (value) => PAD.top + innerH - ((value - min) / (max - min || 1)) * innerH;
  const slot = innerW / Math.max(points.length, 1);
  const x = (i) => PAD.left + slot * (i + 0.5);

  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: bars ? "bar-chart" : "line-chart", role: "img" });
  for (const t of ticks(min, max)) {
    root.append(svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(t), y2: y(t), class: "grid" }),
      svg("text", { x: PAD.left - 6, y: y(t) + 4, "text-anchor": "end", class: "tick" }, fmt(t)));
  }
  if (bars) {
    points.forEach((p, i) => {
      const top = y(Math.max(p.value, 0)), bottom = y(Math.min(p.value, 0));
      root.append(svg("rect", { x: x(i) - slot * 0.4, y: top, width: slot * 0.8, height: Math.max(bottom - top, 1), class: "bar" },
        svg("title", {}, `${p.label}: ${fmt(p.value)}`)));
      const label = p.label.length > 14 ? `${p.label.slice(0, 13)}…` : p.label;
      root.append(svg("text", { x: x(i), y: HEIGHT - PAD.bottom + 12, class: "tick",
        transform: `rotate(40 ${x(i)} ${HEIGHT - PAD.bottom + 12})` }, label));
    });
  } else {
    root.append(svg("polyline", { class: "line", points: points.map((p, i) => `${x(i)},${y(p.value)}`).join(" ") }));
    root.append(svg("text", { x: PAD.left, y: HEIGHT - PAD.bottom + 20, class: "tick" }, points[0]?.label ?? ""),
      svg("text", { x: WIDTH - PAD.right, y: HEIGHT - PAD.bottom + 20, class: "tick", "text-anchor": "end" }, points.at(-1)?.label ?? ""));
  }
  root.append(svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(0), y2: y(0), class: "axis" }));
  return root;
}
