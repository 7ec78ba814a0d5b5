"""One key per page across a host's rules: re-targeting (learner.py, ``_retarget``).

Each rule is validated alone, but crawlers apply only the first rule that matches a URL
(rules.py). Two valid rules with different targets then split a page whose URLs fall
under both: on a site whose page has the forms ``story?id=7&page=1``, ``story_7.html``
and a ``print=1`` version, one rule keys the first two as ``story_7`` and another the
print form as ``story=7&page=1``. Each rule merges its own URLs; the page keeps two keys.

Koppula et al. avoid this by giving every URL of a dup-cluster one target. Here the
rules come one by one, so the target a page already has wins: the key older active rules
give it. For the validation URLs a rule decides, ``incumbent_keys`` finds the keys the
older rules alone give the URLs of their dup-clusters; the rule adopts that target
(adopt.py), and ``set_gain`` validates the *rule set* with the adopted rule: it must not
split any block of URLs the set keyed together, nor key together URLs of different
dup-clusters, and it must key together more duplicates than before.

Rules here are ``(id, CompiledRule)`` lists in the order crawlers try them on a host.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ..rules.ruleset import CompiledRule, decide
from ..rules.urls import host_of, light_normalize
from .validation import pairs

Rules = list[tuple[str, CompiledRule]]


def incumbent_keys(
    rid: str,
    hosts: Iterable[str],
    rules_on: Callable[[str], Rules],
    urls_on: Callable[[str], Iterable[tuple[str, str]]],
    older: Callable[[str], bool],
) -> tuple[list[tuple[str, str]], dict]:
    """The validation URLs rule ``rid`` decides on ``hosts`` as (url, cluster), and per
    cluster the keys the ``older`` rules alone give its URLs there (those the rule decides
    too: the keys they had before it came): {cluster: {key: (rule, url)}}, the smallest
    (rule, url) per key, so the answer does not depend on the order of ``urls_on`` ((url,
    cluster) pairs, as the host's rewrite rules read them)."""
    mine: list[tuple[str, str]] = []
    for h in hosts:
        rules = rules_on(h)
        ids = [i for i, _cr in rules]
        if rid not in ids:  # not tried on this host (a path edit there does what it does)
            continue
        at = ids.index(rid)
        r, before = rules[at][1], [cr for _i, cr in rules[:at]]
        for url, cid in urls_on(h):
            if r.apply(url) is None:  # apply, not fullmatch: a memo (memo.py) remembers it
                continue
            for cr in before:
                if cr.apply(url) is not None:
                    break
            else:
                mine.append((url, cid))
    want = {cid for _u, cid in mine}
    outs: dict[str, dict[str, tuple[str, str]]] = {}  # as ``held``, by the rules' raw output
    for h in hosts if mine else ():
        rules = [(i, cr) for i, cr in rules_on(h) if older(i)]
        for url, cid in urls_on(h) if rules else ():
            if cid not in want:
                continue
            for by, cr in rules:
                out = cr.apply(url)
                if out is not None:
                    got = outs.setdefault(cid, {})
                    if out not in got or (by, url) < got[out]:
                        got[out] = (by, url)
                    break
    held: dict[str, dict[str, tuple[str, str]]] = {}
    for cid, got in outs.items():
        keys = held[cid] = {}
        for out, by_url in got.items():
            key = light_normalize(out)
            if key not in keys or by_url < keys[key]:
                keys[key] = by_url
    return mine, held


def set_gain(urls: Iterable[tuple[str, str]], old: Callable[[str], Rules], new: Callable[[str], Rules]) -> int:
    """Pairs of same-cluster URLs the ``new`` rule set keys together beyond the ``old``
    one, over ``urls`` = (url, cluster id); -1 when ``new`` splits a block of ``old`` or
    keys together more URLs of different clusters (what validating the set means here)."""
    moved: dict[str, str] = {}
    old_blocks: Counter = Counter()
    old_pure: Counter = Counter()
    new_blocks: Counter = Counter()
    new_pure: Counter = Counter()
    on_host: dict[str, tuple[list, list | None]] = {}  # each host's two rule lists, built once
    for url, cid in urls:
        h = host_of(url)
        both = on_host.get(h)
        if both is None:
            o, n = [cr for _i, cr in old(h)], [cr for _i, cr in new(h)]
            both = on_host[h] = (o, None if n == o else n)  # None: the same rules there
        k_old = decide(url, both[0])[1]
        k_new = k_old if both[1] is None else decide(url, both[1])[1]
        if moved.setdefault(k_old, k_new) != k_new:
            return -1
        old_blocks[k_old] += 1
        old_pure[(k_old, cid)] += 1
        new_blocks[k_new] += 1
        new_pure[(k_new, cid)] += 1
    good_old = sum(pairs(n) for n in old_pure.values())
    good_new = sum(pairs(n) for n in new_pure.values())
    bad_old = sum(pairs(n) for n in old_blocks.values()) - good_old
    bad_new = sum(pairs(n) for n in new_blocks.values()) - good_new
    if bad_new > bad_old:
        return -1
    return good_new - good_old
