#!/usr/bin/env python3
"""Which run-queue policy should the query scheduler use? A discrete-event
simulation of the fairness workload under several policies, from a
fairness_bench.py results file.

What it models. The closed loop of the fairness benchmark: N clients (50), each
with its slice of queries from the JSON's `workload`; every client has exactly
one query in the server at a time and submits the next one the moment the
previous one returns (zero think time, no network). P identical workers (2,
the run's --workers) serve one run queue, like crates/tern-server/src/
scheduler.rs: a worker pops a task, runs it for one turn, and at the end of the
turn the task either completes or goes back to the queue; an idle worker pops
immediately. A turn lasts min(turn length, remaining service); the turn length
depends on the policy (the quantum, or 4 quanta for an aged task in MLFQ,
infinite for FCFS). Every turn of a task after its first also costs the worker
a constant switch overhead (--overhead-ms, default 0.1 ms: suspending and
resuming), which is not counted as service received. Event-driven and exact for
this model: there is no time step.

Service times are those of fairness_bound.py (imported, not re-derived): the
median of each query's times measured alone, light queries never measured
alone get the mean of those that were. So the limits are those of that
reconstruction plus:
  - service times are measured alone: no slowdown from two queries sharing the
    caches, memory bandwidth and the 2 cores with the client and the server's
    I/O threads; no cache warming either (a resumed query is as fast as before);
  - the switch overhead is a constant per resume, whatever the query's working
    set (in the server a long query's first rows after a resume are slower);
  - a turn ends exactly at its deadline (the server checks between rows, so a
    turn can overrun);
  - no admission limit, no paging/blocking on clients, no HTTP or parse time;
  - MLFQ's pick counter only counts pops that find a task (the server's
    workers also count pops of an empty queue; only matters at the very end,
    when fewer tasks than workers are left).

Policies (see POLICIES below): FCFS; plain round robin; the server's current
MLFQ (fresh = fewer than 2 turns, one quantum per turn; aged = 4 quanta per
turn, every 3rd pick while fresh tasks wait); least attained service per query
and per client; MLFQ with strict priority for fresh tasks; MLFQ where an aged
task gets the next turn once the oldest aged task has waited longer than W.

Also, group (g): MLFQ with strict priority for fresh tasks whose
aged tasks are served oldest-submitted first (first come first served among
the long queries, still preempted at every turn end), and the server's MLFQ
with aged turns of one quantum.

Reported per policy: average and max client completion time (the benchmark's
metric), the light queries' time from submission to their first turn (mean and
99th percentile) and their mean response time, the heavy queries' mean and max
response time, the longest time any suspended query waited for its next turn
(a starvation indicator), the number of suspensions, and measured FCFS
average / policy average.

Caveat on light latency: in this closed loop a new query arrives only when
another one ends, which frees a worker, so a light query rarely finds both
workers busy with long turns. In an open system (queries arriving at any
time) a light query can wait up to a whole turn of each busy worker: up to
4 quanta in MLFQ, a whole heavy query (~2 s) if aged tasks run to the end.

Usage:
    python3 bench/scheduler_sim.py [RESULTS.json] [--overhead-ms 0.1] [--sanity]

Stdlib only; reads the JSON, runs nothing.
"""
import argparse
import heapq
import json
import math
import statistics
import sys
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fairness_bound as fb  # noqa: E402  (service times, reference schedules)

FRESH_TURNS = 2  # scheduler.rs: turns a task gets ahead of the older ones
AGED_EVERY = 3  # scheduler.rs: one pick in this many goes to an aged task
AGED_QUANTA = 4  # scheduler.rs: quanta in a turn of an aged task


# ---------------------------------------------------------------- tasks

class Task:
    """One query in the server."""
    __slots__ = ("client", "remaining", "light", "submitted", "first_start",
                 "enqueued", "turns", "attained", "client_attained", "seq")

    def __init__(self, client, service, light, now):
        self.client = client
        self.remaining = service
        self.light = light
        self.submitted = now
        self.first_start = None
        self.enqueued = now  # when it last entered the run queue
        self.turns = 0  # turns it has had
        self.attained = 0.0  # service received so far
        self.client_attained = 0.0  # its client's service so far (all its queries), at push
        self.seq = 0  # push order, for FIFO ties


