#!/usr/bin/env python3
"""Shortest paths on a social graph over HTTP: Tern's path operator against the
best formulations found for Oxigraph (standard SPARQL) and Virtuoso (its
transitive option), side by side in one run, on the same random pairs.

Datasets (--dataset):
  social  bench/social.py's generated graph, --people N (default 1,000,000
          people: ~10.1 M soc:knows edges; dataset social-1m), generated once
          into --work and reused;
  watdiv  WatDiv SF10 (../shared/datasets/watdiv-10), its wsdbm:friendOf edges
          (--watdiv-predicate follows for wsdbm:follows).
Pairs: --pairs (source, target) pairs drawn with --seed from the nodes with an
outgoing edge (sources) and those with an incoming one (targets), source !=
target; --warmup more pairs, drawn after them, are run once per formulation first,
unmeasured. Edges are followed forward; L = --max-length bounds every formulation.

Formulations (each a row of the tables; S, T the pair's IRIs, P the predicate):
  tern            one query, Tern's path operator (docs/paths.md):
                  SELECT ?length WHERE { SERVICE <urn:tern:path> { [] path:source S ;
                  path:target T ; path:predicate P ; path:maxLength L ; path:length ?length } }
  oxigraph        iterative deepening, bidirectional (the best standard-SPARQL
                  formulation found): for k = 1, 2, ... L, one ASK, stopping at the
                  first true (the length is k); the measurement is the whole loop.
                  k = 1: ASK { S P T }; k >= 2: a = ceil(k/2), b = k - a,
                  ASK { { L_a } { R_b } } where L_a is the set (nested SELECT DISTINCT
                  subqueries, one per step) of the nodes at the end of a walk of a
                  edges from S, and R_b that of the nodes at the start of a walk of b
                  edges to T, both projected as ?x: a hash join of two deduplicated
                  frontiers, i.e. a bidirectional breadth-first search written in SPARQL
  oxigraph-seq    iterative deepening over sequence paths (not in the default
                  set): ASK { S P/P/.../P T } (k times) for k = 1..L, stopping at
                  the first true; the whole loop is one measurement
  oxigraph-reach  ASK { S P+ T }: reachability only, no length, no bound (a
                  reference, not a shortest path: it is not cross-checked against the
                  lengths except that it must be true whenever a length was found)
  virtuoso        Virtuoso's transitive option, shortest only, with a step counter:
                  SELECT ?dist WHERE { { SELECT ?s ?o WHERE { ?s P ?o } }
                  OPTION (TRANSITIVE, t_distinct, t_in(?s), t_out(?o), t_shortest_only,
                  t_max(L), t_step('step_no') AS ?dist) . FILTER (?s = S && ?o = T) }
                  (the direction of the search left to Virtuoso)
  virtuoso-both-ends  the same with t_direction 3 first in the OPTION: searching
                  from both ends (about as fast as the other on 1 M edges; both are
                  run, the faster one is Virtuoso's best)
  tern-reach, virtuoso-reach  ASK { S P+ T } on Tern and Virtuoso (not in the
                  default set; Virtuoso 7.2 fails it already on social-20k:
                  "Exceeded 1000000000 bytes in transitive temp memory")
--formulations picks any of them (default: tern, oxigraph, oxigraph-reach,
virtuoso, virtuoso-both-ends); --engines keeps the formulations of these engines
only.

Runs: per pair, --runs runs of every formulation, interleaved per pair (tern,
oxigraph, oxigraph-reach, virtuoso, tern, ...); a pair's latency is the median of
its runs. A run that fails or times out (--timeout per query, all engines; for
the deepening loops, the loop as a whole) ends that formulation's runs on that
pair: it counts as a timeout (at the timeout, in the percentiles) or a failure,
and the later pairs still run. Latency is from sending the request to the whole
answer read and parsed (http_query_bench.Client: one persistent connection per
engine, form POST, SPARQL JSON).

Cross-check: every length formulation must give the same length (or none within
L) on every pair, and reachability must be true where a length was found; any
disagreement is listed. Report, per formulation: answered pairs, timeouts,
failures, median, p90, p99 and max latency over the pairs, and its median over
Tern's (above 1: Tern is faster); the lengths found; Tern against the issue's
targets (median < 10 ms, p99 < 200 ms, >= 10x faster than every peer's
formulation, on the 10 M-edge graph). Markdown to stdout, everything (every run
of every pair) to bench/results/paths-<date>.json (paths-<date>-<dataset>.json
for another dataset than social-1m).

Servers, loading and client are http_query_bench.py's (tern serve, oxigraph
serve-read-only, a private Virtuoso 7.2 with the data in one named graph); the
indexes are built (untimed) in --work by http_query_bench.prepare.

Needs: a release `tern` (--tern), `bash bench/setup_peers.sh` (the oxigraph
server in its venv), `apt-get install virtuoso-opensource` (or --engines without
them). Stdlib only.
"""
import argparse
import collections
import contextlib
import datetime
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

