#!/usr/bin/env bash
# Install the npm packages the book's tests and build use, into a cache folder outside the work tree:
#   axe-core  tests/test_surfaces.py injects axe.min.js into every page to audit accessibility
#   katex     _ext/book_fixes.py serves it when _config.yml sets rope_math_renderer: katex
# Usage: bash scripts/install_test_tools.sh [DIR]
# DIR defaults to $ROPE_EDU_NODE_TOOLS, else ~/.cache/rope-edu/node-tools; the tests and the build
# look in the same place. Needs npm (Debian: apt-get install -y npm).
set -euo pipefail
DIR="${1:-${ROPE_EDU_NODE_TOOLS:-$HOME/.cache/rope-edu/node-tools}}"
mkdir -p "$DIR"
if [ ! -f "$DIR/node_modules/axe-core/axe.min.js" ] || [ ! -f "$DIR/node_modules/katex/dist/katex.min.js" ]; then
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error axe-core@4.14 katex@0.16
fi
echo "npm test tools in $DIR"
