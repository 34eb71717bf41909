#!/usr/bin/env python3
"""What any scheduler could gain on the fairness workload: a lower bound on the
average workload completion time, computed from a fairness_bench.py results file.

Question: the fairness target is "at 50 clients, average workload completion
time with preemption >= 5x better than FCFS". Is that possible at all on this
workload with P = 2 workers (and 2 cores)? This script answers it without
running anything, from the JSON that fairness_bench.py wrote.

1. Work per client. The JSON records each client's slice (`workload`, the same
   for every engine and client count). Each query gets a service time: the
   median of its times measured with nothing else running (the 1-client runs
   of the same engine family, and for tern the paged overhead sample, which
   fetches the five heavy queries and 20 light ones alone). Light queries that
   were never measured alone get the mean of the light queries that were; a
   heavy query never measured alone gets its median at the lowest load in the
   file (which includes queueing, so it is labelled). W_i = the sum over client
   i's slice. The output says which estimate each part came from.

2. Lower bound. Model: P identical workers; a client's queries run one after
   another (a client never uses two workers at once); a query may be cut into
   any number of pieces (quantum -> 0) and moved between workers; overheads,
   network and client time are free; the scheduler knows every W_i. Sort the
   W_i ascending: W_(1) <= ... <= W_(n). Let C_k be the time at which the k-th
   client finishes (in any schedule). Then

       C_k >= max(W_(k), (W_(1) + ... + W_(k)) / P)

   because (a) the k clients finished by C_k have had all their work done, at
   least the k smallest workloads' worth, on P workers, which takes at least
   that sum / P; and (b) those k clients include one whose workload is at least
   W_(k) (k different clients cannot all be among the k-1 smallest), and its
   queries ran one after another, so C_k >= W_(k). The average of these bounds
   over k is a lower bound on the average completion time of every scheduler,
   preemptive or not, work-conserving or not.

3. Reference points, in the same model and with the same service times:
   - SRPT: preemptive shortest-remaining-workload-first over clients, quantum
     -> 0. All clients start at 0, so this is shortest-workload-first list
     scheduling, which is optimal for the average completion time on identical
     workers, with or without preemption (Conway, Maxwell and Miller; McNaughton
     1959). It needs to know every W_i in advance, which a server does not.
   - ideal round robin: every client with work left gets an equal share of the
     P workers (at most one worker each), quantum -> 0: what time slicing
     without knowledge of the sizes tends to.
   - FCFS model: the closed loop of the benchmark (each client sends its next
     query when the previous one ends; one FIFO queue; P workers; each query
     runs to its end). Against the measured FCFS average, it checks the service
     times. Total work / P is the FCFS rule of thumb: with every client always
     queued, each one advances one query per round, and a round costs the
     round's work / P, so all clients finish near total work / P.
   The printed speedups are the measured average of the chosen run (e.g.
   tern-fcfs at 50 clients) divided by each of these. measured / lower bound is
   the most any scheduler could gain over that run here, even ignoring that
   service times under load are longer than alone (which only lowers it).

4. Hypothetical workloads (clearly not measured): the same kind of queries
   and service times, but with the heavy queries placed differently: the
   benchmark's own random placement at other heavy shares (regenerated exactly
   as fairness_bench.build_workload places them), and the 79 heavy queries of
   the run packed into a few clients. Only model figures (FCFS model, SRPT,
   bound) exist for these.

Usage:
    python3 bench/fairness_bound.py [RESULTS.json] [--engine tern-fcfs] [--clients 50]

Stdlib only; reads the JSON, runs nothing.
"""
import argparse
import json
import random
import statistics
import sys
from collections import deque
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "results/fairness-2026-11-22-70e19df-50clients.json"


def family(engine: str) -> str:
    """tern-rr, tern-fcfs and tern-paged are the same engine and build in one file."""
    return "virtuoso" if engine == "virtuoso" else "tern"


# ---------------------------------------------------------------- service times

def alone_times(doc: dict, fam: str) -> tuple[dict, list[str]]:
    """query id -> times (s) measured with nothing else running, and where they came from."""
    out, sources = {}, []
    for run in doc["runs"]:
        if run["clients"] == 1 and family(run["engine"]) == fam:
            sources.append(f"{run['engine']} 1-client run")
            for r in run["records"]:
                if r["error"] is None:
                    out.setdefault(r["id"], []).append(r["total_s"])
    if fam == "tern" and doc.get("overhead_records"):
        sources.append("paged overhead sample (one query at a time, quantum "
                       f"{doc.get('args', {}).get('quantum', '?')})")
        for r in doc["overhead_records"]:
            if r["kind"] in ("heavy", "light") and r["error"] is None:
                out.setdefault(r["id"], []).append(r["total_s"])
    return out, sources


