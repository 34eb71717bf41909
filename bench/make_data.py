#!/usr/bin/env python3
"""Prepare the load-benchmark inputs.

  bsbm-1m.nt   the shared BSBM 1M data set, decompressed (loaders are timed on
               plain N-Triples so that decompression speed is not measured).
  bsbm-10m.nt  ten disjoint copies of it, to see how loading scales.

Copy 0 is the original data; in copy k >= 1 every instance IRI
<http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/...> becomes
<.../instances/c{k}/...> and every blank node _:x becomes _:x_c{k}.
Vocabulary IRIs (predicates, classes, datatypes) are left alone so the copies
share one schema, as a real 10x larger data set would; every BSBM subject is an
instance IRI, so no triple of one copy equals a triple of another. Keeping
copy 0 unchanged means the BSBM query mixes in shared/ still match on 10m.

Files that already exist are kept; outputs are written under a temporary name
and renamed, so an interrupted run never leaves a truncated file behind.
"""
import argparse
import re
import sys
import time
from pathlib import Path

from benchlib import DEFAULT_DATA, SHARED, decompress

INSTANCES = b"<http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/"
COPIES = 10

# A literal (skipped) or a blank node label in term position. Matching literals
# too keeps "_:" inside string values untouched; only used if the data has any
# blank node at all, since BSBM has none and this is far slower than replace().
BNODE_OR_LITERAL = re.compile(rb'"(?:[^"\\\n]|\\.)*"|(?<![^\s])_:([^\s]*[^\s.])')


def make_copies(src: Path, dst: Path, copies: int) -> None:
    # 255 MB in memory is cheap here (24 GiB machine), and one bytes.replace over
    # the whole buffer per copy is ~100x faster than any per-line Python loop.
    data = src.read_bytes()
    has_bnodes = b"_:" in data
    tmp = dst.with_name(dst.name + ".tmp")
    with open(tmp, "wb", buffering=16 << 20) as out:
        for k in range(copies):
            if k == 0:
                out.write(data)
                continue
            chunk = data.replace(INSTANCES, INSTANCES + b"c%d/" % k)
            if has_bnodes:
                suffix = b"_c%d" % k
                chunk = BNODE_OR_LITERAL.sub(
                    lambda m: m.group(0) if m.group(1) is None else m.group(0) + suffix, chunk)
            out.write(chunk)
    tmp.rename(dst)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=SHARED,
                    help="the project's shared/ directory (default: %(default)s)")
    ap.add_argument("--work", type=Path, default=DEFAULT_DATA,
                    help="where to write the inputs (default: %(default)s)")
    args = ap.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    small = args.work / "bsbm-1m.nt"
    big = args.work / "bsbm-10m.nt"
    steps = [
        (small, lambda: decompress(args.shared / "datasets/bsbm-1m/dataset.nt.zst", small)),
        (big, lambda: make_copies(small, big, COPIES)),
    ]
    for path, build in steps:
        if path.exists():
            print(f"{path}: exists, kept", file=sys.stderr)
            continue
        t = time.perf_counter()
        build()
        print(f"{path}: {path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - t:.1f} s",
              file=sys.stderr)


if __name__ == "__main__":
    main()
