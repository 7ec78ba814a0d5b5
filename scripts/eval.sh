#!/usr/bin/env bash
# The committed evaluation (docs/eval/), regenerated: a 200k-event, 100-site stream from
# dustonline generate (every alias family, two sites drifting mid-stream), every method
# side by side, then each real file in ../shared/data/real. Same seed, same rules; only
# the seconds columns change between runs. About 4 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
venv_install "[eval]"
DO=.venv/bin/dustonline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

$DO generate "$work/stream.jsonl.gz" "$work/truth.jsonl.gz" --seed 1 --sites 100 --pages 120000 \
  --families all --drift-sites 2 --layout docs/eval/generated/layout.json
$DO eval "$work/stream.jsonl.gz" --truth "$work/truth.jsonl.gz" --layout docs/eval/generated/layout.json \
  --report docs/eval/generated | tee docs/eval/generated/table.md

real=${REAL_DATA:-../shared/data/real}
if [ -d "$real" ]; then
  for f in "$real"/*; do
    name=$(basename "$f")
    $DO eval "$f" --config configs/small-site.yaml --report "docs/eval/real/$name" --quiet > "docs/eval/real/$name.md" \
      || { echo "eval of $f failed" >&2; exit 1; }
  done
fi
