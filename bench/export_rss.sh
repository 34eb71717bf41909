#!/usr/bin/env bash
# One export from a fresh `tern serve`, fetched with curl (identity coding):
# payload MB/s, the server's idle RSS and its peak over idle (sampled every
# 50 ms from /proc/PID/status), its CPU time, and, with SERIES=1, the RSS
# every 0.25 s (MB), to tell a constant cost from one that grows with the
# result. OUT=FILE keeps the body (to count a Parquet file's row groups).
#
#   bash bench/export_rss.sh TERN INDEX ACCEPT [QUERY] [PORT] [serve args...]
#   SERIES=1 bash bench/export_rss.sh ~/.cache/tern-target/release/tern \
#       /tmp/tern-bench-data/idx-100m application/vnd.apache.parquet
set -euo pipefail
BIN=$1; INDEX=$2; ACCEPT=$3; QUERY=${4:-'SELECT * WHERE { ?s ?p ?o }'}; PORT=${5:-7411}
shift $(( $# < 5 ? $# : 5 ))
"$BIN" serve --index "$INDEX" --port "$PORT" "$@" > /dev/null 2>&1 &
PID=$!
PEAK=$(mktemp)
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; rm -f "$PEAK"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
sleep 0.5
rss() { awk '/VmRSS/{print $2}' "/proc/$PID/status" 2>/dev/null || echo 0; }
idle=$(rss); echo "$idle" > "$PEAK"
cpu0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
(
    peak=$idle; n=0
    while kill -0 $PID 2>/dev/null; do
        r=$(rss)
        if [ "${r:-0}" -gt "$peak" ]; then peak=$r; echo "$peak" > "$PEAK"; fi
        if [ "${SERIES:-0}" = 1 ] && [ $((n % 5)) = 0 ]; then printf '%d ' $((r / 1024)); fi
        n=$((n + 1)); sleep 0.05
    done
) &
MON=$!
out=$(curl -s -o "${OUT:-/dev/null}" -w "%{size_download} %{time_total}" -G --data-urlencode "query=$QUERY" \
    -H "Accept: $ACCEPT" -H "Accept-Encoding: identity" "http://127.0.0.1:$PORT/sparql")
cpu1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
sleep 0.2
kill $MON 2>/dev/null; wait $MON 2>/dev/null || true
[ "${SERIES:-0}" = 1 ] && echo
read -r size wall <<< "$out"
ticks=$(getconf CLK_TCK)
python3 -c "print(f'{$size} bytes in {$wall:.2f} s ({$size / $wall / 1e6:.0f} MB/s), idle RSS {$idle / 1024:.0f} MB, peak {($(cat "$PEAK") - $idle) / 1024:.0f} MB over idle, server CPU {($cpu1 - $cpu0) / $ticks:.1f} s')"
