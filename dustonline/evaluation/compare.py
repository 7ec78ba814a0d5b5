"""Several ``dustonline eval --json`` results side by side, one row per workload: what the
committed evaluation shows for the long-tail settings (scripts/eval.sh longtail).

    python -m dustonline.evaluation.compare NAME=RESULT.json ... > summary.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

METHODS = ("online", "surt", "w3lib")


def _cell(m: dict | None) -> str:
    if m is None:
        return "–"
    t = m["tail"]
    return f"{t['coverage']:.1%} / {t['lost']:,} ({t['lost_rate']:.2%})"


def table(results: list[tuple[str, dict]], methods: tuple[str, ...] = METHODS) -> str:
    """Markdown: per workload, events and sites, then per method the held-out tail's
    coverage (duplicates merged) and contents lost, with their share of the contents."""
    head = "| workload | events | sites | " + " | ".join(methods) + " |"
    rows = [head, "|" + "---|" * (3 + len(methods))]
    for name, res in results:
        by = {m["name"]: m for m in res["methods"]}
        inp = res["input"]
        cells = [name, f"{inp['events']:,}", f"{inp.get('sites', 0):,}"] + [_cell(by.get(m)) for m in methods]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    results = []
    for arg in args:
        name, sep, path = arg.partition("=")
        if not sep:
            name, path = Path(arg).stem, arg
        results.append((name, json.loads(Path(path).read_text())))
    print(
        "Held-out tail (the last 20% of each stream): **coverage / contents lost (share of the "
        "tail's contents)**, per method. Written by scripts/eval.sh longtail; see docs/evaluation.md.\n"
    )
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
