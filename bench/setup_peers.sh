#!/usr/bin/env bash
# Installs the peer engines the benchmarks compare tern against, in a venv
# outside the repo so that benchmark tooling never leaks into the project's own
# environment: pyoxigraph (in-process) and the `oxigraph` wheel (its CLI and
# HTTP server, bin/oxigraph). Idempotent: re-running is a no-op.
set -euo pipefail

VENV="${TERN_BENCH_VENV:-$HOME/.cache/tern-bench-venv}"
# Pinned so that figures from different days compare the same peer version.
PYOXIGRAPH_VERSION="${PYOXIGRAPH_VERSION:-0.5.13}"
OXIGRAPH_VERSION="${OXIGRAPH_VERSION:-$PYOXIGRAPH_VERSION}"

if "$VENV/bin/python" -c "import pyoxigraph, sys; sys.exit(pyoxigraph.__version__ != '$PYOXIGRAPH_VERSION')" 2>/dev/null \
    && [ "$("$VENV/bin/oxigraph" --version 2>/dev/null)" = "oxigraph $OXIGRAPH_VERSION" ]; then
    echo "peers already installed in $VENV (pyoxigraph $PYOXIGRAPH_VERSION, oxigraph $OXIGRAPH_VERSION)"
    exit 0
fi

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "pyoxigraph==$PYOXIGRAPH_VERSION" "oxigraph==$OXIGRAPH_VERSION"
"$VENV/bin/python" -c "import pyoxigraph; print('installed pyoxigraph', pyoxigraph.__version__, 'in $VENV')"
"$VENV/bin/oxigraph" --version
