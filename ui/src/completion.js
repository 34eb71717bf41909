// IRI completion from the data: while the user types an IRI (<http://…) or
// a prefixed name (ex:Tern), GET /complete with the full IRI typed so far
// and the term's role in the triple pattern, and list the answers (most
// frequent first) shortened with prefixes.

import { tokenize, declaredPrefixes, termRole } from "./sparql.js";
import * as api from "./api.js";

const LIMIT = 20;
const DEBOUNCE_MS = 150;
const RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

// Answers by role and IRI prefix. A short answer (fewer than LIMIT) is the
// complete list for its prefix, so longer prefixes are filtered locally
// instead of asking again on every keystroke.
class AnswerCache {
  constructor(size = 200) { this.size = size; this.map = new Map(); }
  get(role, prefix) {
    const exact = this.map.get(`${role}\n${prefix}`);
    if (exact) return exact;
    for (const [key, items] of this.map) {
      const [r, p] = key.split("\n");
      if (r === role && items.length < LIMIT && prefix.startsWith(p))
        return items.filter((item) => item.iri.startsWith(prefix));
    }
    return null;
  }
  set(role, prefix, items) {
    if (this.map.size >= this.size) this.map.delete(this.map.keys().next().value);
    this.map.set(`${role}\n${prefix}`, items);
  }
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); });
});

/**
 * The term being typed at the cursor: {from, to, iri} where `iri` is the
 * full IRI prefix it stands for, or null when the cursor is not in an IRI
 * or a prefixed name whose prefix is known.
 */
function typedTerm(state, pos, prefixes) {
  const line = state.doc.lineAt(pos);
  const before = state.sliceDoc(0, pos);
  const tokens = tokenize(before);
  const last = tokens[tokens.length - 1];
  if (!last || last.to !== pos) return null;
  // Replace the rest of the term after the cursor too, e.g. a closing ">".
  const after = state.sliceDoc(pos, line.to);
  if (last.type === "iri-open") {
    const rest = /^[^<>"{}|^`\\\s]*>?/.exec(after)[0];
    return { from: last.from, to: pos + rest.length, iri: last.text.slice(1), tokens: tokens.slice(0, -1) };
  }
  if (last.type === "pname") {
    const colon = last.text.indexOf(":");
    const ns = prefixes.expand(last.text.slice(0, colon));
    if (ns == null) return null;
    // Escapes in the local part (ex:a\-b) stand for the bare character.
    const local = last.text.slice(colon + 1).replace(/\\(.)/g, "$1");
    const rest = /^[\w\-.:%]*/.exec(after)[0];
    return { from: last.from, to: pos + rest.length, iri: ns + local, tokens: tokens.slice(0, -1) };
  }
  return null;
}

/**
 * A CodeMirror completion source. `getPrefixes()` gives the server's prefix
 * map; `onUnavailable` is told once when the server has no /complete.
 */
export function completionSource({ getPrefixes, onUnavailable = () => {} }) {
  const cache = new AnswerCache();
  let available = true;

  return async (context) => {
    if (!available) return null;
    const text = context.state.doc.toString();
    const prefixes = getPrefixes().with(declaredPrefixes(text));
    const term = typedTerm(context.state, context.pos, prefixes);
    // Just "<" could be a comparison: wait for one more character unless asked.
    if (!term || (term.iri === "" && !context.explicit)) return null;
    const isType = (token) => token.text === "a" || expand(token, prefixes) === RDF_TYPE;
    const role = termRole(term.tokens, isType);

    let items = cache.get(role, term.iri);
    if (!items) {
      const controller = new AbortController();
      context.addEventListener("abort", () => controller.abort(), { onDocChange: true });
      await sleep(DEBOUNCE_MS, controller.signal);
      if (context.aborted) return null;
      try {
        items = await api.complete(term.iri, role, LIMIT, { signal: controller.signal });
      } catch {
        return null; // aborted, or the server is unreachable: no list, no noise
      }
      if (items == null) { available = false; onUnavailable(); return null; }
      cache.set(role, term.iri, items);
    }
    if (!items.length) return null;
    return {
      from: term.from,
      to: term.to,
      filter: false, // the server already matched and ranked them
      options: items.map(({ iri, count }) => ({
        label: prefixes.shorten(iri),
        detail: count != null ? `${count.toLocaleString("en")}×` : undefined,
        info: iri,
        type: role === "predicate" ? "property" : role === "class" ? "class" : "constant",
      })),
    };
  };
}

function expand(token, prefixes) {
  if (token.type === "iri") return token.text.slice(1, -1);
  if (token.type !== "pname") return null;
  const colon = token.text.indexOf(":");
  const ns = prefixes.expand(token.text.slice(0, colon));
  return ns == null ? null : ns + token.text.slice(colon + 1);
}
