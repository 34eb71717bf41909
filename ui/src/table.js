// A virtualized results table: a page can hold thousands of rows, so only
// the rows in view (plus a margin) exist in the DOM, positioned inside a
// spacer as tall as all rows. Rows have one fixed height; long values are
// cut with an ellipsis and shown whole in a tooltip.

import { h } from "./dom.js";

const ROW_HEIGHT = 26; // px; keep in sync with .vt-row in app.css
const OVERSCAN = 15;

/**
 * Renders `rows` (arrays of cells) under `columns` into a scrolling box.
 * `renderCell(value)` makes a cell's content; `firstNumber` is the number
 * shown for the first row (rows before this page count too).
 */
export function virtualTable({ columns, rows, renderCell, cellTitle, firstNumber = 1 }) {
  const template = `6em repeat(${columns.length}, minmax(10em, 1fr))`;
  const header = h("div.vt-row.vt-head", { role: "row", style: `grid-template-columns:${template}` },
    h("div.vt-cell.vt-num", "#"), columns.map((c) => h("div.vt-cell", { role: "columnheader" }, c)));
  const body = h("div.vt-body", { style: `height:${rows.length * ROW_HEIGHT}px` });
  const scroller = h("div.vt", { role: "table", "aria-rowcount": rows.length }, header, body);
  scroller.style.setProperty("--vt-min-width", `${6 + columns.length * 10}em`);

  let shown = [-1, -1];
  let frame = 0;
  const render = () => {
    frame = 0;
    const top = Math.max(0, scroller.scrollTop - header.offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil((scroller.clientHeight || 600) / ROW_HEIGHT);
    const last = Math.min(rows.length, first + visible + 2 * OVERSCAN);
    if (first === shown[0] && last === shown[1]) return;
    shown = [first, last];
    const fragment = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      fragment.append(h("div.vt-row", {
        role: "row",
        style: `grid-template-columns:${template};top:${i * ROW_HEIGHT}px`,
        dataset: { row: firstNumber + i },
      }, h("div.vt-cell.vt-num", String(firstNumber + i)),
      rows[i].map((cell) => h("div.vt-cell", { role: "cell", title: cellTitle(cell) }, renderCell(cell)))));
    }
    body.replaceChildren(fragment);
  };
  scroller.addEventListener("scroll", () => { frame ||= requestAnimationFrame(render); }, { passive: true });
  // The first render needs the box's height, known once it is in the page.
  // Removal from the page also reports a resize: then the observer lets go,
  // so the page's rows can be freed.
  const observer = new ResizeObserver(() => {
    if (!scroller.isConnected) return observer.disconnect();
    shown = [-1, -1];
    render();
  });
  observer.observe(scroller);
  render();
  return scroller;
}
