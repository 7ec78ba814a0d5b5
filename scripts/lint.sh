#!/usr/bin/env bash
# Lint, formatting and type checks: ruff check, ruff format --check and mypy on the core
# package (settings in pyproject.toml: [tool.ruff], [tool.mypy]). Installs .venv with the
# test extras as scripts/test.sh does; runs all three and fails if any of them fails.
# LINT_NO_INSTALL=1 uses .venv as it is.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${LINT_NO_INSTALL:-}" ]; then
  source scripts/venv.sh
  venv_install "[test]" || exit 1
fi
status=0
echo "== ruff check"
.venv/bin/ruff check --output-format concise . || status=1
echo "== ruff format --check"
.venv/bin/ruff format --check --output-format concise . || status=1
echo "== mypy dustonline"
.venv/bin/mypy dustonline || status=1
exit $status
