#!/usr/bin/env bash
# The main job on the embedded default (no server): installs dustonline into .venv and
# learns rules on the bundled sample stream, showing what they would save.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/dustonline demo "$@"
