#!/usr/bin/env bash
# Install the npm packages the book's tests use, into a cache folder outside the work tree:
#   axe-core  tests/test_surfaces.py injects axe.min.js into every page to audit accessibility
# Usage: bash scripts/install_test_tools.sh [DIR]
# DIR defaults to $ROPE_EDU_NODE_TOOLS, else ~/.cache/rope-edu/node-tools; the tests look in
# the same place. Needs npm (Debian: apt-get install -y npm).
set -euo pipefail
DIR="${1:-${ROPE_EDU_NODE_TOOLS:-$HOME/.cache/rope-edu/node-tools}}"
mkdir -p "$DIR"
if [ ! -f "$DIR/node_modules/axe-core/axe.min.js" ]; then
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error axe-core@4.14
fi
echo "npm test tools in $DIR"