import social
from benchlib import BENCH, DEFAULT_DATA, DEFAULT_TERN, DEFAULT_VENV, SHARED, git_commit, machine, stop_on_sigterm, \
    tool_version
from http_query_bench import ENGINES, LABEL, SERVERS, Client, biblio_dataset, check_programs, graph_of, load_average, \
    prepare
from query_bench import fmt_ms, publish

WSDBM = "http://db.uwaterloo.ca/~galuc/wsdbm/"
DEFAULT_FORMULATIONS = ("tern", "oxigraph", "oxigraph-reach", "virtuoso", "virtuoso-both-ends")
TARGETS = {"median_ms": 10, "p99_ms": 200, "speedup": 10}


# --- the formulations -------------------------------------------------------

def tern_path(s: str, t: str, p: str, limit: int) -> str:
    return ("PREFIX path: <urn:tern:path:>\nSELECT ?length WHERE { SERVICE <urn:tern:path> { "
            f"[] path:source {s} ; path:target {t} ; path:predicate {p} ; path:maxLength {limit} ; "
            "path:length ?length } }")


def reach(s: str, t: str, p: str, _limit: int = 0) -> str:
    """Reachability only: no length, no bound."""
    return f"ASK {{ {s} {p}+ {t} }}"


def virtuoso_transitive(s: str, t: str, p: str, limit: int, both_ends: bool = False) -> str:
    direction = "t_direction 3, " if both_ends else ""
    return (f"SELECT ?dist WHERE {{ {{ SELECT ?s ?o WHERE {{ ?s {p} ?o }} }} OPTION (TRANSITIVE, {direction}"
            f"t_distinct, t_in(?s), t_out(?o), t_shortest_only, t_max({limit}), t_step('step_no') AS ?dist) . "
            f"FILTER (?s = {s} && ?o = {t}) }}")


def frontier(end: str, p: str, steps: int, forward: bool) -> str:
    """The distinct nodes at the end of a walk of `steps` edges from `end` (forward) or
    at the start of one to `end` (backward), as ?x: nested SELECT DISTINCTs, one per
    step, each joining the previous frontier with one edge."""
    def edge(a, b):
        return f"{a} {p} {b}" if forward else f"{b} {p} {a}"
    last = "?x" if steps == 1 else "?v1"
    q = f"SELECT DISTINCT {last} WHERE {{ {edge(end, last)} }}"
    for i in range(2, steps + 1):
        nxt = "?x" if i == steps else f"?v{i}"
        q = f"SELECT DISTINCT {nxt} WHERE {{ {{ {q} }} {edge(f'?v{i - 1}', nxt)} }}"
    return q


def meet_in_the_middle(s: str, t: str, p: str, k: int) -> str:
    """ASK: is there a walk of exactly k edges from s to t (so a path of at most k)?"""
    if k == 1:
        return f"ASK {{ {s} {p} {t} }}"
    a = (k + 1) // 2
    return f"ASK {{ {{ {frontier(s, p, a, True)} }} {{ {frontier(t, p, k - a, False)} }} }}"


def sequence(s: str, t: str, p: str, k: int) -> str:
    return f"ASK {{ {s} {'/'.join([p] * k)} {t} }}"


