// RDF terms: parsing N-Triples pages (graph results) into SPARQL-JSON-shaped
// terms, and rendering terms as compact, clickable table cells.

import { h } from "./dom.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";
const NUMERIC = new Set([
  "integer", "decimal", "double", "float", "int", "long", "short", "byte",
  "nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger",
  "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
].map((t) => XSD + t));

export const isNumeric = (term) =>
  term?.type === "literal" && NUMERIC.has(term.datatype) && Number.isFinite(Number(term.value));

const ESCAPES = { t: "\t", b: "\b", n: "\n", r: "\r", f: "\f", '"': '"', "'": "'", "\\": "\\" };
const unescape = (s) => s.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (_, u, U, c) =>
  u || U ? String.fromCodePoint(parseInt(u || U, 16)) : ESCAPES[c] ?? c);

// One term at `pos` of an N-Triples line: [term, next position].
function readTerm(line, pos) {
  while (line[pos] === " " || line[pos] === "\t") pos++;
  if (line.startsWith("<<(", pos)) {
    // An RDF 1.2 triple term: <<( s p o )>>.
    const [subject, a] = readTerm(line, pos + 3);
    const [predicate, b] = readTerm(line, a);
    const [object, c] = readTerm(line, b);
    const end = line.indexOf(")>>", c);
    if (end < 0) throw new Error("unterminated triple term");
    return [{ type: "triple", value: { subject, predicate, object } }, end + 3];
  }
  if (line[pos] === "<") {
    const end = line.indexOf(">", pos);
    if (end < 0) throw new Error("unterminated IRI");
    return [{ type: "uri", value: unescape(line.slice(pos + 1, end)) }, end + 1];
  }
  if (line.startsWith("_:", pos)) {
    const m = /^_:[^\s]+/.exec(line.slice(pos));
    return [{ type: "bnode", value: m[0].slice(2) }, pos + m[0].length];
  }
  if (line[pos] === '"') {
    let end = pos + 1;
    while (line[end] !== '"') {
      if (end >= line.length) throw new Error("unterminated literal");
      end += line[end] === "\\" ? 2 : 1;
    }
    const term = { type: "literal", value: unescape(line.slice(pos + 1, end)) };
    end++;
    if (line[end] === "@") {
      const m = /^@[A-Za-z0-9-]+/.exec(line.slice(end));
      term["xml:lang"] = m[0].slice(1);
      end += m[0].length;
    } else if (line.startsWith("^^<", end)) {
      const close = line.indexOf(">", end);
      term.datatype = line.slice(end + 3, close);
      end = close + 1;
    }
    return [term, end];
  }
  throw new Error(`unreadable N-Triples term at column ${pos + 1}`);
}

/** One page of N-Triples (or N-Quads) as rows of [subject, predicate, object]. */
export function parseNTriples(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    try {
      const [s, a] = readTerm(line, 0);
      const [p, b] = readTerm(line, a);
      const [o] = readTerm(line, b);
      rows.push([s, p, o]);
    } catch {
      // Keep an unreadable line visible rather than dropping data silently.
      rows.push([{ type: "literal", value: line }, null, null]);
    }
  }
  return rows;
}

/** A cell's content: IRIs shortened and clickable, literal annotations subtle. */
export function renderTerm(term, prefixes) {
  if (!term) return "";
  switch (term.type) {
    case "uri":
      return h("a.iri", { href: "#", title: term.value, dataset: { iri: term.value } }, prefixes.shorten(term.value));
    case "bnode":
      return h("span.bnode", `_:${term.value}`);
    case "triple": {
      const { subject, predicate, object } = term.value;
      return h("span.triple", "<< ", renderTerm(subject, prefixes), " ", renderTerm(predicate, prefixes),
        " ", renderTerm(object, prefixes), " >>");
    }
    default: {
      const lang = term["xml:lang"];
      const dt = term.datatype;
      return h("span.literal" + (isNumeric(term) ? ".number" : ""), term.value,
        lang && h("span.lang", `@${lang}`),
        dt && dt !== XSD + "string" && h("span.datatype", `^^${prefixes.shorten(dt)}`));
    }
  }
}

/** Plain text of a term, for tooltips and chart labels. */
export function termText(term, prefixes) {
  if (!term) return "";
  if (term.type === "uri") return prefixes.shorten(term.value);
  if (term.type === "bnode") return `_:${term.value}`;
  if (term.type === "triple") return "<< … >>";
  return term.value;
}
