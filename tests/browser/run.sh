#!/usr/bin/env bash
# Runs the workbench's browser tests: pytest + Playwright driving Debian's
# headless Chromium against real `tern serve` processes. Creates the
# virtualenv on first use (outside the repo; no `playwright install`: the
# browser is the distribution's) and installs Chromium with apt-get if it is
# missing. Screenshots land in tests/browser/artifacts/.
# Usage: tests/browser/run.sh [pytest args]; TERN_BIN selects the binary
# (default: the debug build in ~/.cache/tern-target).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
VENV="${TERN_BROWSER_VENV:-$HOME/.cache/tern-browser-venv}"
stamp="$VENV/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi
if [ ! -x /usr/bin/chromium ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
fi
export TERN_BIN="${TERN_BIN:-$HOME/.cache/tern-target/debug/tern}"
cd "$here"
exec "$VENV/bin/python" -m pytest -q "$@"
