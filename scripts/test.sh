#!/usr/bin/env bash
# The whole test suite on a fresh machine: creates .venv, installs dustonline with its
# test extras from PyPI, installs Debian's chromium if missing (scripts/chromium.sh),
# runs pytest. Extra arguments go to pytest (e.g. -k learner).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
venv_install "[test]"
bash scripts/chromium.sh ensure >/dev/null   # headless Chromium for tests/browser.py (Debian's package)
exec .venv/bin/python -m pytest "$@"
