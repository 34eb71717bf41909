// Tiny DOM helpers, so the views read as a description of their markup
// without pulling in a framework.

/** Creates an element: h("a.iri", {href: "#"}, "text", child, ...). */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child == null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** An SVG element (charts); attributes are set verbatim. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  for (const child of children) if (child != null) el.append(child);
  return el;
}

/** Replaces all children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const numberFormat = new Intl.NumberFormat("en");
export const fmt = (n) => (typeof n === "number" ? numberFormat.format(n) : String(n));

/** Milliseconds with a precision that suits their size. */
export function ms(value) {
  if (value == null) return "–";
  if (value >= 100) return `${fmt(Math.round(value))} ms`;
  if (value >= 1) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(3)} ms`;
}

/**
 * A drop-down menu attached to `button`. `items()` is called on every open, so
 * the menu always shows current data (history changes between opens).
 */
export function menu(button, items) {
  const list = h("div.menu", { role: "menu", hidden: true });
  const wrap = h("div.menu-wrap", button, list);
  const close = () => { list.hidden = true; };
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    if (!list.hidden) return close();
    const entries = items();
    replace(list, entries.length ? entries.map(({ label, title, detail, run }) =>
      h("button.menu-item", {
        type: "button", role: "menuitem", title,
        onclick: () => { close(); run(); },
      }, h("span.menu-label", label), detail && h("span.menu-detail", detail)),
    ) : h("div.menu-empty", "Nothing here yet"));
    list.hidden = false;
  });
  document.addEventListener("click", (event) => { if (!wrap.contains(event.target)) close(); });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") close(); });
  return wrap;
}