# name: (engine, kind, what it is, query builder). kind: "length" (one SELECT whose
# first column is the length), "deepen" (one ASK per k, the length is the first k
# answering true), "reach" (one ASK, reachability only).
FORMULATIONS = {
    "tern": ("tern", "length", "path operator (SERVICE <urn:tern:path>), bidirectional BFS",
             tern_path),
    "oxigraph": ("oxigraph", "deepen", "iterative deepening, k = 1..L ASKs joining two DISTINCT frontiers "
                 "(ceil(k/2) steps from the source, the rest from the target)",
                 meet_in_the_middle),
    "oxigraph-seq": ("oxigraph", "deepen", "iterative deepening, k = 1..L ASKs over the sequence path P/P/.../P",
                     sequence),
    "oxigraph-reach": ("oxigraph", "reach", "ASK { S P+ T }: reachability only (no length, no bound)",
                       reach),
    "virtuoso": ("virtuoso", "length", "OPTION (TRANSITIVE, t_shortest_only, t_max(L), t_step('step_no') AS ?dist), "
                 "direction left to Virtuoso", virtuoso_transitive),
    "virtuoso-both-ends": ("virtuoso", "length", "the same with t_direction 3 (search from both ends)",
                           lambda s, t, p, L: virtuoso_transitive(s, t, p, L, True)),
    "tern-reach": ("tern", "reach", "ASK { S P+ T }: reachability only", reach),
    "virtuoso-reach": ("virtuoso", "reach", "ASK { S P+ T }: reachability only", reach),
}


def measure(client: Client, form: str, s: str, t: str, p: str, limit: int, timeout: float) -> dict:
    """One run of a formulation on a pair: {ms, queries, length or reachable, error, timeout}."""
    _, kind, _, build = FORMULATIONS[form]
    out = {"ms": 0.0, "queries": 0, "error": None, "timeout": False}
    for k in (range(1, limit + 1) if kind == "deepen" else [limit]):
        if kind == "deepen" and out["ms"] >= timeout * 1e3:
            out.update(error=f"the deepening loop passed the {timeout:g} s timeout before k = {k}", timeout=True)
            return out
        r = client.execute(build(s, t, p, k), False)
        out["ms"] += r["ms"]
        out["queries"] += 1
        if r["error"]:
            out.update(error=r["error"], timeout=r["timeout"])
            return out
        parsed = r["parsed"]
        if kind == "reach":
            out["reachable"] = bool(parsed["boolean"])
        elif kind == "deepen":
            if parsed["boolean"]:
                out["length"] = k
                return out
            out["length"] = None
        else:
            rows = parsed["results"]["bindings"]
            var = parsed["head"]["vars"][0]
            values = [int(b[var]["value"]) for b in rows if var in b]
            out["length"] = min(values) if values else None
            out["rows"] = len(rows)
    if kind == "deepen" and out["ms"] > timeout * 1e3:
        out.update(error=f"the deepening loop took {out['ms'] / 1e3:.1f} s, over the {timeout:g} s timeout",
                   timeout=True)
    return out


# --- the data ---------------------------------------------------------------

def social_dataset(people: int) -> str:
    """social-1m, social-20k, ... (biblio.py's naming)."""
    return "social-" + biblio_dataset(people).split("-", 1)[1]


def generate_social(nt: Path, people: int) -> dict:
    """The generated file with its counts, generated unless already in place."""
    stats_file = nt.with_name(nt.name + ".json")
    if nt.exists() and stats_file.exists():
        stats = json.loads(stats_file.read_text())
        if stats.get("people") == people:
            print(f"reusing {nt} ({stats['edges']:,} edges)", file=sys.stderr)
            return stats
    print(f"generating {people:,} people into {nt}", file=sys.stderr)
    stats = social.generate(nt, people, 1)
    stats_file.write_text(json.dumps(stats, indent=1) + "\n")
    print(f"  {stats['edges']:,} knows edges in {stats['seconds']} s", file=sys.stderr)
    return stats


def pick_pairs(nt: Path, predicate: str, count: int, seed: int) -> tuple[list[tuple[str, str]], dict]:
    """count distinct-ended (source, target) pairs: sources among the subjects of the
    predicate's triples, targets among their objects, drawn with the seed."""
    term = f"<{predicate}>"
    sources, targets, edges = set(), set(), 0
    with open(nt, encoding="utf-8") as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[1] == term:
                obj = parts[2].rstrip().removesuffix(".").rstrip()
                if obj.startswith("<"):
                    sources.add(parts[0])
                    targets.add(obj)
                    edges += 1
    if not sources:
        raise SystemExit(f"no <{predicate}> edges between IRIs in {nt}")
    rng = random.Random(seed)
    sources, targets = sorted(sources), sorted(targets)
    pairs = []
    while len(pairs) < count:
        s, t = rng.choice(sources), rng.choice(targets)
        if s != t:
            pairs.append((s, t))
    return pairs, {"edges": edges, "sources": len(sources), "targets": len(targets)}


