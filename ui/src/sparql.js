// A small SPARQL lexer and the few facts the workbench needs from a query's
// text: its form (SELECT, CONSTRUCT, …), its PREFIX declarations, the
// prefixes it uses, and the role (subject, predicate, object, class) of the
// position the cursor is at. Highlighting has its own tokenizer in
// CodeMirror; this one must work on half-typed text between keystrokes, so
// it never fails: anything unknown becomes a one-character "op" token.

const PN_CHARS_BASE = "A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD";
const PN_CHARS = `${PN_CHARS_BASE}_0-9\\-\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
const PN_PREFIX = `[${PN_CHARS_BASE}](?:[${PN_CHARS}.]*[${PN_CHARS}])?`;
const PLX = "%[0-9A-Fa-f]{2}|\\\\[_~.\\-!$&'()*+,;=/?#@%]";
const PN_LOCAL_CHAR = `[${PN_CHARS}:]|${PLX}`;
// A local part may hold dots but not end with one (the dot ends the triple).
const PN_LOCAL = `(?:${PN_LOCAL_CHAR}|\\.(?=(?:${PN_LOCAL_CHAR})))*`;

const RULES = [
  ["ws", /\s+/y],
  ["comment", /#[^\n]*/y],
  ["iri", /<[^<>"{}|^`\\\s]*>/y],
  // An IRI still being typed: only at the end of the text (the cursor).
  ["iri-open", /<[^<>"{}|^`\\\s]*$/y],
  ["string", /'''(?:[^'\\]|\\[\s\S]|'(?!''))*(?:'''|$)|"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|$)|'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?/y],
  ["pname", new RegExp(`(?:${PN_PREFIX})?:${PN_LOCAL}`, "uy")],
  ["bnode", /_:[\w\-.]*/y],
  ["var", new RegExp(`[?$][${PN_CHARS}]+`, "uy")],
  ["number", /(?:\d*\.\d+|\d+(?:\.\d*)?)(?:[eE][+-]?\d+)?/y],
  ["lang", /@[A-Za-z]+(?:-[A-Za-z0-9]+)*/y],
  ["dt", /\^\^/y],
  ["word", /[A-Za-z_][A-Za-z0-9_]*/y],
  ["punct", /[{}()[\].,;]/y],
  ["op", /[\s\S]/y],
];

/** Tokens of `text` (whitespace and comments dropped): {type, text, from, to}. */
export function tokenize(text) {
  const tokens = [];
  let pos = 0;
  while (pos < text.length) {
    for (const [type, re] of RULES) {
      re.lastIndex = pos;
      const m = re.exec(text);
      if (!m || m[0].length === 0) continue;
      // "1." ends a triple after an integer; a number never ends with a dot.
      let value = m[0];
      if (type === "number" && value.endsWith(".") && !/[eE]/.test(value)) value = value.slice(0, -1);
      if (type !== "ws" && type !== "comment") tokens.push({ type, text: value, from: pos, to: pos + value.length });
      pos += value.length;
      break;
    }
  }
  return tokens;
}

const isWord = (token, word) => token && token.type === "word" && token.text.toUpperCase() === word;

/** SELECT, ASK, CONSTRUCT, DESCRIBE (or an update keyword), or null. */
export function queryForm(text) {
  for (const token of tokenize(text)) {
    if (token.type !== "word") continue;
    const word = token.text.toUpperCase();
    if (word !== "PREFIX" && word !== "BASE") return word;
  }
  return null;
}

export const isGraphForm = (form) => form === "CONSTRUCT" || form === "DESCRIBE";

/** The query's PREFIX declarations, prefix → namespace IRI. */
export function declaredPrefixes(text, tokens = tokenize(text)) {
  const map = new Map();
  tokens.forEach((token, i) => {
    const name = tokens[i + 1], iri = tokens[i + 2];
    if (isWord(token, "PREFIX") && name?.type === "pname" && name.text.endsWith(":") && iri?.type === "iri")
      map.set(name.text.slice(0, -1), iri.text.slice(1, -1));
  });
  return map;
}

/** Prefixes used by prefixed names outside PREFIX declarations. */
export function usedPrefixes(tokens) {
  const used = new Set();
  tokens.forEach((token, i) => {
    if (token.type === "pname" && !isWord(tokens[i - 1], "PREFIX"))
      used.add(token.text.slice(0, token.text.indexOf(":")));
  });
  return used;
}

/**
 * Where to add a PREFIX line so it joins the query's prologue: after the
 * last leading PREFIX/BASE declaration, else at the very top.
 */
export function prologueEnd(tokens) {
  let end = null;
  for (let i = 0; i < tokens.length;) {
    if (isWord(tokens[i], "PREFIX") && tokens[i + 2]?.type === "iri") { end = tokens[i + 2].to; i += 3; }
    else if (isWord(tokens[i], "BASE") && tokens[i + 1]?.type === "iri") { end = tokens[i + 1].to; i += 2; }
    else break;
  }
  return end;
}

const TERM_TYPES = new Set(["iri", "pname", "var", "bnode", "number", "string"]);
const CLOSERS = { ")": "(", "]": "[" };

// Index of the first token of the term that ends at token j, or -1 when
// token j does not end a term. A literal with its language tag or datatype,
// and a bracketed group ([ … ] or ( … )), count as one term.
function termStart(tokens, j) {
  const token = tokens[j];
  if (token.type === "lang") return tokens[j - 1]?.type === "string" ? j - 1 : -1;
  if (token.type === "punct" && CLOSERS[token.text]) {
    for (let depth = 0, k = j; k >= 0; k--) {
      if (tokens[k].text === token.text) depth++;
      else if (tokens[k].text === CLOSERS[token.text] && --depth === 0) return k;
    }
    return -1;
  }
  const isTerm = TERM_TYPES.has(token.type)
    || isWord(token, "A") || isWord(token, "TRUE") || isWord(token, "FALSE");
  if (!isTerm) return -1;
  return tokens[j - 1]?.type === "dt" && tokens[j - 2]?.type === "string" ? j - 2 : j;
}

/**
 * The role of a term typed after `tokens` (the tokens before it), guessed
 * from its place in the triple pattern: "subject", "predicate", "object",
 * or "class" (the object of `a` / rdf:type). `isType(token)` says whether a
 * predicate token means rdf:type.
 */
export function termRole(tokens, isType) {
  const starts = []; // first tokens of the terms before the cursor, nearest first
  let j = tokens.length - 1;
  const object = (predicate) => (predicate && isType(predicate) ? "class" : "object");
  while (j >= 0) {
    const start = termStart(tokens, j);
    if (start >= 0) { starts.push(start); j = start - 1; continue; }
    const text = tokens[j].text;
    if (text === ";" || text === "[")
      return starts.length === 0 ? "predicate" : object(tokens[starts[0]]);
    if (text === ",") {
      // An object list: its predicate stands before the first object.
      let k = j;
      while (k >= 0 && tokens[k].text === ",") {
        const s = termStart(tokens, k - 1);
        if (s < 0) break;
        k = s - 1;
      }
      return object(tokens[k]);
    }
    if ((text === "/" || text === "|" || text === "^") && starts.length === 0) return "predicate";
    if (text === "(") return "object";
    break; // ".", "{", "}", keywords: a new triple pattern starts here
  }
  if (starts.length === 0) return "subject";
  if (starts.length === 1) return "predicate";
  return object(tokens[starts[0]]);
}
