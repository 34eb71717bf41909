#!/usr/bin/env bash
# Rebuilds ui/dist (index.html, app.js, app.css), which the server embeds:
# installs the locked dependencies, then bundles src/ with esbuild into one
# minified ES module and one stylesheet. Commit the result.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
mkdir -p dist
rm -f dist/*
npx --no-install esbuild src/main.js --bundle --minify --format=esm --target=es2020 \
    --outfile=dist/app.js
npx --no-install esbuild src/app.css --minify --outfile=dist/app.css
cp src/index.html dist/index.html
ls -l dist