# --- running ------------------------------------------------------------------

def run_pairs(args, pairs: list[tuple[str, str]], warmup: list[tuple[str, str]]) -> dict:
    forms, p, limit = args.formulations, f"<{args.predicate}>", args.max_length
    engines = [e for e in ENGINES if any(FORMULATIONS[f][0] == e for f in forms)]
    with contextlib.ExitStack() as stack:
        servers, clients = {}, {}
        for e in engines:
            began = time.monotonic()
            server = servers[e] = stack.enter_context(SERVERS[e](args))
            clients[e] = Client(server, args.timeout, grace=max(10.0, args.timeout / 2))
            print(f"  {e} up in {time.monotonic() - began:.1f} s: pid {server.proc.pid}, port {server.port}",
                  file=sys.stderr)
        load_before = load_average()
        t_start = time.monotonic()
        warmup_failures = []
        for s, t in warmup:
            for f in forms:
                r = measure(clients[FORMULATIONS[f][0]], f, s, t, p, limit, args.timeout)
                if r["error"]:
                    warmup_failures.append({"formulation": f, "source": s, "target": t, "error": r["error"][:300]})
        print(f"  warm-up ({len(warmup)} pairs) done in {time.monotonic() - t_start:.0f} s", file=sys.stderr)
        records = []
        for i, (s, t) in enumerate(pairs):
            recs = {f: {"runs_ms": [], "queries": None, "error": None, "timeout": False} for f in forms}
            answers = {f: [] for f in forms}
            for _ in range(args.runs):
                for f in forms:
                    rec = recs[f]
                    if rec["error"]:
                        continue  # failed or timed out on this pair: its later runs are skipped
                    r = measure(clients[FORMULATIONS[f][0]], f, s, t, p, limit, args.timeout)
                    if r["error"]:
                        rec.update(error=r["error"][:500], timeout=r["timeout"], failed_run_ms=round(r["ms"], 3))
                        continue
                    rec["runs_ms"].append(round(r["ms"], 3))
                    rec["queries"] = r["queries"]
                    answers[f].append(r.get("reachable", r.get("length")))
            for f in forms:
                rec = recs[f]
                if rec["runs_ms"] and not rec["error"]:
                    rec["median_ms"] = round(statistics.median(rec["runs_ms"]), 3)
                    key = "reachable" if FORMULATIONS[f][1] == "reach" else "length"
                    rec[key] = answers[f][0]
                    if len(set(answers[f])) > 1:
                        rec["answers_per_run"] = answers[f]
                elif rec["runs_ms"]:
                    rec["error"] = f"{len(rec['runs_ms'])} run(s) answered, then: {rec['error']}"
            records.append({"source": s, "target": t, **recs})
            if (i + 1) % 10 == 0 or i + 1 == len(pairs):
                print(f"  {i + 1}/{len(pairs)} pairs, {time.monotonic() - t_start:.0f} s", file=sys.stderr)
        elapsed = time.monotonic() - t_start
        load_after = load_average()
        info = {e: dict(cmd=server.cmd, port=server.port, reconnects=clients[e].reconnects)
                for e, server in servers.items()}
    return {"records": records, "servers": info, "elapsed_s": round(elapsed, 1), "load_average_before": load_before,
            "load_average_after": load_after, "warmup_failures": warmup_failures}


# --- checking and summarizing ---------------------------------------------------

