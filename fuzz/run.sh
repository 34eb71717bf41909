#!/usr/bin/env bash
# Runs the fuzz targets with cargo-fuzz (libFuzzer), each for a set time.
#   fuzz/run.sh [SECONDS] [TARGET...]   (default: 60 s, every target)
#   FUZZ_RUNS=10000000 fuzz/run.sh 1800  (stop each at 10^7 inputs or 30 min)
# New inputs go to a copy of the corpus under $FUZZ_WORK (default
# /tmp/tern-fuzz), so a run leaves the repository as it was; crashes are
# written to $FUZZ_WORK/artifacts/TARGET and the run fails. Put a crash
# into fuzz/regressions/TARGET/ once fixed: `cargo test` replays it.
# libFuzzer needs unstable compiler flags: the nightly toolchain when
# rustup has one, else the stable one with RUSTC_BOOTSTRAP=1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(ntriples turtle query token request)
fi
work="${FUZZ_WORK:-/tmp/tern-fuzz}"
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/tern-fuzz-target}"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
else
    export RUSTC_BOOTSTRAP=1
fi
cd "$here"
# No sanitizer: the code under test is safe Rust, and libFuzzer still
# catches panics, aborts (stack overflows), timeouts and memory blow-ups.
cargo "${toolchain[@]}" fuzz build -s none
status=0
for t in "${targets[@]}"; do
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    echo "== fuzz $t for ${seconds}s${FUZZ_RUNS:+ or $FUZZ_RUNS inputs}"
    runs=()
    [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
    if ! cargo "${toolchain[@]}" fuzz run -s none "$t" "$work/corpus/$t" "$here/corpus/$t" -- \
        -max_total_time="$seconds" "${runs[@]}" -timeout=20 -rss_limit_mb=3072 -max_len=4096 \
        -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 2>&1 | \
        grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|stat::average_exec_per_sec|Done [0-9]+ runs|==[0-9]+==|.*(panicked|deadly signal|Timeout|out-of-memory))"; then
        :
    fi
    if [ -n "$(ls -A "$work/artifacts/$t")" ]; then
        echo "fuzz $t: crashes in $work/artifacts/$t"
        status=1
    fi
done
exit $status