# ---------------------------------------------------------------- policies
# A policy is a run queue: push(task, now), pop(now) -> task, turn(task) ->
# seconds the task may run now, len().

class Fifo:
    """One FIFO list; every turn one quantum (infinite: FCFS)."""

    def __init__(self, quantum):
        self.q, self.items = quantum, deque()

    def push(self, task, now):
        self.items.append(task)

    def pop(self, now):
        return self.items.popleft()

    def turn(self, task):
        return self.q

    def __len__(self):
        return len(self.items)


def service_level(attained, aged_turn):
    """scheduler.rs's service level: 0 below one aged turn, then 1 + log2."""
    if attained < aged_turn:
        return 0
    return 1 + int(math.log2(attained / aged_turn))


class Mlfq:
    """Two lists, fresh (< FRESH_TURNS turns, FIFO) and aged. When an aged task
    gets a turn while fresh ones wait: mode "every" (scheduler.rs): every
    AGED_EVERY-th pick; "strict": never; "wait": when the front aged task has
    waited longer than `wait` seconds. Aged turns last aged_quanta quanta
    (math.inf: to the end). aged_order "rr" (scheduler.rs): a suspended aged
    task goes to the back; "oldest": the aged task submitted first goes first
    (round robin among the fresh, first come first served among the aged,
    still preempted at the end of each turn); "levels" (scheduler.rs now): by
    the level of service the task attained (0 below one aged turn, then one
    level per doubling), oldest first within a level: a query that turned out
    a little longer than a quantum no longer waits behind every long one."""

    def __init__(self, quantum, aged_quanta=AGED_QUANTA, mode="every", wait=None, aged_order="rr"):
        assert not (mode == "wait" and aged_order != "rr")
        self.q, self.aged_quanta, self.mode, self.wait = quantum, aged_quanta, mode, wait
        self.oldest = aged_order in ("oldest", "levels")
        self.levels = aged_order == "levels"
        self.fresh, self.picks, self.credit = deque(), 0, 0.0
        self.aged = [] if self.oldest else deque()

    def push(self, task, now):
        if task.turns < FRESH_TURNS:
            self.fresh.append(task)
        elif self.oldest:
            level = service_level(task.attained, self.q * self.aged_quanta) if self.levels else 0
            heapq.heappush(self.aged, (level, task.submitted, task.seq, task))
        else:
            self.aged.append(task)

    def _pop_aged(self):
        return heapq.heappop(self.aged)[-1] if self.oldest else self.aged.popleft()

    def pop(self, now):
        self.picks += 1
        if self.aged:
            if not self.fresh:
                return self._pop_aged()
            if self.mode == "every" and self.picks % AGED_EVERY == 0:
                return self._pop_aged()
            if self.mode == "credit" and self.credit >= self.q * self.aged_quanta:
                return self._pop_aged()
            if self.mode == "wait" and now - self.aged[0].enqueued > self.wait:
                return self._pop_aged()
        return self.fresh.popleft()

    def turn(self, task):
        return self.q if task.turns < FRESH_TURNS else self.q * self.aged_quanta

    def account(self, was_fresh, run):
        """Mode "credit" (scheduler.rs's RunQueue::account): a fresh turn
        while aged tasks wait owes them a third of its length (capped at two
        aged turns), an aged turn is paid from that."""
        if not self.aged:
            self.credit = 0.0
        elif was_fresh:
            self.credit = min(self.credit + run / AGED_EVERY, 2 * self.q * self.aged_quanta)
        else:
            self.credit = max(0.0, self.credit - run)

    def __len__(self):
        return len(self.fresh) + len(self.aged)


class Las:
    """Least attained service: the waiting task that has received the least
    service (per="query"), or whose client has received the least over all
    its queries (per="client"), goes first; ties FIFO. One quantum per turn.
    The key cannot change while a task waits (only running changes it, and a
    client has one task at a time), so a heap keyed at push time is exact."""

    def __init__(self, quantum, per="query"):
        self.q, self.per, self.heap = quantum, per, []

    def push(self, task, now):
        key = task.attained if self.per == "query" else task.client_attained
        heapq.heappush(self.heap, (key, task.seq, task))

    def pop(self, now):
        return heapq.heappop(self.heap)[2]

    def turn(self, task):
        return self.q

    def __len__(self):
        return len(self.heap)


