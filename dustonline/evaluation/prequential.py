"""Replay evaluation: how much crawling a method's rules save, and what they lose.

The stream is replayed in event-time order, prequentially: each distinct URL is keyed by
the rules known *before* its fetch teaches anything, as a crawler's frontier would key it
(``RuleSubscriber.seen``). A URL whose key was seen already is a fetch saved; if no URL of
that key had its content, the content may be lost. The seeds' metrics (metrics.py) are
kept incrementally along the way, so the curves cost nothing extra.

The last ``tail`` share of events is the held-out tail: batch learners are trained on the
prefix before it, static canonicalizers need no training, and every method keys the URLs
first seen in the tail, so one table compares them all on URLs none of them learned from.
The online learner appears twice there: still learning (as deployed), and frozen at the
end of the prefix (as the batch learners are).

Ground truth: a truth file (``dustonline generate``) maps URLs to content ids; without
one, the content digest of the URL's first 2xx fetch stands in for it (exact duplicates
only: near-duplicates such as print pages then count as distinct pages). Then the result
also scores the whole crawl with each online method's final rules and each static
canonicalizer (``crawl``, realcrawl.py): fetches saved and distinct contents merged.
"""

from __future__ import annotations

import gzip
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ..config import Config
from ..events.event import FetchEvent
from ..events.routing import site_key
from ..learner.protocol import Learner, LearnerBase
from ..rules.ruleset import ACTIVE, Rule, RuleSet
from ..rules.urls import host_of, light_normalize
from .methods import Method
from .metrics import KeyStats, Metrics, evaluate_keys


class Rec:
    """One distinct URL with content, as the prequential replay keyed it."""

    __slots__ = ("url", "truth", "i", "ts", "key", "rule", "outcome")

    def __init__(self, url, truth, i, ts, key, rule, outcome):
        self.url, self.truth, self.i, self.ts = url, truth, i, ts
        self.key, self.rule, self.outcome = key, rule, outcome


@dataclass
class Stream:
    events: list[FetchEvent]
    truth: dict[str, str] | None  # None: digests stand in for it
    rejected: int = 0
    sources: list[str] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # URL -> how the generator made it

    def truth_of(self, ev: FetchEvent) -> str | None:
        if not 200 <= ev.status < 300:
            return None
        if self.truth is not None:
            return self.truth.get(ev.url)
        return ev.digest or None


