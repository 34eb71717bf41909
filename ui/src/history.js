// Query history in localStorage, the unsaved draft, and share links that
// carry a query in the URL fragment (/#query=…), so a link works without any
// server-side storage and the query never reaches server logs.

const HISTORY_KEY = "tern.history";
const DRAFT_KEY = "tern.draft";
const MAX_HISTORY = 50;

// localStorage can be unavailable (privacy modes) or full: history is a
// convenience, so failures are swallowed.
function read(key, fallback) {
  try {
    const value = localStorage.getItem(key);
    return value == null ? fallback : JSON.parse(value);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch { /* see read() */ }
}

/** The last queries run, newest first: [{query, at}]. */
export const history = () => read(HISTORY_KEY, []);

export function remember(query) {
  const text = query.trim();
  if (!text) return;
  const entries = history().filter((e) => e.query.trim() !== text);
  entries.unshift({ query, at: Date.now() });
  write(HISTORY_KEY, entries.slice(0, MAX_HISTORY));
}

export const draft = () => read(DRAFT_KEY, null);
export const saveDraft = (query) => write(DRAFT_KEY, query);

export const shareURL = (query) =>
  `${location.origin}${location.pathname}#query=${encodeURIComponent(query)}`;

/** The query in the current URL's fragment, or null. */
export function sharedQuery(hash = location.hash) {
  const m = /^#query=(.*)$/s.exec(hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

/** "3 min ago"-style age of a history entry. */
export function age(at) {
  const s = Math.round((Date.now() - at) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(at).toLocaleDateString();
}
