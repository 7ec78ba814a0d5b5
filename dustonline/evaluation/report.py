"""The evaluation report: one self-contained HTML page (plots inlined as PNG, no server,
no scripts) and a JSON file with the same figures for machines.

One file that opens from a mail attachment or a CI artifact beats a dashboard nobody
deploys; matplotlib's Agg backend renders without a display.
"""

from __future__ import annotations

import base64
import html
import io
import json
from datetime import datetime, timezone
from pathlib import Path

_COLORS = {"online": "#1f6feb"}  # the online learner's blue, for its own plots

#: One colour per method, the same in every plot and report: a reader learns them once.
#: Red is left out: it marks losses, traps and drift.
METHOD_COLORS = {
    "online": "#1f6feb",
    "dustlin": "#9467bd",
    "duster": "#e377c2",
    "dustbuster": "#2ca02c",
    "replicas": "#8c564b",
    "koppula": "#ff7f0e",
    "patterntree": "#17becf",
    "w3lib": "#7f7f7f",
    "surt": "#bcbd22",
    "url-normalize": "#393b79",
    "none": "#c7c7c7",
}
#: for methods not listed above, in the order they appear
_SPARE_COLORS = ["#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#637939"]


def _lighter(color: str, share: float = 0.5) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(c + (255 - c) * share):02x}" for c in (r, g, b))


