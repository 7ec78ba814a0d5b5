#!/usr/bin/env bash
# The whole test suite on a fresh machine: creates .venv, installs dustonline with its
# test extras from PyPI, installs Debian's chromium if missing (scripts/chromium.sh),
# runs the lint, format and type checks (scripts/lint.sh), then pytest, which starts a
# local Kafka broker for the streaming tests (scripts/kafka.sh). Extra arguments go to
# pytest (e.g. -k learner); SKIP_LINT=1 skips the checks.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
venv_install "[test]"
bash scripts/chromium.sh ensure >/dev/null   # headless Chromium for tests/browser.py (Debian's package)
if [ -z "${SKIP_LINT:-}" ]; then
  LINT_NO_INSTALL=1 bash scripts/lint.sh
fi
exec .venv/bin/python -m pytest "$@"