def service_times(doc: dict, engine: str, ids: set) -> tuple[dict, list[str]]:
    """query id -> estimated service time (s), and lines that say how."""
    alone, sources = alone_times(doc, family(engine))
    est, notes = {}, []
    for qid in ids:
        if qid in alone:
            est[qid] = statistics.median(alone[qid])
    heavy = sorted(i for i in ids if i.startswith("heavy:"))
    light = sorted(i for i in ids if not i.startswith("heavy:"))
    h_alone = [i for i in heavy if i in est]
    l_alone = [i for i in light if i in est]
    notes.append(f"measured alone: {', '.join(sources) or 'nothing'}")
    notes.append(f"heavy: {len(h_alone)} of {len(heavy)} heavy queries measured alone "
                 f"({', '.join(f'{i[6:]} {est[i]:.2f} s' for i in h_alone)})")
    by_load = sorted((r for r in doc["runs"] if r["engine"] == engine), key=lambda r: r["clients"])
    lowest = by_load[0]
    for qid in heavy:
        if qid not in est:
            for run in by_load:  # the lowest load at which this query ran
                xs = [r["total_s"] for r in run["records"] if r["id"] == qid and r["error"] is None]
                if xs:
                    est[qid] = statistics.median(xs)
                    notes.append(f"  {qid}: not measured alone; median of {len(xs)} at {run['clients']} "
                                 f"clients ({est[qid]:.2f} s, includes queueing)")
                    break
            else:
                sys.exit(f"{qid}: no time for it in any {engine} run")
    if l_alone:
        fill = statistics.fmean(est[i] for i in l_alone)
        how = (f"mean of the {len(l_alone)} measured alone ({fill * 1000:.1f} ms; "
               f"median {statistics.median(est[i] for i in l_alone) * 1000:.1f} ms)")
    else:
        xs = [r["total_s"] for r in lowest["records"] if r["kind"] == "light" and r["error"] is None]
        fill = statistics.median(xs)
        how = f"median of light queries at {lowest['clients']} clients ({fill * 1000:.1f} ms, includes queueing)"
    notes.append(f"light: {len(l_alone)} of {len(light)} light queries measured alone; the others: {how}")
    for qid in light:
        est.setdefault(qid, fill)
    est["light:fill"] = fill
    return est, notes


# ---------------------------------------------------------------- schedules

def lower_bound(work: list[float], p: int) -> list[float]:
    """Per rank k: max(W_(k), (W_(1)+...+W_(k)) / P)."""
    out, prefix = [], 0.0
    for w in sorted(work):
        prefix += w
        out.append(max(w, prefix / p))
    return out


def share_schedule(work: list[float], p: int, pick) -> list[float]:
    """Completion times when, at every moment, pick(remaining) names the
    clients that run and at what rate (each at most 1: one worker per client)."""
    rem = {c: w for c, w in enumerate(work)}
    done, t = [0.0] * len(work), 0.0
    for c in [c for c, w in rem.items() if w <= 0]:
        del rem[c]
    while rem:
        rates = pick(rem, p)
        dt = min(rem[c] / r for c, r in rates.items())
        t += dt
        for c, r in rates.items():
            rem[c] -= r * dt
            if rem[c] <= 1e-12:
                done[c] = t
                del rem[c]
    return done


def srpt(rem: dict, p: int) -> dict:
    """The P clients with the least work left run, one worker each."""
    return {c: 1.0 for c in sorted(rem, key=lambda c: (rem[c], c))[:p]}


def round_robin(rem: dict, p: int) -> dict:
    """Every client with work left gets an equal share (at most one worker)."""
    r = min(1.0, p / len(rem))
    return {c: r for c in rem}


def fcfs_closed_loop(slices: list[list[float]], p: int) -> list[float]:
    """Closed loop, one FIFO queue, P workers, each query to its end."""
    queue = deque(range(len(slices)))
    pos, done = [0] * len(slices), [0.0] * len(slices)
    running, t = [], 0.0  # (end time, client)
    while queue or running:
        while queue and len(running) < p:
            c = queue.popleft()
            running.append((t + slices[c][pos[c]], c))
        running.sort()
        t, c = running.pop(0)
        pos[c] += 1
        if pos[c] == len(slices[c]):
            done[c] = t
        else:
            queue.append(c)
    return done


