#!/usr/bin/env bash
# The main job on the embedded default (no server): installs dustonline into .venv and
# learns rules on the bundled sample stream, showing what they would save.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
venv_install
exec .venv/bin/dustonline demo "$@"
