#!/usr/bin/env python3
"""A seeded generator of a directed social graph (`knows` edges) as N-Triples, for
the shortest-path benchmark (bench/path_bench.py).

    python3 bench/social.py OUT.nt [--people N] [--seed S]
    from social import generate; stats = generate(path, people, seed)

The same (people, seed) always gives the same file. It is written as it is
generated, person by person (through OUT.tmp, renamed at the end): memory does not
grow with the graph.

Shape (the default 1,000,000 people, seed 1: 10,144,774 edges, 1.2 GB; 20,000
people: 206,052 edges):
- people are soc:person/N, split into communities of COMMUNITY (1,000)
  consecutive numbers (the last one takes the remainder);
- each person's out-degree is 1 + floor(X), X log-normal (sigma 1), so the mean
  is ~MEAN_DEGREE (10.1) and the tail is long (median 6, 1% above ~60);
- LONG_RANGE (20%) of the edges go outside the community: a HUB_SHARE (30%) of
  them to one of the global hubs (one person in HUB_EVERY = 10,000, at least
  10), the others to anyone, uniformly. The hubs have thousands of followers
  (~6,000 at the default size), and know HUB_DEGREE (300) people themselves,
  half of them in other communities;
- the other edges stay in the community, the target drawn with a popularity
  skew (the community's first members are the best known: member index
  floor(size * U^1.5), U uniform);
- no self-loops and no duplicate edges (a person's targets are distinct).
Communities keep most edges local and the long-range edges and hubs make the graph
a small world. Shortest distances of random (source, target) pairs, forward along
knows (a bidirectional BFS over samples of the generated files): 1 M people:
5-8 hops, median 6 (40 pairs: 13 at 5, 18 at 6, 8 at 7, 1 at 8); 100 K: median 5
(2-7); 20 K: median 4 (2-7). Nearly everyone is reachable from everyone (every
person knows someone; 0.04% are known by nobody).

Vocabulary: soc: = http://tern.bench/social/; the only predicate is soc:knows.
Standard library only.
"""
import argparse
import math
import os
import random
import sys
import time
from pathlib import Path

SOC = "http://tern.bench/social/"
KNOWS = f"{SOC}knows"
PERSON = f"{SOC}person/"
COMMUNITY = 1_000
MEAN_DEGREE = 10.1
SIGMA = 1.0
MAX_DEGREE = 900  # below a community's size, so that a person's local targets can always be distinct
LONG_RANGE = 0.20
HUB_SHARE = 0.30
HUB_EVERY = 10_000
HUB_DEGREE = 300
HUB_LONG_RANGE = 0.5
SKEW = 1.5  # local targets: member floor(size * U^SKEW) of the community
DEFAULT_PEOPLE = 1_000_000


def person(i: int) -> str:
    return f"<{PERSON}{i}>"


def hubs(people: int) -> list[int]:
    """The global hubs: spread evenly over the people (so over the communities)."""
    n = min(people, max(10, people // HUB_EVERY))
    return [k * people // n for k in range(n)]


def generate(path, people: int = DEFAULT_PEOPLE, seed: int = 1) -> dict:
    """Writes the graph to `path` (through path.tmp); returns its counts."""
    if people < 2:
        raise ValueError("at least 2 people")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    rng = random.Random(seed)
    uniform, lognormal, randrange = rng.random, rng.lognormvariate, rng.randrange
    # E[1 + floor(X)] ~ E[X] + 1/2 for a spread-out X.
    mu = math.log(MEAN_DEGREE - 0.5) - SIGMA * SIGMA / 2
    hub = hubs(people)
    is_hub = set(hub)
    communities = max(1, people // COMMUNITY)
    knows = f" <{KNOWS}> "
    edges = long_range = to_hubs = max_degree = 0
    t = time.perf_counter()
    with open(partial, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        for i in range(people):
            c = min(i // COMMUNITY, communities - 1)
            lo = c * COMMUNITY
            size = people - lo if c == communities - 1 else COMMUNITY
            degree = 1 + int(lognormal(mu, SIGMA))
            reach = LONG_RANGE
            if i in is_hub:
                degree, reach = max(degree, HUB_DEGREE), HUB_LONG_RANGE
            degree = min(degree, MAX_DEGREE, people - 1)
            targets = set()
            tries = 0
            while len(targets) < degree and tries < 20 * degree:
                tries += 1
                if uniform() < reach:
                    j = hub[randrange(len(hub))] if uniform() < HUB_SHARE else randrange(people)
                else:
                    j = lo + int(size * uniform() ** SKEW)
                if j != i:
                    targets.add(j)
            subject = person(i) + knows
            out.write("".join(f"{subject}{person(j)} .\n" for j in sorted(targets)))
            edges += len(targets)
            long_range += sum(1 for j in targets if not lo <= j < lo + size)
            to_hubs += sum(1 for j in targets if j in is_hub and not lo <= j < lo + size)
            max_degree = max(max_degree, len(targets))
    os.replace(partial, path)
    return {"people": people, "seed": seed, "edges": edges, "communities": communities, "hubs": len(hub),
            "long_range_edges": long_range, "long_range_to_hubs": to_hubs, "mean_out_degree": round(edges / people, 3),
            "max_out_degree": max_degree, "seconds": round(time.perf_counter() - t, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="N-Triples file to write")
    ap.add_argument("--people", type=int, default=DEFAULT_PEOPLE, help="number of people (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = ap.parse_args()
    stats = generate(args.out, args.people, args.seed)
    print(f"{args.out}: {stats['people']:,} people, {stats['edges']:,} knows edges "
          f"({stats['long_range_edges']:,} long-range, {stats['long_range_to_hubs']:,} of them to "
          f"{stats['hubs']} hubs; mean out-degree {stats['mean_out_degree']}, max {stats['max_out_degree']}) "
          f"in {stats['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