def figures(slices: list[list[float]], p: int) -> dict:
    work = [sum(s) for s in slices]
    mean = statistics.fmean
    return {"total": sum(work), "total_over_p": sum(work) / p,
            "bound": mean(lower_bound(work, p)),
            "srpt": mean(share_schedule(work, p, srpt)),
            "rr": mean(share_schedule(work, p, round_robin)),
            "fcfs_model": mean(fcfs_closed_loop(slices, p)),
            "work_min": min(work), "work_median": statistics.median(work), "work_max": max(work)}


# ---------------------------------------------------------------- hypothetical placements

def heavy_placement(seed: int, clients: int, per_client: int, share: float, names: list[str]) -> list[list[str]]:
    """Per client, per position: the heavy query id or "light", exactly as
    fairness_bench.build_workload decides (the light queries' ids need the
    stress file, their service time does not)."""
    pick, heavy_count, out = random.Random(seed + 1), 0, []
    for _ in range(clients):
        row = []
        for _ in range(per_client):
            if pick.random() < share:
                row.append(f"heavy:{names[heavy_count % len(names)]}")
                heavy_count += 1
            else:
                row.append("light")
        out.append(row)
    return out


def packed(heavy_ids: list[str], clients: int, per_client: int, into: int) -> list[list[str]]:
    """The given heavy queries spread round-robin over the first `into`
    clients (each at most per_client queries); everything else light."""
    rows = [["light"] * per_client for _ in range(clients)]
    fill = [0] * into
    for i, qid in enumerate(heavy_ids):
        c = i % into
        assert fill[c] < per_client, "too many heavy queries for so few clients"
        rows[c][fill[c]] = qid
        fill[c] += 1
    return rows


