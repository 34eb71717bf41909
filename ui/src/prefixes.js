// Prefix maps: shortening IRIs for display and completion, expanding
// prefixed names for /complete. Sources, from weakest to strongest: a few
// standard vocabularies (so results read well even when the server has no
// /prefixes), the server's /prefixes, and the query's own declarations.

import { optionalJSON } from "./api.js";

const STANDARD = {
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  rdfs: "http://www.w3.org/2000/01/rdf-schema#",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  owl: "http://www.w3.org/2002/07/owl#",
};

// Local parts that can be written after "prefix:" without escapes.
const LOCAL = /^(?:[\p{L}\p{N}_](?:[\p{L}\p{N}_\-.\u00B7]*[\p{L}\p{N}_\-\u00B7])?)?$/u;

export class PrefixMap {
  /** `layers`: objects or Maps of prefix → namespace, weakest first. */
  constructor(...layers) {
    this.map = new Map();
    for (const layer of layers)
      for (const [prefix, ns] of layer instanceof Map ? layer : Object.entries(layer || {}))
        this.map.set(prefix, ns);
    // Longest namespace first, so the most specific prefix wins.
    this.byLength = [...this.map].sort((a, b) => b[1].length - a[1].length);
    this.cache = new Map();
  }

  /** A map with the query's declarations layered on top of this one. */
  with(declared) {
    return declared.size ? new PrefixMap(this.map, declared) : this;
  }

  expand(prefix) {
    return this.map.get(prefix);
  }

  /** {prefix, local} for the best prefix of `iri`, or null. */
  split(iri) {
    let hit = this.cache.get(iri);
    if (hit !== undefined) return hit;
    hit = null;
    for (const [prefix, ns] of this.byLength) {
      if (iri.length >= ns.length && iri.startsWith(ns) && LOCAL.test(iri.slice(ns.length))) {
        hit = { prefix, local: iri.slice(ns.length) };
        break;
      }
    }
    // Bounded: a page of results holds thousands of distinct IRIs.
    if (this.cache.size > 5000) this.cache.clear();
    this.cache.set(iri, hit);
    return hit;
  }

  /** "ex:local" when a prefix fits, else "<iri>". */
  shorten(iri) {
    const hit = this.split(iri);
    return hit ? `${hit.prefix}:${hit.local}` : `<${iri}>`;
  }
}

/** The server's prefixes layered over the standard ones (404: standard only). */
export async function loadServerPrefixes() {
  try {
    const doc = await optionalJSON("/prefixes");
    return new PrefixMap(STANDARD, doc?.prefixes);
  } catch {
    return new PrefixMap(STANDARD);
  }
}

export const standardPrefixes = () => new PrefixMap(STANDARD);
