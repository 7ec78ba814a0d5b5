#!/usr/bin/env bash
# The committed evaluation (docs/eval/), regenerated. Usage: scripts/eval.sh [all|generated|real|longtail]
#   generated: a 200k-event, 100-site stream from dustonline generate (every alias family, two
#     sites drifting mid-stream), every method side by side (about 4 minutes on 2 cores);
#   real: each crawl file in ../shared/data/real (REAL_DATA) with the default config, digests
#     as the truth, then docs/eval/real/summary.md: per file and method, the fetches the final
#     rules save and the distinct contents they merge over the whole crawl, with the ceiling
#     (about 6 minutes on 2 cores, most of it the pattern tree on ukwa-bbc-crawl.log).
#   longtail: the long-tail workloads of configs/eval/tuning.yaml (t1-base) and every held-out
#     setting of configs/eval/heldout.yaml (fixed before any tuning), online against surt
#     and w3lib, side by side in docs/eval/longtail/summary.md (about 10 minutes on 2 cores).
# Same seed, same rules; only the seconds columns change between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all | generated | real | longtail) ;; *) echo "usage: $0 [all|generated|real|longtail]" >&2; exit 2 ;; esac
source scripts/venv.sh
venv_install "[eval]"
DO=.venv/bin/dustonline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$what" = all ] || [ "$what" = generated ]; then
  $DO generate "$work/stream.jsonl.gz" "$work/truth.jsonl.gz" --seed 1 --sites 100 --pages 120000 \
    --families all --drift-sites 2 --layout docs/eval/generated/layout.json
  $DO eval "$work/stream.jsonl.gz" --truth "$work/truth.jsonl.gz" --layout docs/eval/generated/layout.json \
    --report docs/eval/generated | tee docs/eval/generated/table.md
fi

real=${REAL_DATA:-../shared/data/real}
if { [ "$what" = all ] || [ "$what" = real ]; } && [ -d "$real" ]; then
  out=docs/eval/real
  mkdir -p "$out"
  reports=()
  skipped=()
  for f in "$real"/*; do
    name=$(basename "$f")
    case "$name" in *.md | *.txt | .*) continue ;; esac  # SOURCES.md and other notes
    [ -f "$f" ] || continue
    echo "eval $name ..." >&2
    if $DO eval "$f" --report "$out/$name" --quiet > "$work/$name.md" 2> "$work/$name.err"; then
      mv "$work/$name.md" "$out/$name.md"
      reports+=("$out/$name/report.json")
    elif grep -q "cannot tell the input format" "$work/$name.err"; then
      # a layout the readers cannot detect yet: skipped, and said so, not a failed run
      echo "SKIPPED $name: the readers cannot detect its format ($(tail -n 1 "$work/$name.err"))" >&2
      skipped+=(--skipped "$name (the readers cannot detect its format)")
    else
      cat "$work/$name.err" >&2
      echo "eval of $f failed" >&2
      exit 1
    fi
  done
  .venv/bin/python -m dustonline.evaluation.realcrawl "${reports[@]}" "${skipped[@]}" > "$out/summary.md"
  cat "$out/summary.md"
fi

if [ "$what" = all ] || [ "$what" = longtail ]; then
  out=docs/eval/longtail
  mkdir -p "$out"
  named=()
  for setting in configs/eval/tuning.yaml:t1-base \
      $(.venv/bin/python -c "from dustonline.evaluation import longtail as lt; print(' '.join('configs/eval/heldout.yaml:' + n for n in lt.load_settings('configs/eval/heldout.yaml')))"); do
    name=${setting##*:}
    echo "eval $name ..." >&2
    $DO generate "$work/$name.jsonl.gz" "$work/$name.truth.jsonl.gz" --profile longtail --setting "$setting" >&2
    $DO eval "$work/$name.jsonl.gz" --truth "$work/$name.truth.jsonl.gz" --learner online,surt,w3lib --quiet \
      --json "$out/$name.json" > "$out/$name.md"
    named+=("$name=$out/$name.json")
  done
  .venv/bin/python -m dustonline.evaluation.compare "${named[@]}" > "$out/summary.md"
  cat "$out/summary.md"
fi