# ---------------------------------------------------------------- output

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, nargs="?", default=DEFAULT)
    ap.add_argument("--engine", default="tern-fcfs", help="the run to compare with (default tern-fcfs)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--workers", type=int, help="P (default: the run's --workers)")
    ap.add_argument("--no-hypothetical", action="store_true")
    args = ap.parse_args()

    doc = json.loads(args.results.read_text())
    runs = [r for r in doc["runs"] if r["engine"] == args.engine and r["clients"] == args.clients]
    if not runs:
        sys.exit(f"{args.results}: no {args.engine} run with {args.clients} clients")
    p = args.workers or int(doc.get("args", {}).get("workers", 2))
    n = args.clients
    workload = doc["workload"][:n]
    ids = {q for s in workload for q in s}
    est, notes = service_times(doc, args.engine, ids)
    slices = [[est[q] for q in s] for s in workload]
    f = figures(slices, p)
    measured = statistics.fmean(statistics.fmean(r["completion_s"]) for r in runs)
    wall = statistics.fmean(r["wall_s"] for r in runs)
    heavy_n = sum(q.startswith("heavy:") for s in workload for q in s)
    heavy_work = sum(est[q] for s in workload for q in s if q.startswith("heavy:"))
    per_client_heavy = sorted(sum(q.startswith("heavy:") for q in s) for s in workload)

    print(f"results: {args.results} (commit {str(doc.get('commit'))[:7]})")
    print(f"run: {args.engine}, {n} clients x {len(workload[0])} queries, P = {p} workers, "
          f"{len(runs)} repetition(s)")
    if family(args.engine) == "virtuoso":
        print("note: Virtuoso runs one thread per client; P is then the 2 cores, and its alone "
              "times cover one client's slice only: rough figures")
    print("service-time estimate:")
    for line in notes:
        print(f"  {line}")
    print(f"work: total {f['total']:.1f} s, of which heavy {heavy_work:.1f} s ({heavy_n} heavy queries, "
          f"{100 * heavy_work / f['total']:.0f}% of the work); per client min {f['work_min']:.2f} s, "
          f"median {f['work_median']:.2f} s, max {f['work_max']:.2f} s")
    print("heavy queries per client: " + ", ".join(
        f"{k}: {per_client_heavy.count(k)} clients" for k in sorted(set(per_client_heavy))))
    print(f"measured: wall {wall:.1f} s, so the run's work in place was at most P x wall = {p * wall:.1f} s")
    print()
    others = {}
    for r in doc["runs"]:
        if r["clients"] == n and r["engine"] != args.engine:
            others.setdefault(r["engine"], []).append(statistics.fmean(r["completion_s"]))
    print(f"| average completion at {n} clients | s | measured {args.engine} / this |")
    print("|---|---:|---:|")
    print(f"| measured {args.engine} | {measured:.2f} | 1.00 |")
    for e, xs in others.items():
        m = statistics.fmean(xs)
        print(f"| measured {e} | {m:.2f} | {measured / m:.2f} |")
    print(f"| FCFS model (closed loop, service times above) | {f['fcfs_model']:.2f} | {measured / f['fcfs_model']:.2f} |")
    print(f"| total work / P | {f['total_over_p']:.2f} | {measured / f['total_over_p']:.2f} |")
    print(f"| ideal round robin between clients (quantum -> 0) | {f['rr']:.2f} | {measured / f['rr']:.2f} |")
    print(f"| SRPT over clients (knows every W_i; optimal in this model) | {f['srpt']:.2f} | {measured / f['srpt']:.2f} |")
    print(f"| lower bound, any scheduler | {f['bound']:.2f} | **{measured / f['bound']:.2f}** |")
    print()
    print(f"max possible speedup over measured {args.engine}: {measured / f['bound']:.2f}x "
          f"(bound), {measured / f['srpt']:.2f}x (SRPT); over the FCFS model: "
          f"{f['fcfs_model'] / f['bound']:.2f}x (bound), {f['fcfs_model'] / f['srpt']:.2f}x (SRPT)")

    need = measured / (5 * f["bound"])
    print(f"for 5x to be possible, every service time would have to be x{need:.2f} of the estimate; "
          f"the FCFS model would then give {need * f['fcfs_model']:.1f} s against the {measured:.1f} s measured")
    # Sensitivity: service times under load are longer than alone.
    scale = p * wall / f["total"]
    g = figures([[x * scale for x in s] for s in slices], p)
    print(f"sensitivity, every service time x{scale:.2f} (so that total work = P x wall): "
          f"bound {g['bound']:.2f} s, SRPT {g['srpt']:.2f} s -> measured / bound {measured / g['bound']:.2f}x")
    light20 = [[0.020 if not q.startswith("heavy:") else est[q] for q in s] for s in workload]
    g = figures(light20, p)
    print(f"sensitivity, every light query 20 ms: total {g['total']:.1f} s, FCFS model {g['fcfs_model']:.2f} s, "
          f"bound {g['bound']:.2f} s, SRPT {g['srpt']:.2f} s -> measured / bound {measured / g['bound']:.2f}x")

    if args.no_hypothetical:
        return
    print()
    print("HYPOTHETICAL (not measured; same service times, heavy queries placed differently;")
    print("model figures only, gain = FCFS model / SRPT and FCFS model / bound):")
    print()
    print("| placement | heavy queries | clients with a heavy one | total work (s) | FCFS model (s) | SRPT (s) | bound (s) | FCFS model / SRPT | FCFS model / bound |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    heavy_names = sorted(doc.get("heavy_queries") or {q[6:] for q in ids if q.startswith("heavy:")})
    fill = est["light:fill"]
    seed = int(doc.get("args", {}).get("seed", 2026))
    per = len(workload[0])
    share0 = float(doc.get("args", {}).get("heavy_share", 0.04))

    def heavy_time(q):
        return est.get(q, statistics.fmean(est[h] for h in ids if h.startswith("heavy:")))

    def row(label, placement):
        sl = [[fill if q == "light" else heavy_time(q) for q in s] for s in placement]
        h = sum(q != "light" for s in placement for q in s)
        hc = sum(any(q != "light" for q in s) for s in placement)
        g = figures(sl, p)
        print(f"| {label} | {h} | {hc} | {g['total']:.1f} | {g['fcfs_model']:.2f} | {g['srpt']:.2f} | "
              f"{g['bound']:.2f} | {g['fcfs_model'] / g['srpt']:.1f}x | {g['fcfs_model'] / g['bound']:.1f}x |")

    actual = [["light" if not q.startswith("heavy:") else q for q in s] for s in workload]
    regen = heavy_placement(seed, n, per, share0, heavy_names)
    if regen != actual:
        print("(note: regenerated placement differs from the JSON's workload)")
    row(f"as run: random, share {share0:g} (all light queries {fill * 1000:.1f} ms)", actual)
    for share in (0.005, 0.01, 0.02, 0.08):
        row(f"random, share {share:g}", heavy_placement(seed, n, per, share, heavy_names))
    heavy_ids = [q for s in workload for q in s if q.startswith("heavy:")]
    for into in (2, 5, 10, 20):
        if len(heavy_ids) <= into * per:
            row(f"the {len(heavy_ids)} heavy packed into {into} clients", packed(heavy_ids, n, per, into))


if __name__ == "__main__":
    main()
