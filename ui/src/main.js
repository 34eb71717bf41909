// Entry point: loads the server's prefixes, builds the two pages (query
// workbench and status) and switches between them on the URL fragment:
// "#status" shows the status page, "#query=…" loads a shared query.

import { h } from "./dom.js";
import { workbench } from "./workbench.js";
import { statusPage } from "./status.js";
import { loadServerPrefixes, standardPrefixes } from "./prefixes.js";

// Usable at once; replaced when /prefixes answers (or stays on 404).
let serverPrefixes = standardPrefixes();
loadServerPrefixes().then((p) => { serverPrefixes = p; });

const bench = workbench({ getPrefixes: () => serverPrefixes });
const status = statusPage();
const queryLink = h("a.nav", { href: "#" }, "Query");
const statusLink = h("a.nav", { href: "#status" }, "Status");

document.body.append(
  h("header.top", h("span.brand", "Tern"), h("span.brand-sub", "SPARQL workbench"), h("nav", queryLink, statusLink),
    h("a.endpoint", { href: "/sparql", title: "The SPARQL endpoint this workbench queries" }, `${location.host}/sparql`)),
  h("main", bench.el, status.el));

function route() {
  const onStatus = location.hash === "#status";
  bench.el.hidden = onStatus;
  status.el.hidden = !onStatus;
  queryLink.setAttribute("aria-current", String(!onStatus));
  statusLink.setAttribute("aria-current", String(onStatus));
  if (onStatus) status.start();
  else {
    status.stop();
    bench.showShared();
  }
}

window.addEventListener("hashchange", route);
// Ctrl/Cmd-Enter runs from anywhere on the query page, not only the editor
// (the editor's own binding handles it there first).
document.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !bench.el.hidden && !event.defaultPrevented) {
    event.preventDefault();
    bench.run();
  }
});
route();
// Tests wait for this before typing.
document.body.dataset.ready = "true";
