#!/usr/bin/env bash
# Runs the endpoint's tests against a real `tern serve` on loopback, with real
# clients (curl, requests, SPARQLWrapper, rdflib). Creates its virtualenv on
# first use (outside the repo) and reuses it while requirements.txt is unchanged.
# Usage: tests/server/run.sh [pytest args]; TERN_BIN selects the binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
VENV="${TERN_TEST_VENV:-$HOME/.cache/tern-server-venv}"
stamp="$VENV/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi
if [ -z "${TERN_BIN:-}" ]; then
    target="${CARGO_TARGET_DIR:-$here/../../target}"
    for candidate in "$target/release/tern" "$target/debug/tern"; do
        if [ -x "$candidate" ]; then TERN_BIN="$candidate"; break; fi
    done
fi
export TERN_BIN
cd "$here"
exec "$VENV/bin/python" -m pytest -q "$@"
