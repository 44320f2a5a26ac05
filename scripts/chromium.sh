#!/bin/sh
# chromium.sh prints the path of a headless Chromium for the browser tests, installing Debian's
# chromium-headless-shell first when none is found. BOX_CHROME, when set, wins.
set -e
if [ -n "$BOX_CHROME" ] && [ -x "$BOX_CHROME" ]; then echo "$BOX_CHROME"; exit 0; fi
find_it() {
	for b in chrome-headless-shell chromium-headless-shell chromium chromium-browser; do
		if p=$(command -v "$b" 2>/dev/null); then echo "$p"; return 0; fi
	done
	for p in /usr/lib/chromium/chrome-headless-shell /usr/lib/chromium-headless-shell/chrome-headless-shell /usr/lib/chromium/chromium; do
		if [ -x "$p" ]; then echo "$p"; return 0; fi
	done
	return 1
}
if find_it; then exit 0; fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium-headless-shell >&2
find_it