def method_colors(res: dict) -> dict[str, str]:
    """Each method of the result -> its colour: the fixed one, a frozen variant in a lighter
    shade of its learner's, and spare colours, not used by anything shown, for others."""
    names = [r["name"] for r in res["methods"]]
    out: dict[str, str] = {}
    for n in names:
        base = n.split(" (")[0]
        if n in METHOD_COLORS:
            out[n] = METHOD_COLORS[n]
        elif "frozen" in n and base in METHOD_COLORS:
            out[n] = _lighter(METHOD_COLORS[base])
    spare = [c for c in _SPARE_COLORS if c not in out.values()]
    for n in names:
        if n not in out:
            out[n] = spare.pop(0) if spare else _lighter(_SPARE_COLORS[len(out) % len(_SPARE_COLORS)], 0.3)
    return out


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("the report needs matplotlib: pip install 'dustonline[eval]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    fig.clf()
    return base64.b64encode(buf.getvalue()).decode()


def _legend_below(fig, ax, handles=None, labels=None, ncol: int = 4):
    """The legend under the figure, outside every axes, so it hides no bar, line or axis."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False, fontsize=8)


def _nan(v):
    return float("nan") if v is None else v


def _days(ts: float, t0: float) -> float:
    return (ts - t0) / 86400.0


def plot_over_time(res: dict) -> str:
    return _png(figure_over_time(res))


def figure_over_time(res: dict):
    plt = _plt()
    t0 = res["input"]["first_ts"]
    curve = res["curve"]
    x = [_days(p["ts"], t0) for p in curve]
    fig, ax = plt.subplots(figsize=(9, 3.9), layout="constrained")
    blue = method_colors(res).get(res["online"], _COLORS["online"])
    ax.plot(x, [_nan(p["coverage"]) for p in curve], color=blue, label="coverage, cumulative")
    ax.plot(
        x,
        [_nan(p["window_coverage"]) for p in curve],
        color=blue,
        alpha=0.45,
        linestyle="--",
        label="coverage, per window",
    )
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of duplicate URLs merged")
    ax.set_xlabel("event time (days from the first event)")
    ax2 = ax.twinx()
    ax2.step(x, [p["rules"] for p in curve], where="post", color="#57606a", label="active rules")
    ax2.set_ylabel("active rules")
    ax2.spines["right"].set_visible(True)
    ax.axvline(_days(res["tail"]["split_ts"], t0), color="black", linewidth=0.8)
    ax.text(_days(res["tail"]["split_ts"], t0), 0.02, " held-out tail", fontsize=8)
    for d in res.get("drift", []):
        ax.axvline(_days(d["drift_ts"], t0), color="#cf222e", linewidth=0.8, linestyle=":")
        ax.text(_days(d["drift_ts"], t0), 0.92, f" drift: {d['site']}", color="#cf222e", fontsize=8)
        for r in d["rules"]:
            if r["retired_ts"] is not None:
                ax.plot([_days(r["retired_ts"], t0)], [0.88], marker="v", color="#cf222e")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    _legend_below(fig, ax, lines[0] + lines2[0], lines[1] + lines2[1], ncol=3)
    ax.set_title(f"{res['online']}: rules and coverage over the replay (prequential)", loc="left")
    return fig


def plot_methods(res: dict) -> str:
    return _png(figure_methods(res))


def figure_methods(res: dict):
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    rows = [r for r in res["methods"] if "tail" in r]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 0.42 * len(rows) + 1.2), sharey=True)
    names = [r["name"] for r in rows][::-1]
    cov = [r["tail"]["coverage"] or 0.0 for r in rows][::-1]
    lost = [r["tail"]["lost"] for r in rows][::-1]
    palette = method_colors(res)
    colors = [palette[n] for n in names]
    a.barh(names, cov, color=colors)
    for y, v in enumerate(cov):
        a.text(v + 0.01, y, f"{v:.1%}", va="center", fontsize=8)
    a.set_xlim(0, 1.1)
    a.set_xlabel("saved: duplicate URLs merged (coverage)")
    b.barh(names, lost, color="#cf222e")
    for y, v in enumerate(lost):
        b.text(v, y, f" {v}", va="center", fontsize=8)
    b.set_xlabel("lost: distinct pages never fetched")
    b.set_xlim(0, max(lost + [1]) * 1.3)
    b.xaxis.set_major_locator(MaxNLocator(integer=True))  # pages are counted, not measured
    a.set_title(f"held-out tail: {res['tail']['urls']:,} URLs, {res['tail']['contents']:,} pages", loc="left")
    return fig


def plot_sites(res: dict) -> str:
    return _png(figure_sites(res))


def figure_sites(res: dict):
    plt = _plt()
    sites = res["sites"][:20]
    rows = [r for r in res["methods"] if "tail" in r and r["name"] != "none"]
    best_static = res.get("targets", {}).get("best_static")
    show = [r["name"] for r in rows if r["kind"] != "static" and "frozen" not in r["name"]]
    if best_static:
        show.append(best_static)
    palette = method_colors(res)
    fig, ax = plt.subplots(figsize=(9, 4.4), layout="constrained")
    w = 0.8 / max(1, len(show))
    for k, name in enumerate(show):
        xs = [i + k * w for i in range(len(sites))]
        ax.bar(xs, [s.get(name, {}).get("coverage") or 0.0 for s in sites], width=w, color=palette[name], label=name)
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(sites))])
    ax.set_xticklabels([s["site"] for s in sites], rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("coverage on the tail")
    _legend_below(fig, ax, ncol=min(len(show), 7))
    ax.set_title("per site: the sites with the most duplicate URLs in the tail", loc="left")
    return fig


def plot_kinds(res: dict) -> str:
    return _png(figure_kinds(res))


def figure_kinds(res: dict):
    """Alias families x methods: which DUST each method merges; traps: what it wrongly merges."""
    plt = _plt()
    rows = res["kinds"]
    methods = [r["name"] for r in res["methods"] if "tail" in r]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.4))
    import numpy as np

    grid = np.array([[r.get(m, 0.0) for m in methods] for r in rows])
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i, r in enumerate(rows):
        for j, m in enumerate(methods):
            v = r.get(m, 0.0)
            bad = r["kind"] == "trap" and v > 0
            ax.text(
                j,
                i,
                f"{v:.0%}",
                ha="center",
                va="center",
                fontsize=7,
                color="#cf222e" if bad else ("white" if v > 0.6 else "#1f2328"),
            )
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{'alias' if r['kind'] == 'alias' else 'TRAP'}: {r['name']} ({r['urls']:,})" for r in rows])
    ax.set_title("per DUST family: share merged with a true duplicate; per trap: share merged wrongly", loc="left")
    return fig


def plot_time_to_rule(res: dict) -> str:
    return _png(figure_time_to_rule(res))


def figure_time_to_rule(res: dict):
    plt = _plt()
    per = [p for p in res["time_to_rule"]["per_rule"] if p["events"] >= 0]
    fig, ax = plt.subplots(figsize=(4.4, 3.0))
    ax.hist([p["seconds"] / 3600 for p in per] or [0], bins=30, color=_COLORS["online"])
    ax.set_xlabel("hours of event time, first evidence -> valid rule")
    ax.set_ylabel("rules")
    ax.set_title("time to a valid rule", loc="left")
    return fig


# --------------------------------------------------------------------------- HTML
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px}
body{color:#1f2328;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.sub{color:#57606a;margin:0 0 16px} table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:right;vertical-align:top} th{background:#f6f8fa}
td.l,th.l{text-align:left} code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
img{max-width:100%} .ok{color:#1a7f37;font-weight:600} .no{color:#cf222e;font-weight:600}
.grid{display:flex;gap:16px;flex-wrap:wrap} .card{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px}
.big{font-size:20px;font-weight:600} .card{max-width:250px} .card .def{margin-top:4px}
.def{color:#57606a;font-size:12px;font-weight:400;line-height:1.3}
th .def{max-width:150px;margin-top:2px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
"""


def _e(s) -> str:
    return html.escape(str(s))


def _pc(v) -> str:
    return "–" if v is None else f"{v:.1%}"


def _num(v, fmt="{:,}") -> str:
    return "–" if v is None else fmt.format(v)


def _when(ts: float | None) -> str:
    return "–" if ts is None else datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M")


def _dur(s: float | None) -> str:
    if s is None:
        return "–"
    return f"{s / 3600:.1f} h" if s < 2 * 86400 else f"{s / 86400:.1f} d"


def headline_rows(res: dict) -> list[list[str]]:
    """The headline table as text cells (docs/eval tables and the HTML report share it)."""
    out = []
    for r in res["methods"]:
        if "tail" not in r:
            out.append([r["name"], r["kind"], "–", "–", "–", "–", "–", "–", "–", r.get("error", "")])
            continue
        t, a = r["tail"], r.get("all")
        out.append(
            [
                r["name"],
                r["kind"],
                _pc(t["coverage"]),
                str(t["lost"]),
                f"{t['np']:.4f}",
                _pc(t["compression"]),
                _num(r["rules"]),
                "–" if t.get("arr") is None else f"{t['arr']:.1f}",
                "–" if r.get("learn_seconds") is None else f"{r['learn_seconds']:.1f}",
                "–" if a is None else f"{_pc(a['coverage'])} / {a['lost']}",
            ]
        )
    return out


HEADLINE_COLS = [
    "method",
    "kind",
    "coverage",
    "lost",
    "NP",
    "compression",
    "rules",
    "AR/R",
    "seconds",
    "whole stream: coverage / lost",
]


#: one plain line per headline column, shown under its name (the Definitions section has
#: the exact formulas)
HEADLINE_DEFS = {
    "method": "what keys the URLs",
    "kind": "online: learns as it crawls; batch: learns once from the first part; static: fixed",
    "coverage": "duplicate URLs given the key of a page already fetched: fetches saved",
    "lost": "pages never fetched: a wrong key made them look seen",
    "NP": "URL pairs under one key that really are duplicates (1 = no wrong merge)",
    "compression": "fewer keys than URLs: 1 \u2212 keys / URLs",
    "rules": "rules in use at the end",
    "AR/R": "URLs saved per rule",
    "seconds": "time to learn",
    "whole stream: coverage / lost": "the same, over the whole replay from the first event",
}


def markdown_table(res: dict) -> str:
    """The headline table; with digests as the truth, the whole-crawl table after it."""
    lines = ["| " + " | ".join(HEADLINE_COLS) + " |", "|" + "---|" * len(HEADLINE_COLS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in headline_rows(res)]
    if res.get("crawl"):
        from .realcrawl import markdown

        lines += ["", markdown(res["crawl"])]
    return "\n".join(lines)


def _table(cols: list[str], rows: list[list[str]], left: int = 1, defs: dict[str, str] | None = None) -> str:
    """An HTML table; ``defs`` puts a plain-language line under each column's name."""
    head = "".join(
        f"<th{' class=l' if i < left else ''}>{_e(c)}"
        + (f"<div class=def>{_e(defs[c])}</div>" if defs and c in defs else "")
        + "</th>"
        for i, c in enumerate(cols)
    )
    body = "".join(
        "<tr>" + "".join(f"<td class=l>{c}</td>" if i < left else f"<td>{c}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _swatch(color: str) -> str:
    return f"<span class=sw style='background:{color}'></span>"


def _crawl_html(crawl: dict) -> str:
    """The whole-crawl table (realcrawl.py), with the keys that merge distinct contents."""
    from .realcrawl import FAMILY_DOC, crawl_rows

    cols, rows = crawl_rows(crawl)
    fams = "; ".join(f"<i>{_e(f)}</i>: {_e(d)}" for f, d in FAMILY_DOC.items() if crawl["families"].get(f))
    ex = []
    for m in crawl["methods"]:
        for x in m.get("merged_examples", ()):
            urls = "<br>".join(f"<code>{_e(u)}</code>" for u in x["urls"])
            ex.append([_e(m["name"]), f"<code>{_e(x['key'])}</code>", urls])
    more = ""
    if ex:
        more = (
            "<details><summary>Keys that merge distinct contents (the first ones of each method)</summary>"
            + _table(["method", "key", "URLs of distinct contents"], ex, 3)
            + "</details>"
        )
    return (
        f"<h2>Whole crawl, final rules</h2><p>Each online learner's final rules and each static canonicalizer "
        f"over all {crawl['urls']:,} distinct 2xx URLs ({crawl['contents']:,} distinct digests): <b>fetches "
        f"saved</b> (URLs &minus; keys) and <b>distinct contents merged</b> (per key, digests &minus; 1: pages "
        f"never fetched). Fetches saved = duplicates merged + contents merged; the ceiling is "
        f"{crawl['ceiling']:,} duplicates by digest. Per family (told from the URLs alone: {fams}), the "
        f"duplicates each method merges.</p>" + _table(cols, [[_e(c) for c in row] for row in rows]) + more
    )


def _card(title: str, value: str, definition: str) -> str:
    return f"<div class=card>{title}<div class=big>{value}</div><div class=def>{definition}</div></div>"


def _cards(res: dict) -> str:
    """The summary: the online learner on the tail, next to the batch learner and the best
    static canonicalizer when they ran; each figure with what it means in one line."""
    rows = {r["name"]: r for r in res["methods"] if "tail" in r}
    online = rows.get(res.get("online", ""))
    tg = res.get("targets") or {}
    cards = []
    if online is not None:
        t = online["tail"]
        cards.append(
            _card(
                f"{_e(online['name'])}: fetches saved",
                _pc(t["coverage"]),
                "of the duplicate URLs in the held-out tail got the key of a page already fetched "
                "(coverage), so the crawler skips them",
            )
        )
        cards.append(
            _card(
                f"{_e(online['name'])}: pages lost",
                f"{t['lost']:,}",
                "distinct pages never fetched, because a rule gave their URL the key of another page",
            )
        )
    if tg.get("coverage_vs_dustlin") is not None:
        cards.append(
            _card(
                "compared with batch DustLin",
                f"{_pc(tg['coverage_vs_dustlin'])} of its coverage",
                "DustLin learns once from the whole first part of the crawl; the online learner sees "
                f"each event once, as it comes. Pages lost: {tg['lost_online']:,} vs {tg['lost_dustlin']:,}",
            )
        )
    if tg.get("merges_vs_best_static") is not None:
        cards.append(
            _card(
                f"compared with {_e(tg['best_static'])}",
                f"{tg['merges_vs_best_static']:.2f}&times; the duplicates merged",
                f"{_e(tg['best_static'])} is the best fixed canonicalizer here: what a crawler does without learning",
            )
        )
    ttr = res.get("time_to_rule") or {}
    if ttr.get("median_events") is not None:
        cards.append(
            _card(
                "time to a rule, median",
                _dur(ttr["median_seconds"]),
                "crawl time from the first duplicate pair a rule explains to the rule being in use "
                f"({ttr['median_events']:,} events; 90% of rules within {_dur(ttr['p90_seconds'])})",
            )
        )
    return "<div class=grid>" + "".join(cards) + "</div>" if cards else ""


def render_html(res: dict, images: dict[str, str]) -> str:
    inp, tail = res["input"], res["tail"]
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>dustonline evaluation</title>"
        f"<style>{_CSS}</style></head><body>",
        "<h1>dustonline replay evaluation</h1>",
        f"<p class=sub>{inp['events']:,} events ({inp['rejected']:,} rejected), {inp['urls']:,} distinct URLs with "
        f"content, {inp['contents']:,} distinct pages, {inp['sites']:,} registered domains; "
        f"{_when(inp['first_ts'])} to {_when(inp['last_ts'])} UTC. Ground truth: {_e(inp['truth'])}. Sources: "
        f"{_e(', '.join(Path(s).name for s in inp['sources']))}</p>",
    ]
    parts.append(_cards(res))
    parts.append(
        f"<h2>All methods on the held-out tail</h2><p>The last {tail['share']:.0%} of events: "
        f"{tail['urls']:,} URLs first seen there, {tail['contents']:,} pages. Batch learners were "
        "trained on the events before it; the online learner keeps learning through it (and, frozen, "
        "stops at its start). <i>Whole stream</i> is the prequential replay from the first event.</p>"
    )
    palette = method_colors(res)
    rows = [[_swatch(palette[row[0]]) + _e(row[0])] + [_e(c) for c in row[1:]] for row in headline_rows(res)]
    parts.append(_table(HEADLINE_COLS, rows, left=2, defs=HEADLINE_DEFS))
    if res.get("crawl"):
        parts.append(_crawl_html(res["crawl"]))
    for key, title in (
        ("over_time", "Rules and coverage over time"),
        ("methods", "Savings and losses by method"),
        ("kinds", "By kind of DUST, and the traps"),
        ("sites", "Per site"),
        ("time_to_rule", "Time to a valid rule"),
    ):
        if key in images:
            parts.append(f"<h2>{title}</h2><img alt='{_e(title)}' src='data:image/png;base64,{images[key]}'>")
    if res.get("sites"):
        names = [r["name"] for r in res["methods"] if "tail" in r]
        rows = [
            [_e(s["site"]), f"{s['urls']:,}", f"{s['duplicates']:,}"]
            + [f"{_pc(s[n]['coverage'])} / {s[n]['lost']}" for n in names]
            for s in res["sites"]
        ]
        parts.append(
            "<details><summary>Per-site table (coverage / lost on the tail)</summary>"
            + _table(["site", "URLs", "duplicates"] + names, rows)
            + "</details>"
        )
    if res.get("top_rules"):
        rows = []
        for r in res["top_rules"]:
            ex = "<br>".join(f"<code>{_e(u)}</code>" for u in r["examples"])
            hosts = ", ".join(r["hosts"]) + (
                f" (+{r['n_hosts'] - len(r['hosts'])})" if r["n_hosts"] > len(r["hosts"]) else ""
            )
            rows.append(
                [
                    f"<code>{_e(r['id'])}</code><br>{_e(hosts)}",
                    f"{r['merged']:,}",
                    f"{r['support']:,}",
                    f"<code>{_e(r['context'])}</code><br>&rarr; <code>{_e(r['transformation'])}</code>",
                    f"<code>{_e(r['example_key'])}</code><br>&larr; {ex}",
                ]
            )
        parts.append(
            "<h2>Top rules, with URLs they merge</h2>"
            + _table(["rule, hosts", "merged", "support", "context → transformation", "key ← URLs"], rows, 5)
        )
    cl = res.get("clusters")
    if cl:
        rows = [
            [f"{c['size']:,}", f"{c['keys']:,}", "<br>".join(f"<code>{_e(u)}</code>" for u in c["urls"])]
            for c in cl["top"]
        ]
        parts.append(
            f"<h2>Duplicate clusters in the input</h2><p>{cl['count']:,} clusters of URLs with one content "
            f"({cl['urls']:,} URLs); the final rules give {cl['merged_whole']:,} of them a single key. "
            "The largest, with the number of keys the final rules leave them:</p>"
            + _table(["URLs", "keys", "URLs (first ones)"], rows, left=0)
        )
    if res.get("rules") is not None:
        rows = [
            [
                f"<code>{_e(r['id'])}</code>",
                _e(", ".join(r["hosts"][:4]) + (" ..." if len(r["hosts"]) > 4 else "")),
                f"{r['support']:,}",
                f"<code>{_e(r['context'])}</code><br>&rarr; <code>{_e(r['transformation'])}</code>",
            ]
            for r in res["rules"]
        ]
        parts.append(
            f"<details><summary>Rules active at the end ({len(rows)})</summary>"
            + _table(["rule", "hosts", "support", "context → transformation"], rows, 4)
            + "</details>"
        )
    if res.get("drift"):
        rows = []
        for d in res["drift"]:
            for r in d["rules"] or [
                {
                    "rule": "(no rule was active)",
                    "retired_ts": None,
                    "after_drift_seconds": None,
                    "after_drift_events": None,
                    "wrong_merges_after_drift": 0,
                }
            ]:
                rows.append(
                    [
                        _e(d["site"]),
                        _when(d["drift_ts"]),
                        _e(d["description"]),
                        f"<code>{_e(r['rule'])}</code>",
                        _when(r["retired_ts"]),
                        _dur(r["after_drift_seconds"]),
                        _num(r["after_drift_events"]),
                        f"{r['wrong_merges_after_drift']:,}",
                    ]
                )
        parts.append(
            "<h2>Concept drift</h2><p>Sites that changed their URL scheme mid-stream, the rules that "
            "held before, when the learner retired them, and the fetches they wrongly skipped meanwhile.</p>"
            + _table(
                ["site", "drift", "what changed", "rule", "retired", "after", "site URLs meanwhile", "wrong merges"],
                rows,
                3,
            )
        )
    if res.get("retirements"):
        rows = [
            [
                f"<code>{_e(r['rule'])}</code>",
                _when(r["active_ts"]),
                _when(r["retired_ts"]),
                _dur(r["active_seconds"]),
                f"{r['wrong_merges']:,}",
                f"{r['lost']:,}",
            ]
            for r in res["retirements"]
        ]
        parts.append(
            f"<details><summary>All {len(rows)} retired rules</summary>"
            + _table(["rule", "active", "retired", "active for", "wrong merges", "lost"], rows)
            + "</details>"
        )
    parts.append(
        "<h2>Definitions</h2><p>Over distinct URLs with content, in fetch order: <b>coverage</b> = URLs "
        "merged with a true duplicate / (URLs &minus; pages) (thesis Eq. 2.3, Lei's dup-reduction); "
        "<b>lost</b> = pages none of whose URLs is the first of its key, so a crawler never fetches them; "
        "<b>NP</b> = true-duplicate pairs / pairs under one key (Koppula); <b>compression</b> = 1 &minus; "
        "keys / URLs; <b>AR/R</b> = URLs &times; compression / rules (Koppula). Keys are assigned "
        "prequentially: a URL is keyed by the rules known before its own fetch.</p>"
    )
    parts.append(
        "<details><summary>Configuration</summary><pre>"
        + _e(json.dumps(res["config"], indent=1))
        + "</pre></details></body></html>"
    )
    return "\n".join(parts)


def write_report(res: dict, out_dir: str | Path) -> Path:
    """``out_dir``/index.html and ``out_dir``/report.json; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images = {}
    if res.get("curve"):
        images["over_time"] = plot_over_time(res)
    if any("tail" in r for r in res["methods"]):
        images["methods"] = plot_methods(res)
    if res.get("sites"):
        images["sites"] = plot_sites(res)
    if res.get("kinds"):
        images["kinds"] = plot_kinds(res)
    if res.get("time_to_rule", {}).get("per_rule"):
        images["time_to_rule"] = plot_time_to_rule(res)
    (out / "report.json").write_text(json.dumps({**res, "colors": method_colors(res)}, indent=1, sort_keys=True))
    page = out / "index.html"
    page.write_text(render_html(res, images))
    return page