MS = 1e-3
POLICIES = [  # (group, label, factory)
    ("a", "FCFS (quantum infinite)", lambda: Fifo(math.inf)),
    *[("b", f"RR, q {q} ms", lambda q=q: Fifo(q * MS)) for q in (5, 10, 20, 50, 100)],
    *[("c", f"MLFQ current (fresh 1q, aged 4q every 3rd pick), q {q} ms", lambda q=q: Mlfq(q * MS))
      for q in (50, 10, 20)],
    *[("d", f"LAS per query, q {q} ms", lambda q=q: Las(q * MS, "query")) for q in (10, 50)],
    *[("e", f"LAS per client, q {q} ms", lambda q=q: Las(q * MS, "client")) for q in (10, 50)],
    *[("f", f"MLFQ strict (aged only if no fresh), aged {k}q, q {q} ms",
       lambda q=q, k=k: Mlfq(q * MS, k, "strict")) for q in (50, 10) for k in (1, 4)],
    *[("f", f"MLFQ aged after wait {w:g} s, aged 4q, q {q} ms",
       lambda q=q, w=w: Mlfq(q * MS, AGED_QUANTA, "wait", w)) for q in (50, 10) for w in (0.5, 2.0)],
    # (g): the aged (long) queries first come first served
    # instead of round robin, the fresh ones still strictly first.
    *[("g", f"MLFQ strict, aged oldest first, aged {k}q, q {q} ms",
       lambda q=q, k=k: Mlfq(q * MS, k, "strict", aged_order="oldest")) for q in (10, 50) for k in (1, 4)],
    ("g", "MLFQ strict, aged oldest first and to the end (not preempted), q 10 ms",
     lambda: Mlfq(10 * MS, math.inf, "strict", aged_order="oldest")),
    ("g", "MLFQ current but aged turn 1q (every 3rd pick, RR), q 10 ms", lambda: Mlfq(10 * MS, 1)),
    # (h): the server's policy before and after ranking aged tasks by the
    # service they attained.
    *[("h", f"MLFQ aged owed 1/3 of fresh time, aged oldest first, 4q, q {q} ms",
       lambda q=q: Mlfq(q * MS, AGED_QUANTA, "credit", aged_order="oldest")) for q in (5, 20)],
    *[("h", f"MLFQ aged owed 1/3 of fresh time, aged by service level then oldest, 4q, q {q} ms",
       lambda q=q: Mlfq(q * MS, AGED_QUANTA, "credit", aged_order="levels")) for q in (5, 20)],
]


# ---------------------------------------------------------------- simulation

def simulate(slices, light, p, policy, overhead):
    """Runs the closed loop to its end; returns the metrics.
    slices[c] = client c's service times in order; light[c][i] = whether
    its i-th query is light."""
    n = len(slices)
    pos = [0] * n
    done = [0.0] * n
    client_cpu = [0.0] * n
    first_light, resp_light, resp_heavy = [], [], []
    stats = {"suspensions": 0, "max_wait": 0.0, "seq": 0}
    running = []  # heap of (turn end, client, task, service run in the turn)
    idle = p

    def enqueue(task, now):
        task.enqueued = now
        task.client_attained = client_cpu[task.client]
        stats["seq"] += 1
        task.seq = stats["seq"]
        policy.push(task, now)

    def submit(c, now):
        enqueue(Task(c, slices[c][pos[c]], light[c][pos[c]], now), now)

    def dispatch(now):
        nonlocal idle
        while idle and len(policy):
            task = policy.pop(now)
            cost = 0.0
            if task.first_start is None:
                task.first_start = now
                if task.light:
                    first_light.append(now - task.submitted)
            else:  # resumed after a suspension
                stats["max_wait"] = max(stats["max_wait"], now - task.enqueued)
                cost = overhead
            run = min(policy.turn(task), task.remaining)
            # (end, client) orders the heap totally: one task per client.
            heapq.heappush(running, (now + cost + run, task.client, task, run))
            idle -= 1

    for c in range(n):
        if slices[c]:
            submit(c, 0.0)
    dispatch(0.0)
    while running:
        t, c, task, run = heapq.heappop(running)
        idle += 1
        if hasattr(policy, "account"):
            policy.account(task.turns < FRESH_TURNS, run)
        task.turns += 1
        task.attained += run
        client_cpu[c] += run
        if run >= task.remaining:  # run == remaining exactly: it ends
            (resp_light if task.light else resp_heavy).append(t - task.submitted)
            pos[c] += 1
            if pos[c] == len(slices[c]):
                done[c] = t
            else:
                submit(c, t)  # closed loop: the next query at once
        else:
            task.remaining -= run
            stats["suspensions"] += 1
            enqueue(task, t)
        dispatch(t)
    first_light.sort()
    return {
        "avg": statistics.fmean(done), "max": max(done),
        "first_mean": statistics.fmean(first_light),
        "first_p99": first_light[min(len(first_light) - 1, int(0.99 * len(first_light)))],
        "light_resp": statistics.fmean(resp_light),
        "heavy_resp": statistics.fmean(resp_heavy), "heavy_max": max(resp_heavy),
        "max_wait": stats["max_wait"], "suspensions": stats["suspensions"],
    }


