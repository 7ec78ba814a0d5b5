"""Whole-crawl scoring by content digest: what a canonicalizer would have saved on a crawl.

The prequential replay (prequential.py) asks what rules learned *during* a stream save; a
crawler operator also asks what the rules a learner *ends* with would save on the crawl it
learned from, against the static canonicalizers crawlers use today. Over the distinct 2xx
URLs of a crawl, each with the digest of its first 2xx fetch, a canonicalizer groups URLs
under keys, and per key:

- fetches saved = URLs under the key - 1 (one fetch per key);
- distinct contents merged = distinct digests under the key - 1 (pages a crawler that
  fetches one URL per key never gets).

Their sum over keys splits as fetches saved = duplicates merged + distinct contents
merged, where duplicates merged counts URLs keyed with an earlier URL of their own
content. The ceiling, URLs - distinct digests, is the most duplicates any method can
merge. Digests see exact duplicates only, so a near-duplicate merged counts as a content
merged.

Everything here is a pure function over ``(url, digest)`` pairs and a ``canonicalize``
callable, so a test can check it by hand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

from ..rules.urls import light_normalize

# Per duplicate URL, the smallest difference to an earlier URL of its content, told from
# the two URLs alone: a reader sees which kind of DUST a method merges and which it misses.
FAMILIES = ("trivial", "scheme", "host", "query", "path", "several")
FAMILY_DOC = {
    "trivial": "equal after light normalization (case, default port, fragment)",
    "scheme": "only the scheme differs",
    "host": "only the host differs",
    "query": "only the query differs",
    "path": "only the path differs",
    "several": "more than one part differs (often unrelated URLs serving one file)",
}


def distinct(pairs: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """URL -> the digest of its first pair; pairs without a digest are skipped. A URL counts
    once, as a crawler fetching it once would have seen it."""
    out: dict[str, str] = {}
    for url, digest in pairs:
        if digest and url not in out:
            out[url] = digest
    return out


def safe(canonicalize: Callable[[str], str]) -> Callable[[str], str]:
    """A library that chokes on a URL (or returns nothing) keeps it as its own key."""

    def f(url: str) -> str:
        try:
            return canonicalize(url) or url
        except Exception:  # noqa: BLE001 - any library error on one URL
            return url

    return f


def ceiling(urls: Mapping[str, str]) -> int:
    """Duplicates by digest: URLs - distinct digests."""
    return len(urls) - len(set(urls.values()))


def families(urls: Mapping[str, str]) -> dict[str, str]:
    """Each duplicate URL (not the first of its digest, in the mapping's order) -> its family:
    the first of FAMILIES that relates it to some earlier URL of the same digest."""
    seen: dict[str, list[set]] = {}  # digest -> projections of its URLs so far
    out: dict[str, str] = {}
    for url, digest in urls.items():
        p = urlsplit(light_normalize(url))
        proj = (
            (p.scheme, p.netloc, p.path, p.query),
            (p.netloc, p.path, p.query),
            (p.scheme, p.path, p.query),
            (p.scheme, p.netloc, p.path),
            (p.scheme, p.netloc, p.query),
        )
        sets = seen.get(digest)
        if sets is None:
            seen[digest] = [{x} for x in proj]
            continue
        out[url] = next((f for f, x, s in zip(FAMILIES, proj, sets) if x in s), "several")
        for x, s in zip(proj, sets):
            s.add(x)
    return out


def score(
    urls: Mapping[str, str],
    canonicalize: Callable[[str], str],
    fams: Mapping[str, str] | None = None,
    examples: int = 3,
) -> dict:
    """One method's figures on the whole crawl: fetches saved, distinct contents merged,
    duplicates merged (in all and per family, given ``families(urls)``), and the first
    ``examples`` keys that merge distinct contents, with one URL per content, so a reader
    sees what was merged wrongly."""
    key_of = safe(canonicalize)
    keys: dict[str, dict[str, str]] = {}  # key -> digest -> the first URL of that digest under it
    sizes: dict[str, int] = {}  # key -> URLs
    merged_fam = dict.fromkeys(FAMILIES, 0)
    dup_merged = 0
    for url, digest in urls.items():
        k = key_of(url)
        per = keys.setdefault(k, {})
        sizes[k] = sizes.get(k, 0) + 1
        if digest in per:  # an earlier URL of this content has this key
            dup_merged += 1
            if fams is not None:
                merged_fam[fams.get(url, "several")] += 1
        else:
            per[digest] = url
    saved = sum(n - 1 for n in sizes.values())
    merged = sum(len(per) - 1 for per in keys.values())
    out: dict = {"fetches_saved": saved, "contents_merged": merged, "duplicates_merged": dup_merged}
    if fams is not None:
        out["families"] = merged_fam
    wrong = [(k, per) for k, per in keys.items() if len(per) > 1][:examples]
    out["merged_examples"] = [{"key": k, "urls": list(per.values())[:4]} for k, per in wrong]
    return out


def whole_crawl(
    pairs: Iterable[tuple[str, str | None]],
    methods: Mapping[str, Callable[[str], str]],
    rules: Mapping[str, int] | None = None,
) -> dict:
    """The crawl's figures for every method (``name -> canonicalize``, in table order), as
    one JSON-able dict; ``rules`` gives the rule counts of the learning methods."""
    urls = distinct(pairs)
    fams = families(urls)
    per_fam = dict.fromkeys(FAMILIES, 0)
    for f in fams.values():
        per_fam[f] += 1
    rows = []
    for name, canon in methods.items():
        row = {"name": name, **score(urls, canon, fams)}
        if rules and name in rules:
            row["rules"] = rules[name]
        rows.append(row)
    return {
        "urls": len(urls),
        "contents": len(set(urls.values())),
        "ceiling": ceiling(urls),
        "families": per_fam,
        "methods": rows,
    }


def read_pairs(paths: Iterable[str], fmt: str | None = None) -> Iterable[tuple[str, str]]:
    """(url, digest) of every 2xx fetch in the files, in file order."""
    from ..events.readers import Rejected, read_events

    for ev in read_events(list(paths), fmt or "auto"):
        if not isinstance(ev, Rejected) and 200 <= ev.status < 300 and ev.digest:
            yield ev.url, ev.digest


# --------------------------------------------------------------------------- tables
def _n(v: int) -> str:
    return f"{v:,}"


def crawl_rows(crawl: dict) -> tuple[list[str], list[list[str]]]:
    """Header and text cells of one crawl's table (the markdown and the HTML share them):
    the ceiling first, then each method; per family, the duplicates it merges."""
    fams = [f for f in FAMILIES if crawl["families"][f]]
    cols = ["method", "rules", "fetches saved", "distinct contents merged", "duplicates merged"] + [
        f"{f} ({_n(crawl['families'][f])})" for f in fams
    ]
    rows = [["ceiling (duplicates by digest)", "–", _n(crawl["ceiling"]), "0", _n(crawl["ceiling"])]]
    rows[0] += [_n(crawl["families"][f]) for f in fams]
    for m in crawl["methods"]:
        rules = m.get("rules")
        rows.append(
            [
                m["name"],
                "–" if rules is None else _n(rules),
                _n(m["fetches_saved"]),
                _n(m["contents_merged"]),
                _n(m["duplicates_merged"]),
            ]
            + [_n(m["families"][f]) for f in fams]
        )
    return cols, rows


def markdown(crawl: dict) -> str:
    """The whole-crawl section of ``dustonline eval``'s table."""
    cols, rows = crawl_rows(crawl)
    head = (
        f"whole crawl, final rules: fetches saved / distinct contents merged, over {_n(crawl['urls'])} distinct "
        f"2xx URLs with a digest ({_n(crawl['contents'])} distinct digests); per family, duplicates merged"
    )
    lines = [head, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(rows_) + " |" for rows_ in rows]
    return "\n".join(lines)


def summary(reports: Mapping[str, dict], skipped: Iterable[str] = ()) -> str:
    """One row per crawl file (``name -> eval result`` with a ``crawl`` section): each method's
    fetches saved / distinct contents merged, with the ceiling."""
    names: list[str] = []
    for res in reports.values():
        for m in res["crawl"]["methods"]:
            if m["name"] not in names:
                names.append(m["name"])
    cols = ["file", "2xx URLs", "ceiling"] + names
    lines = [
        "Whole crawl, each method's final rules (static canonicalizers as they are) over the distinct 2xx URLs "
        "of each file, digests as the truth: **fetches saved / distinct contents merged**. The ceiling is the "
        "duplicates by digest (URLs - distinct digests): the most fetches a method can save merging nothing "
        "distinct. Written by scripts/eval.sh; see docs/evaluation.md.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for file, res in reports.items():
        c = res["crawl"]
        by = {m["name"]: m for m in c["methods"]}
        cells = [file, _n(c["urls"]), _n(c["ceiling"])]
        cells += [f"{_n(by[n]['fetches_saved'])} / {_n(by[n]['contents_merged'])}" if n in by else "–" for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    skipped = list(skipped)
    if skipped:
        lines += ["", "Not evaluated: " + "; ".join(skipped) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m dustonline.evaluation.realcrawl REPORT.json... [--skipped TEXT]...``: the
    summary table of several ``dustonline eval --report`` results, on standard output."""
    import argparse
    import json
    from pathlib import Path

    p = argparse.ArgumentParser(prog="python -m dustonline.evaluation.realcrawl", description=main.__doc__)
    p.add_argument("reports", nargs="*", metavar="REPORT.json", help="named by their directory (the input file)")
    p.add_argument("--skipped", action="append", default=[], metavar="TEXT", help="a file not evaluated, and why")
    a = p.parse_args(argv)
    reports = {}
    for f in a.reports:
        res = json.loads(Path(f).read_text())
        if "crawl" not in res:
            print(f"{f}: no whole-crawl section (evaluated with --truth?)", file=sys.stderr)
            return 1
        reports[Path(f).parent.name] = res
    sys.stdout.write(summary(reports, a.skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
