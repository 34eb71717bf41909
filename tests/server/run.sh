#!/usr/bin/env bash
# Runs the endpoint's tests against a real `tern serve` on loopback, with real
# clients (curl, requests, SPARQLWrapper, rdflib, Tern's own Python client).
# Creates its virtualenv on first use (outside the repo) and reuses it while
# requirements.txt is unchanged; installs clients/python into it when its
# sources change.
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
# The Python client (clients/python), reinstalled only when its sources change.
client="$here/../../clients/python"
client_stamp="$VENV/.tern-client"
client_hash="$(cd "$client" && find pyproject.toml README.md src -name '*.egg-info' -prune -o -name __pycache__ -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum | sha256sum)"
if [ "$client_hash" != "$(cat "$client_stamp" 2>/dev/null)" ]; then
    "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "$client"
    echo "$client_hash" > "$client_stamp"
fi
# The embedded Python API (crates/tern-python, the `tern` package), built
# into the venv with maturin when its sources change, or when the venv's
# editable install cannot load it: that install points at the clone it was
# built from, so a clone made again in the same place has the sources but
# not the built module.
embedded="$here/../../crates/tern-python"
embedded_stamp="$VENV/.tern-embedded"
embedded_hash="$(cd "$embedded" && pwd && find Cargo.toml pyproject.toml src python -name __pycache__ -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum | sha256sum)
$(cd "$here/../.." && git ls-files -s crates/tern-engine crates/tern-index crates/tern-export crates/tern-server ui/dist 2>/dev/null | sha256sum)"
if [ "$embedded_hash" != "$(cat "$embedded_stamp" 2>/dev/null)" ] \
    || ! (cd / && "$VENV/bin/python" -c "import tern._native") > /dev/null 2>&1; then
    (cd "$embedded" && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --quiet)
    echo "$embedded_hash" > "$embedded_stamp"
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
