#!/usr/bin/env python3
"""Preemption overhead on typical WatDiv plans: suspend and resume times and
token sizes, as `tern serve` reports them per page.

Every WatDiv basic query (../shared/datasets/watdiv-10/queries-basic, 20
templates x 20 instances) is fetched page by page with a tiny quantum
(default `quantum=1ms`), one query at a time over HTTP, following the
`Tern-Next` tokens to the last page, so that most queries are suspended and
resumed several times. The server reports per page:

  Tern-Suspend-Us   saving the operators' state and sealing the token (the
                    page that ends with a token)
  Tern-Resume-Us    opening the token and rebuilding the plan where it stopped
                    (the page that starts from a token)
  Tern-Token-Bytes  the token's size

Reported: median, p95 and max of each over all suspensions, the median of
suspend + the following resume, per template and overall, and the number of
pages. The same queries are also fetched unpaged once, and the row counts
compared (the pages together must hold the same rows).

Usage (after `cargo build --release -p tern-cli`; builds the WatDiv SF10 index
in --work if missing, ~20 s):

    python3 bench/preemption_overhead.py [--quantum 1ms] [--tern PATH] [--work DIR] [--out FILE]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quantum", default="1ms")
    ap.add_argument("--tern", type=Path, default=TARGET / "release/tern")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tern-fairness"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    index = ensure_index(args.tern, args.work)
    log = open(args.work / "preemption-overhead-serve.log", "ab")
    proc = subprocess.Popen([str(args.tern), "serve", "--index", str(index), "--port", str(PORT)],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    records = []
    try:
        wait_http(PORT, proc)
        paged, whole = Endpoint(PORT, "/sparql", paged_quantum=args.quantum), Endpoint(PORT, "/sparql")
        for name, query in watdiv_queries():
            rec = run_query(paged, query, args.timeout)
            plain = run_query(whole, query, args.timeout)
            rec.update(id=name, template=name.split("-")[0], unpaged_rows=plain.get("rows"),
                       unpaged_error=plain.get("error"))
            records.append(rec)
    finally:
        proc.terminate()
        proc.wait()
    suspend = [x for r in records for x in r["suspend_us"]]
    resume = [x for r in records for x in r["resume_us"]]
    tokens = [x for r in records for x in r["token_bytes"]]
    # Each suspension is followed by the resume of the next page.
    pairs = [s + r for rec in records for s, r in zip(rec["suspend_us"], rec["resume_us"])]
    mismatched = [r["id"] for r in records if r.get("error") or r.get("unpaged_error") or r["rows"] != r["unpaged_rows"]]
    report = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "quantum": args.quantum,
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip(),
        "queries": len(records),
        "pages": sum(r["pages"] for r in records),
        "suspend_us": stats(suspend),
        "resume_us": stats(resume),
        "suspend_plus_resume_us": stats(pairs),
        "token_bytes": stats(tokens),
        "row_mismatches": mismatched,
        "per_template": {},
        "records": records,
    }
    for t in sorted({r["template"] for r in records}):
        rs = [r for r in records if r["template"] == t]
        report["per_template"][t] = {
            "suspensions": sum(len(r["suspend_us"]) for r in rs),
            "suspend_plus_resume_us": stats([s + q for r in rs for s, q in zip(r["suspend_us"], r["resume_us"])]),
            "token_bytes": stats([x for r in rs for x in r["token_bytes"]]),
        }
    print(f"quantum {args.quantum}: {report['queries']} queries, {report['pages']} pages, "
          f"{len(suspend)} suspensions; rows differ from unpaged runs: {mismatched or 'none'}")
    print("| | median | p95 | max |\n|---|---:|---:|---:|")
    for label, key in (("suspend (µs)", "suspend_us"), ("resume (µs)", "resume_us"),
                       ("suspend + resume (µs)", "suspend_plus_resume_us"), ("token (bytes)", "token_bytes")):
        s = report[key]
        print(f"| {label} | {s['median']} | {s['p95']} | {s['max']} |")
    print("\n| template | suspensions | suspend + resume median (µs) | max (µs) | token median (bytes) |")
    print("|---|---:|---:|---:|---:|")
    for t, s in report["per_template"].items():
        sr, tb = s["suspend_plus_resume_us"], s["token_bytes"]
        print(f"| {t} | {s['suspensions']} | {sr['median']} | {sr['max']} | {tb['median']} |")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
