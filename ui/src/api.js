// The endpoint's HTTP API, as the UI uses it. Everything is same-origin: the
// server serves this app, so relative URLs need no configuration.

export const SOLUTIONS = "application/sparql-results+json";
export const TRIPLES = "application/n-triples";

// One quantum of work per request and a row cap per page: the server suspends
// the query after either and hands back a continuation token, so a huge
// result arrives one bounded page at a time and is never held whole here.
export const PAGING = { quantum: "50ms", "page-rows": "500" };

/** A non-2xx answer; `body` is the server's text (its error message). */
export class HttpError extends Error {
  constructor(status, body) {
    super(body.trim() || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function check(response) {
  if (!response.ok) throw new HttpError(response.status, await response.text());
  return response;
}

/**
 * GET a JSON resource that newer servers have and older ones may lack:
 * resolves to null on 404 so callers can hide the feature instead of failing.
 */
export async function optionalJSON(path, { signal } = {}) {
  const response = await fetch(path, { signal, headers: { Accept: "application/json" } });
  if (response.status === 404) return null;
  return (await check(response)).json();
}

export async function optionalText(path, { signal } = {}) {
  const response = await fetch(path, { signal });
  if (response.status === 404) return null;
  return (await check(response)).text();
}

const post = (form, accept, signal) =>
  fetch("/sparql", {
    method: "POST",
    body: new URLSearchParams(form),
    headers: { Accept: accept },
    signal,
  });

// Response headers that describe one page of a suspended/resumed query (the
// server exposes them for the plan view's paging table).
const PAGE_HEADERS = [
  "Tern-Rows-Before", "Tern-Suspend-Us", "Tern-Resume-Us", "Tern-Resumed-From",
  "Tern-Token-Bytes", "Tern-Queue-Ms", "Tern-Parse-Ms", "Tern-Plan-Ms",
];

/**
 * Fetches one page: the first (`{query}`) or a later one (`{next}`), in
 * `accept` (SPARQL JSON for SELECT/ASK, N-Triples for graphs). Resolves to
 * {kind: "solutions"|"boolean"|"triples"|"text", vars, rows, boolean, text,
 * next, headers, fetchMs}; `next` is the continuation token or null.
 */
export async function fetchPage(params, accept, { signal, parseTriples } = {}) {
  const started = performance.now();
  const response = await check(await post({ ...params, ...PAGING }, accept, signal));
  const type = response.headers.get("Content-Type") || "";
  const headers = {};
  for (const name of PAGE_HEADERS) headers[name] = response.headers.get(name);
  const page = { headers, next: response.headers.get("Tern-Next") };
  if (type.startsWith(SOLUTIONS)) {
    const doc = parseResultsJSON(await response.text());
    if ("boolean" in doc) Object.assign(page, { kind: "boolean", boolean: doc.boolean });
    else Object.assign(page, { kind: "solutions", vars: doc.head.vars, rows: doc.results.bindings });
    page.next = doc.next || page.next;
  } else if (type.startsWith(TRIPLES) || type.startsWith("application/n-quads")) {
    Object.assign(page, { kind: "triples", rows: parseTriples(await response.text()) });
  } else {
    Object.assign(page, { kind: "text", text: await response.text(), type });
  }
  page.fetchMs = performance.now() - started;
  return page;
}

function parseResultsJSON(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    // The status line went out before the query failed and the body broke
    // off; the server's trailer says why, which fetch() does not expose.
    throw new Error("The result was cut short: the query failed while its results were being sent.");
  }
  // A failure after the first rows, reported in the body: the server closes
  // the bindings and adds {"error": {"incomplete": true, "message": …}}.
  if (doc.error) throw new Error(`The result was cut short: ${doc.error.message || "the query failed"}`);
  return doc;
}

/** Runs the query with explain=true: the timings and operator profile. */
export async function explain(query, { signal } = {}) {
  const response = await check(await post({ query, explain: "true" }, "application/json", signal));
  return response.json();
}

/** IRIs from the data that start with `prefix`, most frequent first. */
export async function complete(prefix, context, limit, { signal } = {}) {
  const params = new URLSearchParams({ prefix, context, limit: String(limit) });
  const doc = await optionalJSON(`/complete?${params}`, { signal });
  return doc && doc.completions;
}

/** A full-result download link (not paged): GET /sparql?query=…&format=…. */
export const downloadURL = (query, format) =>
  `/sparql?${new URLSearchParams({ query, format })}`;

/**
 * "query syntax error: error at 3:7: expected …" → {line, column, message}
 * (1-based, as the server counts: characters, not bytes), or null.
 */
export function syntaxErrorPosition(text) {
  const m = /error at (\d+):(\d+):\s*([\s\S]*)/.exec(text);
  return m && { line: Number(m[1]), column: Number(m[2]), message: m[3].trim() };
}
