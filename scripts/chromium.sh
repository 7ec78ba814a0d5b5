#!/usr/bin/env bash
# Headless Chromium for the tests that render a page and check its screenshot
# (tests/browser.py). Debian's own `chromium` package: no browser download of its own,
# which the closed network would refuse.
#
#   scripts/chromium.sh ensure    install Debian's chromium if /usr/bin/chromium is missing
#                                 (quiet when it is there); prints the path
#   scripts/chromium.sh version   chromium --version
#
# Installing needs root and apt-get. `apt-get update` runs only when the first install
# fails (no package lists yet, or lists too old for the mirror), then the install is retried.
# Progress and errors go to stderr, so stdout is the path alone.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
APT=(apt-get -q -y -o DPkg::Lock::Timeout=300)   # wait for another apt/dpkg, don't fail at once

die() { echo "chromium.sh: $*" >&2; exit 1; }

install() {
  command -v apt-get >/dev/null \
    || die "$CHROMIUM is missing and apt-get is not here (not Debian/Ubuntu?): install Chromium yourself so that $CHROMIUM exists"
  [ "$(id -u)" -eq 0 ] \
    || die "$CHROMIUM is missing and installing it needs root: run 'sudo apt-get install -y --no-install-recommends chromium' (or this script as root)"
  log=$(mktemp)   # global: the EXIT trap runs after this function has returned
  trap 'rm -f "$log"' EXIT
  echo "installing Debian's chromium (apt-get) ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! "${APT[@]}" install --no-install-recommends chromium >"$log" 2>&1; then
    echo "apt-get install failed; updating the package lists and trying again ..." >&2
    if ! { "${APT[@]}" update && "${APT[@]}" install --no-install-recommends chromium; } >"$log" 2>&1; then
      tail -n 20 "$log" >&2
      die "could not install Debian's chromium with apt-get (output above)"
    fi
  fi
  [ -x "$CHROMIUM" ] || die "apt-get installed chromium but $CHROMIUM is not there"
}

ensure() {
  [ -x "$CHROMIUM" ] || install
  echo "$CHROMIUM"
}

version() {
  [ -x "$CHROMIUM" ] || die "$CHROMIUM is missing: run scripts/chromium.sh ensure"
  "$CHROMIUM" --version
}

case "${1:-}" in
  ensure) ensure ;;
  version) version ;;
  *) echo "usage: $0 ensure|version" >&2; exit 2 ;;
esac