# ---------------------------------------------------------------- output

def load(path, engine, clients):
    """The workload and service times exactly as fairness_bound.py builds them."""
    doc = json.loads(path.read_text())
    workload = doc["workload"][:clients]
    est, notes = fb.service_times(doc, engine, {q for s in workload for q in s})
    slices = [[est[q] for q in s] for s in workload]
    light = [[not q.startswith("heavy:") for q in s] for s in workload]
    return doc, slices, light, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, nargs="?", default=fb.DEFAULT)
    ap.add_argument("--engine", default="tern-fcfs", help="the measured run to compare with")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--workers", type=int, help="P (default: the run's --workers)")
    ap.add_argument("--overhead-ms", type=float, default=0.1, help="cost of each resume (default 0.1)")
    ap.add_argument("--sanity", action="store_true",
                    help="also RR with small quanta and no overhead (should approach ideal RR)")
    args = ap.parse_args()

    doc, slices, light, notes = load(args.results, args.engine, args.clients)
    p = args.workers or int(doc.get("args", {}).get("workers", 2))
    measured = {}
    for r in doc["runs"]:
        if r["clients"] == args.clients:
            measured.setdefault(r["engine"], []).append(statistics.fmean(r["completion_s"]))
    if args.engine not in measured:
        sys.exit(f"{args.results}: no {args.engine} run with {args.clients} clients")
    base = statistics.fmean(measured[args.engine])
    ref = fb.figures(slices, p)
    overhead = args.overhead_ms * MS

    print(f"results: {args.results} (commit {str(doc.get('commit'))[:7]}); {args.clients} clients x "
          f"{len(slices[0])} queries, P = {p}, switch overhead {args.overhead_ms:g} ms per resume")
    for line in notes:
        print(f"  {line}")
    print()
    print(f"| policy | avg completion (s) | max completion (s) | light: to first turn, mean (ms) | "
          f"light: to first turn, p99 (ms) | light: response, mean (ms) | heavy: response, mean / max (s) | "
          f"longest wait of a suspended query (s) | suspensions | measured {args.engine} ({base:.2f} s) / this |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for e, xs in measured.items():
        m = statistics.fmean(xs)
        print(f"| measured {e} | {m:.2f} | | | | | | | | {base / m:.2f} |")
    for key, label in (("fcfs_model", "fairness_bound FCFS model"),
                       ("rr", "fairness_bound ideal RR (quantum -> 0, no overhead)"),
                       ("srpt", "fairness_bound SRPT over clients (knows sizes)"),
                       ("bound", "fairness_bound lower bound")):
        print(f"| {label} | {ref[key]:.2f} | | | | | | | | {base / ref[key]:.2f} |")
    runs = [(g, lbl, f, overhead) for g, lbl, f in POLICIES]
    if args.sanity:
        runs += [("s", f"sanity: RR, q {q:g} ms, no overhead", lambda q=q: Fifo(q * MS), 0.0)
                 for q in (5, 1)]
    for group, label, factory, ov in runs:
        m = simulate(slices, light, p, factory(), ov)
        print(f"| ({group}) {label} | {m['avg']:.2f} | {m['max']:.2f} | {m['first_mean'] / MS:.1f} | "
              f"{m['first_p99'] / MS:.1f} | {m['light_resp'] / MS:.1f} | "
              f"{m['heavy_resp']:.1f} / {m['heavy_max']:.1f} | {m['max_wait']:.2f} | "
              f"{m['suspensions']} | {base / m['avg']:.2f} |")


if __name__ == "__main__":
    main()