def load_truth(path: str | Path) -> tuple[dict[str, str], dict[str, str]]:
    """``{"url", "truth"[, "kind"]}`` lines (``dustonline generate``) -> URL -> content id, and
    URL -> kind (``main``, ``alias:www+slug``, ``trap:sort``...) where given; first line wins."""
    dec = msgspec.json.Decoder()
    opener = gzip.open if str(path).endswith(".gz") else open
    truth: dict[str, str] = {}
    kinds: dict[str, str] = {}
    with opener(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = dec.decode(line)
                url, t = rec["url"], str(rec["truth"])
            except (msgspec.DecodeError, KeyError, TypeError):
                raise ValueError(f'{path}:{n}: not a truth record (want {{"url": ..., "truth": ...}})') from None
            if url not in truth:
                truth[url] = t
                if "kind" in rec:
                    kinds[url] = rec["kind"]
    return truth, kinds


def load_stream(inputs: Iterable[str], cfg: Config, truth: str | Path | None = None, fmt: str | None = None) -> Stream:
    from ..events.readers import Rejected, read_events

    events, rejected = [], 0
    for item in read_events(list(inputs), fmt or cfg.input.format, cfg.input.max_url_length):
        if isinstance(item, Rejected):
            rejected += 1
        else:
            events.append(item)
    events.sort(key=lambda e: e.ts)  # stable: ties keep input order
    t, kinds = load_truth(truth) if truth else (None, {})
    return Stream(events, t, rejected, [str(p) for p in inputs], kinds)


def _m(m: Metrics | None) -> dict | None:
    return None if m is None else msgspec.to_builtins(m)


def _progress(total: int, desc: str, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=" ev", unit_scale=True, file=sys.stderr, mininterval=0.5, desc=desc)


# --------------------------------------------------------------------------- prequential
@dataclass
class Replay:
    records: list[Rec]
    final: RuleSet
    frozen: RuleSet  # the rules at the split (the end of the prefix)
    timeline: list[dict]  # every published change: i, ts, rule, status, version
    curve: list[dict]
    learn_seconds: float
    summary: dict


def prequential(stream: Stream, learner: Learner, split_i: int, points: int = 60, progress: bool = False) -> Replay:
    events = stream.events
    rs = RuleSet()
    frozen = None
    ks = KeyStats()
    seen: set[str] = set()
    records: list[Rec] = []
    timeline: list[dict] = []
    curve: list[dict] = []
    step = max(1, len(events) // points)
    last = (0, 0, 0)  # correct merges, urls, contents at the previous curve point
    learn_s = 0.0
    clock = time.perf_counter
    bar = _progress(len(events), "prequential", progress)

    def apply(changes, i, ts):
        for r in changes:
            if rs.upsert(r):
                timeline.append(
                    {"i": i, "ts": ts, "rule": r.id, "status": r.status, "version": r.version, "hosts": len(r.hosts)}
                )

    for i, ev in enumerate(events):
        if i == split_i:
            frozen = RuleSet(rs.rules())
        t = stream.truth_of(ev)
        if t is not None and ev.url not in seen:
            seen.add(ev.url)
            rule, key = rs.explain(ev.url)
            records.append(Rec(ev.url, t, i, ev.ts, key, None if rule is None else rule.id, ks.add(key, t)))
        t0 = clock()
        changes = learner.learn_one(ev)
        learn_s += clock() - t0
        if changes:
            apply(changes, i, ev.ts)
        if (i + 1) % step == 0 or i + 1 == len(events):
            m = ks.metrics()
            dup = (ks.n - len(ks.contents)) - (last[1] - last[2])
            curve.append(
                {
                    "i": i + 1,
                    "ts": ev.ts,
                    "rules": len(rs),
                    "urls": m.urls,
                    "coverage": m.coverage,
                    "compression": m.compression,
                    "lost": m.lost,
                    "np": m.np,
                    "window_coverage": (ks.correct - last[0]) / dup if dup > 0 else None,
                }
            )
            last = (ks.correct, ks.n, len(ks.contents))
        if bar is not None and (i & 1023) == 0:
            bar.update(i + 1 - bar.n)
    if bar is not None:
        bar.close()
    t0 = clock()
    end = learner.flush()
    learn_s += clock() - t0
    apply(end, len(events), events[-1].ts if events else 0.0)
    return Replay(
        records, rs, frozen if frozen is not None else RuleSet(rs.rules()), timeline, curve, learn_s, learner.summary()
    )


# --------------------------------------------------------------------------- rule timings
def rule_spans(timeline: list[dict]) -> dict[str, dict]:
    """Per rule: first activation and the first retirement after it (event index and time)."""
    spans: dict[str, dict] = {}
    for ch in timeline:
        s = spans.get(ch["rule"])
        if ch["status"] == ACTIVE:
            if s is None:
                spans[ch["rule"]] = {"active_i": ch["i"], "active_ts": ch["ts"], "retired_i": None, "retired_ts": None}
        elif s is not None and s["retired_i"] is None:
            s["retired_i"], s["retired_ts"] = ch["i"], ch["ts"]
    return spans


def first_evidence(records: list[Rec], rules: dict[str, Rule]) -> dict[str, Rec]:
    """Per rule: the URL whose fetch first made the rule useful: the second URL of the first
    true-duplicate pair that the rule maps to one key, at least one of them rewritten by it
    (a pair that light normalization merges alone is no evidence for the rule)."""
    by_host: dict[str, list[Rec]] = {}
    for r in records:
        by_host.setdefault(host_of(r.url), []).append(r)
    out: dict[str, Rec] = {}
    for rid in sorted(rules):
        rule = rules[rid]
        cr = rule.compile()
        recs = sorted((r for h in {h.lower() for h in rule.hosts} for r in by_host.get(h, ())), key=lambda r: r.i)
        keys: dict[str, dict[str, bool]] = {}
        for r in recs:
            k = cr.apply(r.url)
            rewritten = k is not None
            seen = keys.setdefault(light_normalize(k if k is not None else r.url), {})
            if r.truth in seen and (rewritten or seen[r.truth]):
                out[rid] = r
                break
            seen[r.truth] = seen.get(r.truth, False) or rewritten
    return out


def time_to_rule(records: list[Rec], timeline: list[dict], first_rules: dict[str, Rule]) -> dict:
    """Event time and events from a rule's first evidence on its hosts to its activation.
    A rule generalized across sites can become valid before its own hosts show evidence:
    those are counted apart, not as negative delays."""
    spans = rule_spans(timeline)
    ev = first_evidence(records, first_rules)
    secs, events, early, per_rule = [], [], 0, []
    for rid, s in sorted(spans.items()):
        e = ev.get(rid)
        if e is None:
            continue
        d_s, d_i = s["active_ts"] - e.ts, s["active_i"] - e.i
        per_rule.append(
            {
                "rule": rid,
                "evidence_ts": e.ts,
                "evidence_url": e.url,
                "active_ts": s["active_ts"],
                "seconds": d_s,
                "events": d_i,
            }
        )
        if d_i < 0:
            early += 1
        else:
            secs.append(d_s)
            events.append(d_i)
    return {
        "rules": len(per_rule),
        "before_local_evidence": early,
        "median_seconds": _pct(secs, 0.5),
        "p90_seconds": _pct(secs, 0.9),
        "median_events": _pct(events, 0.5),
        "p90_events": _pct(events, 0.9),
        "per_rule": per_rule,
    }


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def retirements(replay: Replay) -> list[dict]:
    """Rules that were active and then retired, with what they cost while active: URLs they
    keyed onto another page's key (fetches wrongly skipped) and contents never fetched."""
    spans = rule_spans(replay.timeline)
    wrong: dict[str, int] = {}
    lost_truths: dict[str, set] = {}
    fetched = {r.truth for r in replay.records if r.outcome is None}
    for r in replay.records:
        if r.rule is not None and r.outcome is False:
            wrong[r.rule] = wrong.get(r.rule, 0) + 1
            if r.truth not in fetched:
                lost_truths.setdefault(r.rule, set()).add(r.truth)
    out = []
    for rid, s in sorted(spans.items(), key=lambda kv: (kv[1]["retired_i"] or 0, kv[0])):
        if s["retired_i"] is None:
            continue
        out.append(
            {
                "rule": rid,
                **s,
                "active_seconds": s["retired_ts"] - s["active_ts"],
                "wrong_merges": wrong.get(rid, 0),
                "lost": len(lost_truths.get(rid, ())),
            }
        )
    return out


def drift_report(layout: list[dict] | None, replay: Replay, rules: dict[str, Rule]) -> list[dict]:
    """For each drifting site of a generated stream's layout: its rules retired after the
    drift, how long after, and what they cost between the drift and their retirement."""
    if not layout:
        return []
    spans = rule_spans(replay.timeline)
    out = []
    for site in layout:
        d = site.get("drift")
        if not d:
            continue
        hosts = {h.lower() for h in site.get("hosts", ())}
        t = d["drift_ts"]
        hit = []
        for rid, s in sorted(spans.items()):
            if (
                not hosts & {h.lower() for h in rules[rid].hosts}
                or s["active_ts"] > t
                or (s["retired_ts"] is not None and s["retired_ts"] < t)
            ):
                continue  # only the rules that held when the site changed
            wrong = sum(1 for r in replay.records if r.rule == rid and r.outcome is False and r.ts >= t)
            hit.append(
                {
                    "rule": rid,
                    "retired_ts": s["retired_ts"],
                    "after_drift_seconds": None if s["retired_ts"] is None else s["retired_ts"] - t,
                    "after_drift_events": None
                    if s["retired_i"] is None
                    else sum(1 for r in replay.records if t <= r.ts < s["retired_ts"] and host_of(r.url) in hosts),
                    "wrong_merges_after_drift": wrong,
                }
            )
        out.append({"site": site.get("site"), "drift_ts": t, "description": d.get("description", ""), "rules": hit})
    return out


# --------------------------------------------------------------------------- the evaluation
def _safe(canon: Callable[[str], str]) -> tuple[Callable[[str], str], list[str]]:
    errors: list[str] = []

    def f(url: str) -> str:
        try:
            return canon(url) or url
        except Exception as e:  # noqa: BLE001 - a library that chokes on a URL keeps it as its own key
            errors.append(f"{url}: {type(e).__name__}: {e}")
            return url

    return f, errors


def _site_table(tail: list[Rec], keyed: dict[str, list[str]], top: int) -> list[dict]:
    """Per site (registered domain), each method's coverage and lost on the tail."""
    sites: dict[str, list[int]] = {}
    for j, r in enumerate(tail):
        sites.setdefault(site_key(r.url).decode(), []).append(j)
    rows: list[dict] = []
    for site, idx in sites.items():
        dups = len(idx) - len({tail[j].truth for j in idx})
        row = {"site": site, "urls": len(idx), "duplicates": dups}
        for name, keys in keyed.items():
            m = evaluate_keys((keys[j], tail[j].truth) for j in idx)
            row[name] = {"coverage": m.coverage, "lost": m.lost, "compression": m.compression}
        rows.append(row)
    rows.sort(key=lambda r: (-r["duplicates"], r["site"]))
    return rows[:top]


def by_kind(kinds: list[str | None], truths: list[str], outcomes: dict[str, list]) -> list[dict]:
    """Per alias family: of its URLs whose page already had a URL in the set (so a merge
    was possible), the share each method merged with a true duplicate; per trap: the share
    of its URLs each method merged with a different page (wrongly). Needs the generator's
    labels (truth lines with ``kind``); [] without them."""
    if not any(kinds):
        return []
    groups: dict[tuple[str, str], list[int]] = {}
    seen: set[str] = set()
    for j, k in enumerate(kinds):
        mergeable = truths[j] in seen
        seen.add(truths[j])
        if not k:
            continue
        head, _, rest = k.partition(":")
        if head == "alias" and mergeable:
            for fam in rest.split("+"):
                groups.setdefault(("alias", fam), []).append(j)
        elif head == "trap":
            groups.setdefault(("trap", rest), []).append(j)
    out = []
    for (what, name), idx in sorted(groups.items()):
        want = what == "alias"
        row = {"kind": what, "name": name, "urls": len(idx)}
        for method, oc in outcomes.items():
            row[method] = sum(1 for j in idx if oc[j] is want) / len(idx)
        out.append(row)
    return out


def clusters(records: list[Rec], final: RuleSet, n: int = 15, urls: int = 6) -> dict:
    """The input's duplicate clusters (URLs of one content), largest first, each with the
    keys the final rules give its URLs: one key means the rules merge it whole."""
    groups: dict[str, list[Rec]] = {}
    for r in records:
        groups.setdefault(r.truth, []).append(r)
    dups = sorted((g for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g[0].i))
    merged = sum(1 for g in dups if len({final.canonicalize(r.url) for r in g}) == 1)
    top = []
    for g in dups[:n]:
        keys = {final.canonicalize(r.url) for r in g}
        top.append({"size": len(g), "keys": len(keys), "urls": [r.url for r in g[:urls]]})
    return {"count": len(dups), "urls": sum(len(g) for g in dups), "merged_whole": merged, "top": top}


def top_rules(replay: Replay, n: int = 12, examples: int = 4) -> list[dict]:
    """The final rules that merged the most duplicates, each with its largest merged key."""
    groups: dict[str, dict[str, list[Rec]]] = {}
    merged: dict[str, int] = {}
    for r in replay.records:
        if r.rule is not None:
            groups.setdefault(r.rule, {}).setdefault(r.key, []).append(r)
            if r.outcome:
                merged[r.rule] = merged.get(r.rule, 0) + 1
    out: list[dict] = []
    for rule in replay.final.rules():
        if rule.id not in groups:
            continue
        key, recs = max(groups[rule.id].items(), key=lambda kv: (len(kv[1]), kv[0]))
        out.append(
            {
                "id": rule.id,
                "hosts": rule.hosts[:5],
                "n_hosts": len(rule.hosts),
                "context": rule.context,
                "transformation": rule.transformation,
                "support": rule.support,
                "merged": merged.get(rule.id, 0),
                "example_key": key,
                "examples": [r.url for r in recs[:examples]],
            }
        )
    out.sort(key=lambda d: (-d["merged"], d["id"]))
    return out[:n]


def run(
    stream: Stream,
    cfg: Config,
    methods: list[Method],
    tail: float = 0.2,
    layout: list[dict] | None = None,
    points: int = 60,
    progress: bool = True,
    top_sites: int = 25,
) -> dict:
    """The whole evaluation as one JSON-able dict (report.py draws it)."""
    if not 0.0 < tail < 1.0:
        raise ValueError(f"tail must be between 0 and 1 (a share of the events), got {tail}")
    events = stream.events
    if not events:
        raise ValueError("no events to evaluate")
    split_i = int(len(events) * (1.0 - tail))
    split_ts = events[split_i].ts if split_i < len(events) else events[-1].ts
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)

    online = [m for m in methods if m.kind == "online"]
    # the reference replay keys every URL; without an online method it runs a learner
    # that learns nothing, so the same records (and the tail) exist for every method
    ref_method = online[0] if online else None
    replays: dict[str, Replay] = {}
    first_rules: dict[str, dict[str, Rule]] = {}
    runs: Sequence[Method | None] = online or [None]
    for m in runs:
        learner = m.make(cfg) if m else _Nothing()
        say(f"replaying {len(events):,} events prequentially through {m.name if m else 'no learner'} ...")
        firsts: dict[str, Rule] = {}
        wrapped = _Recording(learner, firsts)
        replays[m.name if m else ""] = prequential(stream, wrapped, split_i, points, progress)
        first_rules[m.name if m else ""] = firsts
        learner.close()
    ref = replays[ref_method.name if ref_method else ""]
    recs = ref.records
    tail_recs = [r for r in recs if r.i >= split_i]
    tail_truth = [r.truth for r in tail_recs]

    rows: list[dict] = []
    tail_keys: dict[str, list[str]] = {}
    tail_outcomes: dict[str, list] = {}

    def row(name, kind, doc, n_rules, all_m, tail_k, secs, extra=None):
        ks = KeyStats()
        tail_outcomes[name] = [ks.add(k, t) for k, t in zip(tail_k, tail_truth)]
        tm = ks.metrics(n_rules or None)
        tail_keys[name] = tail_k
        rows.append(
            {
                "name": name,
                "kind": kind,
                "doc": doc,
                "rules": n_rules,
                "learn_seconds": secs,
                "all": _m(all_m),
                "tail": _m(tm),
                **(extra or {}),
            }
        )

    for m in online:
        rp = replays[m.name]
        ks = KeyStats()
        for r in rp.records:
            ks.add(r.key, r.truth)
        t_keys = [r.key for r in rp.records if r.i >= split_i]
        row(m.name, "online", m.doc, len(rp.final), ks.metrics(len(rp.final) or None), t_keys, rp.learn_seconds)
        fz = rp.frozen
        row(
            f"{m.name} (frozen at split)",
            "online",
            f"{m.name}'s rules at the end of the prefix, not learning on",
            len(fz),
            None,
            [fz.canonicalize(r.url) for r in tail_recs],
            None,
        )
    prefix = events[:split_i]
    for m in (m for m in methods if m.kind == "batch"):
        say(f"training {m.name} on the prefix ({len(prefix):,} events) ...")
        t0 = time.perf_counter()
        learner = m.make(cfg)
        learner.learn_many(prefix)
        rules = learner.rules()
        secs = time.perf_counter() - t0
        rs = RuleSet(rules)
        learner.close()
        row(m.name, "batch", m.doc, len(rs), None, [rs.canonicalize(r.url) for r in tail_recs], secs)
    for m in (m for m in methods if m.kind == "static"):
        try:
            canon = m.make()
        except ImportError as e:
            rows.append(
                {
                    "name": m.name,
                    "kind": "static",
                    "doc": m.doc,
                    "error": f"not installed ({e.name}): pip install 'dustonline[eval]'",
                }
            )
            continue
        f, errors = _safe(canon)
        t0 = time.perf_counter()
        all_m = evaluate_keys((f(r.url), r.truth) for r in recs)
        secs = time.perf_counter() - t0
        row(
            m.name,
            "static",
            m.doc,
            0,
            all_m,
            [f(r.url) for r in tail_recs],
            secs,
            {"url_errors": len(errors), "url_error_examples": errors[:3]},
        )

    result = {
        "input": {
            "sources": stream.sources,
            "events": len(events),
            "rejected": stream.rejected,
            "urls": len(recs),
            "contents": len({r.truth for r in recs}),
            "sites": len({site_key(r.url) for r in recs}),
            "truth": "truth file" if stream.truth is not None else "content digest (exact duplicates)",
            "first_ts": events[0].ts,
            "last_ts": events[-1].ts,
        },
        "tail": {
            "share": tail,
            "split_index": split_i,
            "split_ts": split_ts,
            "urls": len(tail_recs),
            "contents": len(set(tail_truth)),
        },
        "config": cfg.to_dict(),
        "methods": rows,
        "sites": _site_table(tail_recs, tail_keys, top_sites),
        "kinds": by_kind([stream.kinds.get(r.url) for r in tail_recs], tail_truth, tail_outcomes),
    }
    if stream.truth is None:
        result["crawl"] = _whole_crawl(recs, replays, online, methods)
    if ref_method is not None:
        rules_seen = first_rules[ref_method.name]
        result.update(
            {
                "online": ref_method.name,
                "curve": ref.curve,
                "summary": ref.summary,
                "rule_changes": len(ref.timeline),
                "time_to_rule": time_to_rule(recs, ref.timeline, rules_seen),
                "retirements": retirements(ref),
                "drift": drift_report(layout, ref, rules_seen),
                "top_rules": top_rules(ref),
                "clusters": clusters(recs, ref.final),
                "rules": [msgspec.to_builtins(r) for r in ref.final.rules()[:100]],
            }
        )
        result["targets"] = targets(rows, ref_method.name)
    return result


def _whole_crawl(recs: list[Rec], replays: dict[str, Replay], online: list[Method], methods: list[Method]) -> dict:
    """Each online method's final rules and each static canonicalizer over every URL of the
    stream, digests as truth (realcrawl.py): what the rules would save on the next crawl of
    the same sites. Batch methods are left out: their rules saw only the prefix."""
    from .realcrawl import whole_crawl

    canons: dict[str, Callable[[str], str]] = {m.name: replays[m.name].final.canonicalize for m in online}
    for m in methods:
        if m.kind == "static":
            try:
                canons[m.name] = m.make()
            except ImportError:
                continue  # reported in the methods table
    n_rules = {m.name: len(replays[m.name].final) for m in online}
    return whole_crawl(((r.url, r.truth) for r in recs), canons, n_rules)


def targets(rows: list[dict], online: str) -> dict:
    """The issue's bar on the tail: >= 95% of batch DustLin's coverage with no more lost
    contents, and >= 2x the correct merges of the best static canonicalizer."""
    by = {r["name"]: r for r in rows if "tail" in r}
    out: dict = {}
    o = by.get(online)
    if o is None:
        return out
    ot = o["tail"]
    if "dustlin" in by:
        d = by["dustlin"]["tail"]
        out["coverage_vs_dustlin"] = (
            ot["coverage"] / d["coverage"] if d["coverage"] and ot["coverage"] is not None else None
        )
        out["lost_online"], out["lost_dustlin"] = ot["lost"], d["lost"]
        out["dustlin_met"] = (out["coverage_vs_dustlin"] or 0) >= 0.95 and ot["lost"] <= d["lost"]
    statics = [r for r in rows if r.get("kind") == "static" and "tail" in r and r["name"] != "none"]
    if statics:
        best = max(statics, key=lambda r: r["tail"]["coverage"] or 0.0)
        out["best_static"] = best["name"]
        bc, oc = best["tail"]["coverage"], ot["coverage"]
        if bc is not None and oc is not None:  # None: the tail has no duplicates
            out["merges_vs_best_static"] = oc / bc if bc else None
            out["static_met"] = bc == 0 or oc >= 2 * bc
    return out


class _Nothing(LearnerBase):
    """A learner that learns nothing (the reference replay when no online method runs)."""

    def learn_one(self, ev):
        return []

    def rules(self):
        return []


class _Recording(LearnerBase):
    """Passes a learner through, keeping each rule as first published (its hosts then)."""

    def __init__(self, learner: Learner, firsts: dict):
        self.learner, self.firsts = learner, firsts

    def learn_one(self, ev):
        out = self.learner.learn_one(ev)
        if out:
            self._keep(out)
        return out

    def learn_many(self, events):
        out = self.learner.learn_many(events)
        self._keep(out)
        return out

    def flush(self):
        out = self.learner.flush()
        self._keep(out)
        return out

    def _keep(self, out):
        for r in out:
            if r.status == ACTIVE and r.id not in self.firsts:
                self.firsts[r.id] = r

    def rules(self):
        return self.learner.rules()

    def summary(self):
        return self.learner.summary()

    def close(self):
        self.learner.close()
