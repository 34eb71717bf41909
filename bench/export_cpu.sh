#!/usr/bin/env bash
# One export from a fresh `tern serve`, fetched with `curl -o /dev/null`:
# MB/s of payload, wall time, the server's CPU time (user + system, from
# /proc/PID/stat) and curl's. Shows how much of two cores an export uses.
#
#   bash bench/export_cpu.sh TERN INDEX ACCEPT QUERY [PORT] [serve args...]
#   bash bench/export_cpu.sh ~/.cache/tern-target/release/tern /tmp/tern-bench-data/export-tern-10m \
#       text/turtle 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }'
set -euo pipefail
BIN=$1; INDEX=$2; ACCEPT=$3; QUERY=$4; PORT=${5:-7403}; shift $(( $# < 5 ? $# : 5 ))
"$BIN" serve --index "$INDEX" --port "$PORT" "$@" > /dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
before=$(cpu)
out=$( { /usr/bin/time -f "%U %S" curl -s -o /dev/null -w "%{size_download} %{time_total}\n" -G \
    --data-urlencode "query=$QUERY" -H "Accept: $ACCEPT" "http://127.0.0.1:$PORT/sparql"; } 2>&1 )
after=$(cpu)
read -r size wall <<< "$(echo "$out" | head -1)"
read -r cu cs <<< "$(echo "$out" | tail -1)"
python3 -c "print(f'{$size / $wall / 1e6:.0f} MB/s, wall {$wall:.2f} s, server CPU {($after - $before) / $ticks:.2f} s, curl CPU {$cu + $cs:.2f} s')"