def cross_check(records: list[dict], forms: list[str]) -> tuple[list[dict], dict]:
    """Per pair, the length the length formulations agree on (rec["length"]: an int or
    None for no path within L; absent if none answered) and the disagreements."""
    lengths = [f for f in forms if FORMULATIONS[f][1] != "reach"]
    reaches = [f for f in forms if FORMULATIONS[f][1] == "reach"]
    disagreements, histogram = [], collections.Counter()
    for rec in records:
        found = {f: rec[f]["length"] for f in lengths if "length" in rec[f]}
        reached = {f: rec[f]["reachable"] for f in reaches if "reachable" in rec[f]}
        problems = []
        if len(set(found.values())) > 1:
            problems.append("lengths differ")
        length = next(iter(found.values())) if found and len(set(found.values())) == 1 else "?"
        if len(set(reached.values())) > 1:
            problems.append("reachability differs")
        if any(v is not None for v in found.values()) and False in reached.values():
            problems.append("a length was found but reachability is false")
        for f in forms:
            if rec[f].get("answers_per_run"):
                problems.append(f"{f} answered differently between runs: {rec[f]['answers_per_run']}")
        if problems:
            disagreements.append({"source": rec["source"], "target": rec["target"], "problems": problems,
                                  "lengths": found, "reachable": reached})
        if found:
            rec["length"] = length
            histogram["no path within L" if length is None else "disagree" if length == "?" else str(length)] += 1
            if length is None and True in reached.values():
                rec["note"] = "reachable, but not within L"
        else:
            histogram["no answer"] += 1
    return disagreements, dict(sorted(histogram.items(), key=lambda kv: (not kv[0].isdigit(), kv[0].zfill(3))))


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q% of the values at or below it."""
    return sorted_values[max(0, math.ceil(q / 100 * len(sorted_values)) - 1)]


def summarize(records: list[dict], forms: list[str], timeout_s: float) -> dict:
    """Per formulation, over the pairs: latency percentiles (a timeout counts as the
    timeout, so such figures are lower bounds), counts, median over tern's."""
    out = {}
    for f in forms:
        answered = [r[f]["median_ms"] for r in records if r[f].get("median_ms") is not None]
        timeouts = sum(bool(r[f]["timeout"]) for r in records)
        failed = sum(bool(r[f]["error"]) and not r[f]["timeout"] for r in records)
        values = sorted(answered + [timeout_s * 1e3] * timeouts)
        row = {"pairs": len(records), "answered": len(answered), "timeouts": timeouts, "failed": failed,
               "queries_median": statistics.median([r[f]["queries"] for r in records if r[f].get("queries")] or [0])}
        if values:
            cap = timeout_s * 1e3
            for name, q in (("median_ms", 50), ("p90_ms", 90), ("p99_ms", 99), ("max_ms", 100)):
                v = percentile(values, q)
                row[name] = round(v, 3)
                row[name.replace("_ms", "_at_timeout")] = bool(timeouts) and v >= cap
        out[f] = row
    if "tern" in out and out["tern"].get("median_ms"):
        for f in forms:
            if f != "tern" and out[f].get("median_ms") is not None:
                out[f]["median_over_tern"] = round(out[f]["median_ms"] / out["tern"]["median_ms"], 2)
    return out


def targets(summary: dict) -> dict | None:
    """Tern against the issue's targets (meant for the 10 M-edge graph)."""
    t = summary.get("tern")
    if not t or t.get("median_ms") is None:
        return None
    peers = {f: r.get("median_over_tern") for f, r in summary.items()
             if f != "tern" and FORMULATIONS[f][1] != "reach" and FORMULATIONS[f][0] != "tern"}
    return {"median_below_10ms": t["median_ms"] < TARGETS["median_ms"] and not t.get("median_at_timeout"),
            "p99_below_200ms": t["p99_ms"] < TARGETS["p99_ms"] and not t.get("p99_at_timeout"),
            "10x_faster_than": {f: r is not None and r >= TARGETS["speedup"] for f, r in peers.items()}}


