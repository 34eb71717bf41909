#!/usr/bin/env python3
"""Preemption overhead on typical WatDiv plans: suspend and resume times and
token sizes, as `tern serve` reports them per page.

Every WatDiv basic query (../shared/datasets/watdiv-10/queries-basic, 20
templates x 20 instances) is fetched page by page with a tiny quantum
(default `quantum=1ms`), one query at a time over HTTP, following the
`Tern-Next` tokens to the last page. The server reports per page:

  Tern-Suspend-Us   saving the operators' state (or parking them) and sealing
                    the token (the page that ends with a token)
  Tern-Resume-Us    opening and checking the token, then continuing the
                    parked operators or rebuilding the plan from the token's
                    saved state (the page that starts from a token)
  Tern-Resumed-From parked | token
  Tern-Token-Bytes  the token's size

Two modes, each over all queries, `--rounds` times:
  same server   tokens go back to the server that issued them, which
                continues the parked operators;
  other server  tokens go to a twin serving the same index with the same key,
                which rebuilds the plan from the token (pipelined plans; a
                plan holding materialized state is refused there with 410).

Reported per mode: median, p95 and max of each over all suspensions, the
median of suspend + the following resume, per template and overall. The
same queries are also fetched unpaged once, and the row counts compared (the
pages together must hold the same rows).

Usage (after `cargo build --release -p tern-cli`; builds the WatDiv SF10 index
in --work if missing, ~20 s):

    python3 bench/preemption_overhead.py [--quantum 1ms] [--rounds 2] [--tern PATH] [--work DIR] [--out FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fairness_bench import Endpoint, run_query, wait_http  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TERN_SHARED", ROOT.parent / "shared"))
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/tern-target"))
PORT = 7183


def watdiv_queries() -> list[tuple[str, str]]:
    folder = SHARED / "datasets/watdiv-10/queries-basic"
    out = []
    for lines in sorted(folder.glob("*.lines.rq")):
        template = lines.name.split(".")[0]
        for i, text in enumerate(l for l in lines.read_text().splitlines() if l.strip()):
            out.append((f"{template}-{i:02d}", text))
    return out


def ensure_index(tern: Path, work: Path) -> Path:
    index = work / "tern-index"
    if (index / "index.json").exists():
        return index
    nt = Path("/tmp/tern-bench-data/watdiv-10.nt")
    if not nt.exists():
        nt.parent.mkdir(parents=True, exist_ok=True)
        with open(nt, "wb") as f:
            subprocess.run(["zstd", "-dc", str(SHARED / "datasets/watdiv-10/watdiv.10.nt.zst")], stdout=f, check=True)
    subprocess.run([str(tern), "load", "--index", str(index), "--force", str(nt)], check=True)
    return index


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else None


def stats(xs):
    return {"n": len(xs), "median": statistics.median(xs) if xs else None, "p95": pct(xs, 95),
            "max": max(xs) if xs else None}


def summary(records: list) -> dict:
    """Suspend, resume and token figures over the records of one mode."""
    ok = [r for r in records if not r.get("error")]
    suspend = [x for r in ok for x in r["suspend_us"]]
    resume = [x for r in ok for x in r["resume_us"]]
    # Each suspension is followed by the resume of the next page.
    pairs = [s + r for rec in ok for s, r in zip(rec["suspend_us"], rec["resume_us"])]
    out = {
        "queries": len(records),
        "pages": sum(r["pages"] for r in records),
        "suspend_us": stats(suspend),
        "resume_us": stats(resume),
        "suspend_plus_resume_us": stats(pairs),
        "token_bytes": stats([x for r in ok for x in r["token_bytes"]]),
        "resumed_from": {k: sum(r.get("resumed_from", []).count(k) for r in ok) for k in ("parked", "token")},
        "refused": sorted({r["id"] for r in records if r.get("error")}),
        "row_mismatches": sorted({r["id"] for r in ok if r.get("unpaged_error") or r["rows"] != r["unpaged_rows"]}),
        "per_template": {},
    }
    for t in sorted({r["template"] for r in records}):
        rs = [r for r in ok if r["template"] == t]
        out["per_template"][t] = {
            "suspensions": sum(len(r["suspend_us"]) for r in rs),
            "suspend_plus_resume_us": stats([s + q for r in rs for s, q in zip(r["suspend_us"], r["resume_us"])]),
            "token_bytes": stats([x for r in rs for x in r["token_bytes"]]),
        }
    return out


def print_summary(title: str, s: dict) -> None:
    print(f"\n### {title}\n")
    print(f"{s['queries']} query runs, {s['pages']} pages, {s['suspend_us']['n']} suspensions; "
          f"resumed from: {s['resumed_from']}; refused (410): {len(s['refused'])} queries; "
          f"rows differ from unpaged runs: {s['row_mismatches'] or 'none'}\n")
    print("| | median | p95 | max |\n|---|---:|---:|---:|")
    for label, key in (("suspend (µs)", "suspend_us"), ("resume (µs)", "resume_us"),
                       ("suspend + resume (µs)", "suspend_plus_resume_us"), ("token (bytes)", "token_bytes")):
        print(f"| {label} | {s[key]['median']} | {s[key]['p95']} | {s[key]['max']} |")
    print("\n| template | suspensions | suspend + resume median (µs) | max (µs) | token median (bytes) |")
    print("|---|---:|---:|---:|---:|")
    for t, v in s["per_template"].items():
        if v["suspensions"]:
            sr, tb = v["suspend_plus_resume_us"], v["token_bytes"]
            print(f"| {t} | {v['suspensions']} | {sr['median']} | {sr['max']} | {tb['median']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quantum", default="1ms")
    ap.add_argument("--rounds", type=int, default=2, help="runs of the 400 queries per mode")
    ap.add_argument("--tern", type=Path, default=TARGET / "release/tern")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tern-fairness"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    index = ensure_index(args.tern, args.work)
    key = args.work / "preemption-overhead.key"
    key.write_bytes(os.urandom(32))
    log = open(args.work / "preemption-overhead-serve.log", "ab")
    procs = [subprocess.Popen([str(args.tern), "serve", "--index", str(index), "--port", str(port),
                               "--token-key", str(key)], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
             for port in (PORT, PORT + 1)]
    modes = {
        # Tokens return to the server that issued them: it continues the
        # query's parked operators.
        "same server": Endpoint(PORT, "/sparql", paged_quantum=args.quantum),
        # Tokens go to a twin with the same index and key: it rebuilds the
        # plan from the token's saved state (pipelined plans; the others
        # are refused with 410, their state being on the first server).
        "other server": Endpoint(PORT, "/sparql", paged_quantum=args.quantum, resume_port=PORT + 1),
    }
    records = {mode: [] for mode in modes}
    try:
        for port, proc in zip((PORT, PORT + 1), procs):
            wait_http(port, proc)
        whole = Endpoint(PORT, "/sparql")
        unpaged = {name: run_query(whole, query, args.timeout) for name, query in watdiv_queries()}
        for _ in range(args.rounds):
            for mode, endpoint in modes.items():
                for name, query in watdiv_queries():
                    rec = run_query(endpoint, query, args.timeout)
                    rec.update(id=name, template=name.split("-")[0], unpaged_rows=unpaged[name].get("rows"),
                               unpaged_error=unpaged[name].get("error"))
                    records[mode].append(rec)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    report = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "quantum": args.quantum,
        "rounds": args.rounds,
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip(),
        "modes": {mode: summary(rs) for mode, rs in records.items()},
        "records": records,
    }
    print(f"quantum {args.quantum}, {args.rounds} rounds")
    for mode, s in report["modes"].items():
        print_summary(mode, s)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