def markdown(report: dict) -> str:
    ds, st = report["dataset"], report["settings"]
    summary, forms = report["summary"], list(report["formulations"])

    def cell(r, k):
        if r.get(k) is None:
            return "—"
        return ("≥ " if r.get(k.replace("_ms", "_at_timeout")) else "") + fmt_ms(r[k])

    lines = [f"**{ds['name']}**: {ds['edges']:,} <{ds['predicate']}> edges; {st['pairs']} random pairs (seed "
             f"{st['seed']}), max length {st['max_length']}, {st['runs']} runs per pair (median), timeout "
             f"{st['timeout_s']:g} s. Latency in ms over the pairs; ratio = the formulation's median / Tern's "
             "(above 1: Tern is faster).", "",
             "| formulation | engine | what | answered | timeouts | failed | median | p90 | p99 | max | ratio |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for f in forms:
        r, info = summary[f], report["formulations"][f]
        ratio = r.get("median_over_tern")
        lines.append(f"| {f} | {LABEL[info['engine']]} | {info['what']} | {r['answered']} | {r['timeouts']} | "
                     f"{r['failed']} | {cell(r, 'median_ms')} | {cell(r, 'p90_ms')} | {cell(r, 'p99_ms')} | "
                     f"{cell(r, 'max_ms')} | {'—' if ratio is None else f'{ratio:,.2f}'} |")
    lines += ["", "Shortest lengths found (pairs): " + ", ".join(f"{k}: {v}" for k, v in report["lengths"].items())
              + ". A timeout counts as the timeout in the percentiles (≥: a lower bound). Load average before / "
              f"after: {report['load_average_before']} / {report['load_average_after']}."]
    tg = report.get("targets")
    if tg:
        yes = lambda b: "yes" if b else "no"
        lines.append(f"Tern against the issue's targets (set for the 10 M-edge graph): median < 10 ms "
                     f"{yes(tg['median_below_10ms'])}, p99 < 200 ms {yes(tg['p99_below_200ms'])}, >= 10x faster than "
                     + (", ".join(f"{f} {yes(ok)}" for f, ok in tg["10x_faster_than"].items()) or "no peer") + ".")
    return "\n".join(lines)


def report_problems(report: dict) -> str:
    """The disagreements, then per formulation its failures and timeouts with the first error."""
    out = []
    d = report["disagreements"]
    if not d:
        out.append("\nEvery formulation that answered a pair agrees with the others on it.")
    else:
        out.append(f"\n## {len(d)} pairs where the formulations disagree")
        for x in d:
            out.append(f"- {x['source']} -> {x['target']}: {'; '.join(x['problems'])}; lengths {x['lengths']}, "
                       f"reachable {x['reachable']}")
    for f in report["formulations"]:
        failed = [r for r in report["records"] if r[f]["error"]]
        if failed:
            timeouts = sum(bool(r[f]["timeout"]) for r in failed)
            error = " ".join(failed[0][f]["error"].split())[:200]
            out.append(f"\n{f}: {len(failed)} pair(s) failed ({timeouts} timeouts), e.g. {failed[0]['source']} -> "
                       f"{failed[0]['target']}: {error}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=("social", "watdiv"), default="social", help="(default: %(default)s)")
    ap.add_argument("--people", type=int, default=social.DEFAULT_PEOPLE,
                    help="size of the generated social graph (default: %(default)s, ~10.1 M edges)")
    ap.add_argument("--watdiv-predicate", choices=("friendOf", "follows"), default="friendOf",
                    help="WatDiv's edges to follow (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=200, help="measured (source, target) pairs (default: %(default)s)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up pairs, run once, unmeasured (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the pairs (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="runs per pair and formulation (default: %(default)s)")
    ap.add_argument("--max-length", type=int, default=8,
                    help="longest path searched, all engines (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=30, help="per query (per loop for the deepening "
                    "formulations), in seconds, all engines (default: %(default)s)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of: tern,oxigraph,virtuoso")
    ap.add_argument("--formulations", default=",".join(DEFAULT_FORMULATIONS),
                    help="comma-separated subset of: " + ",".join(FORMULATIONS) + " (default: %(default)s)")
    ap.add_argument("--tern", type=Path, default=DEFAULT_TERN, help="tern binary (default: %(default)s)")
    ap.add_argument("--tern-commit", help="the commit the tern binary was built from, for the report")
    ap.add_argument("--oxigraph", type=Path, default=DEFAULT_VENV / "bin/oxigraph",
                    help="oxigraph CLI, from setup_peers.sh (default: %(default)s)")
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared/ directory (default: %(default)s)")
    ap.add_argument("--keep-stores", action="store_true",
                    help="use tern's index and Oxigraph's store in --work when they exist instead of building them again")
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA / "paths",
                    help="generated data, indexes, the private Virtuoso, server logs (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="JSON output (default: bench/results/paths-<date>[-<dataset>].json)")
    ap.add_argument("--report", type=Path, metavar="RESULTS", help="do not run: print the tables of a result file")
    args = ap.parse_args()
    if args.report:
        report = json.loads(args.report.read_text())
        print(markdown(report))
        print(report_problems(report))
        return

    engines = {e.strip() for e in args.engines.split(",") if e.strip()}
    if unknown := engines - set(ENGINES):
        ap.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    forms = [f.strip() for f in args.formulations.split(",") if f.strip()]
    if unknown := set(forms) - set(FORMULATIONS):
        ap.error(f"unknown formulation(s): {', '.join(sorted(unknown))}")
    args.formulations = [f for f in FORMULATIONS if f in forms and FORMULATIONS[f][0] in engines]
    if not args.formulations:
        ap.error("no formulation left to run")
    args.engines = [e for e in ENGINES if any(FORMULATIONS[f][0] == e for f in args.formulations)]
    check_programs(ap, args)
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)

    stop_on_sigterm()
    started = datetime.datetime.now()
    if args.dataset == "social":
        args.dataset = social_dataset(args.people)
        args.predicate = social.KNOWS
        args.data_nt = {args.dataset: args.work / f"{args.dataset}.nt"}
        generated = generate_social(args.data_nt[args.dataset], args.people)
    else:
        args.dataset = "watdiv-10"
        args.predicate = WSDBM + args.watdiv_predicate
        args.data_nt = {args.dataset: DEFAULT_DATA / "watdiv-10.nt"}
        generated = None
    nt = args.data_nt[args.dataset]
    prepare(args, args.dataset)  # decompresses WatDiv if needed; builds tern's index and Oxigraph's store
    drawn, counts = pick_pairs(nt, args.predicate, args.pairs + args.warmup, args.seed)
    pairs, warmup = drawn[:args.pairs], drawn[args.pairs:]
    print(f"{args.dataset}: {counts['edges']:,} edges, {counts['sources']:,} sources, {counts['targets']:,} targets; "
          f"{len(pairs)} pairs x {args.runs} runs x {len(args.formulations)} formulations "
          f"({', '.join(args.formulations)})", file=sys.stderr)
    res = run_pairs(args, pairs, warmup)
    disagreements, lengths = cross_check(res["records"], args.formulations)
    summary = summarize(res["records"], args.formulations, args.timeout)
    example = pairs[0]
    report = {
        "benchmark": "paths",
        "started": started.isoformat(timespec="seconds"),
        "machine": machine(),
        "git_commit": git_commit(),
        "tern_commit": args.tern_commit,
        "command": " ".join(sys.argv),
        "dataset": {"name": args.dataset, "file": str(nt), "predicate": args.predicate, **counts,
                    "generated": generated, "virtuoso_graph": graph_of(args.dataset) if "virtuoso" in args.engines
                    else None},
        "settings": {"pairs": len(pairs), "warmup_pairs": len(warmup), "seed": args.seed, "runs": args.runs,
                     "max_length": args.max_length, "timeout_s": args.timeout},
        "client": "http_query_bench.Client: one persistent connection per engine, form POST, SPARQL JSON; "
                  "latency = request sent to answer read and parsed; a deepening loop = the sum of its queries",
        "engines": {
            "tern": {"binary": str(args.tern), "version": tool_version([str(args.tern), "--version"])},
            "oxigraph": {"binary": str(args.oxigraph), "version": tool_version([str(args.oxigraph), "--version"])},
            "virtuoso": {"version": tool_version(["dpkg-query", "-W", "-f=${Version}", "virtuoso-opensource"])},
        },
        "formulations": {f: {"engine": FORMULATIONS[f][0], "kind": FORMULATIONS[f][1], "what": FORMULATIONS[f][2],
                             "example": [FORMULATIONS[f][3](*example, f"<{args.predicate}>", k)
                                         for k in (range(1, 4) if FORMULATIONS[f][1] == "deepen"
                                                   else [args.max_length])]}
                         for f in args.formulations},
        "summary": summary,
        "lengths": lengths,
        "disagreements": disagreements,
        **{k: res[k] for k in ("servers", "elapsed_s", "load_average_before", "load_average_after",
                               "warmup_failures")},
        "records": res["records"],
    }
    report["engines"] = {e: v for e, v in report["engines"].items() if e in args.engines}
    report["targets"] = targets(summary)
    tag = "" if args.dataset == social_dataset(social.DEFAULT_PEOPLE) else f"-{args.dataset}"
    if args.dataset == "watdiv-10" and args.watdiv_predicate != "friendOf":
        tag += f"-{args.watdiv_predicate}"
    out = args.out or BENCH / "results" / f"paths-{started:%Y-%m-%d}{tag}.json"
    publish(report, out, markdown(report), report_problems(report))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted (the servers were stopped)")
