"""Parameter order: what alignment cannot express (Koppula et al.'s key-value view).

Alignment matches tokens in order, so ``?cat=a&item=7`` and ``?item=7&cat=a`` align
to "item is an optional token before or after cat", a rule that drops the page id and
fails validation. Here the query is a set of key=value pairs instead, and a dup-cluster
whose URLs list the same pairs in different orders is evidence that the order of those
keys does not matter. The canonical order is the sorted one: it depends on no arrival
order, so rule ids and outputs stay stable while evidence accumulates (and it is
surt's and w3lib's).

A permutation is expressible in the rule contract as an alternation, one branch per
order, each capturing keys and values; the transformation writes, per output position,
the references of every branch one after another, since a group that did not take part
in the match gives the empty string:
``\\?(?:(cat)=([a-z]+)&(item)=([0-9]+)|(item)=([0-9]+)&(cat)=([a-z]+))`` ->
``?$1$7=$2$8&$3$5=$4$6``. kvrules.py turns the evidence into candidates.
"""

from __future__ import annotations

from ..rules import params
from ..rules.params import BARE
from .induce import char_bits, class_for, escape

MAX_KEYS = 6  # key sets of up to six parameters (a CMS article: option, view, id, catid, Itemid)
MAX_ORDERS = 6  # orders of one key set kept in a rule (the most seen)


def query_pairs(url: str) -> list[tuple[str, str]] | None:
    """The query as (key, value) pairs, a bare key's value empty (the split of
    rules/params.py); None without a query or with a repeated key (its order may
    matter: ``a=1&a=2`` is a list)."""
    pairs = [(k, "" if v == BARE else v) for k, v in params.query_pairs(url)]
    if not pairs or len({k for k, _ in pairs}) != len(pairs):
        return None
    return pairs


def order_evidence(urls: list[str]) -> dict[tuple, list]:
    """Key sets (sorted) that two of ``urls`` list with equal non-empty values in
    different orders: {keys: [unsorted orders seen, value char bits per key]}."""
    parsed = [p for p in map(query_pairs, urls) if p is not None and len(p) >= 2]
    found: dict[tuple, list] = {}
    for i, a in enumerate(parsed):
        da = dict(a)
        for b in parsed[i + 1 :]:
            db = dict(b)
            common = {k for k, v in a if v and db.get(k) == v}
            if not 2 <= len(common) <= MAX_KEYS:
                continue
            oa = tuple(k for k, _ in a if k in common)
            ob = tuple(k for k, _ in b if k in common)
            if oa == ob:
                continue
            keys = tuple(sorted(common))
            ent = found.setdefault(keys, [set(), [0] * len(keys)])
            ent[0].update(o for o in (oa, ob) if o != keys)
            for j, k in enumerate(keys):
                ent[1][j] |= char_bits(da[k])
    return {k: [sorted(map(list, v[0])), v[1]] for k, v in found.items()}


def one_order(urls: list[str]) -> list[str]:
    """``urls`` without those that list two parameters in another order than a URL kept
    before them. Aligned token by token, two orders put one parameter's value under
    another's name: the rule writes names with their values dropped
    (``?Itemid=&option=``, a URL no site serves, for any values) or drops a page's id as
    an optional part. Order is learned here (``order_evidence``); the rest of such a
    cluster aligns in one order."""
    names = [[k for k, _ in params.query_pairs(u)] for u in urls]
    if sum(1 for n in names if len(n) >= 2) < 2:
        return urls  # most clusters: at most one URL with two parameters
    kept: list[int] = []
    for i, a in enumerate(names):
        if all(_same_order(a, names[j]) for j in kept):
            kept.append(i)
    return urls if len(kept) == len(urls) else [urls[i] for i in kept]


def _same_order(a: list[str], b: list[str]) -> bool:
    common = set(a) & set(b)
    if len(common) < 2:
        return True
    return [k for k in a if k in common] == [k for k in b if k in common]


def branch(keys, order, bits, group: int) -> tuple[str, list[int], list[int]]:
    """One order of a key set as a regex branch whose groups start after ``group``; per
    sorted key, the numbers of its key and value groups."""
    kref, vref = [0] * len(keys), [0] * len(keys)
    pieces = []
    for k in order:
        j = keys.index(k)
        kref[j], vref[j] = group + 1, group + 2
        group += 2
        pieces.append(f"({escape(k)})\\=({class_for(bits[j])})")
    return "\\&".join(pieces), kref, vref


def query_out(krefs: list[list[int]], vrefs: list[list[int]]) -> str:
    """Output position i: the key, then the value, of whichever branch matched."""
    return "&".join("".join(f"${g}" for g in k) + "=" + "".join(f"${g}" for g in v) for k, v in zip(krefs, vrefs))


def order_rule(keys: list[str], orders: list[list[str]], bits: list[int]) -> tuple[str, str]:
    """The permutation rule of one key set: any seen order -> sorted order, the rest of
    the URL kept. The sorted branch is in it so that pairs (sorted, other) count as its
    support."""
    branches: list[str] = []
    krefs: list[list[int]] = [[] for _ in keys]
    vrefs: list[list[int]] = [[] for _ in keys]
    g = 1
    for order in [keys] + [o for o in orders if o != keys]:
        rx, kr, vr = branch(keys, order, bits, g)
        g += 2 * len(keys)
        branches.append(rx)
        for j in range(len(keys)):
            krefs[j].append(kr[j])
            vrefs[j].append(vr[j])
    return "^([^?#]*)\\?(?:" + "|".join(branches) + ")$", "$1?" + query_out(krefs, vrefs)


_PAIR_KINDS = ("C", "T")


def split_query(parts: list[tuple]):
    """A candidate's parts as (parts up to and with the "?", [(key part, value part)],
    trailing optional parts), or None when its query is not a plain ``k=v&k=v`` of
    captured keys and values (only then can another order be written in its place)."""
    q = next((j for j, p in enumerate(parts) if p[0] == "L" and "?" in p[1]), None)
    if q is None:
        return None
    text = parts[q][1]
    if not text.endswith("?") or text.count("?") != 1:
        return None
    rest = parts[q + 1 :]
    pairs, i = [], 0
    while True:
        if i + 3 > len(rest):
            return None
        k, eq, v = rest[i], rest[i + 1], rest[i + 2]
        if k[0] not in _PAIR_KINDS or eq != ("L", "=") or v[0] not in _PAIR_KINDS or (k[0] == "C" and k[1]):
            return None
        pairs.append((k, v))
        i += 3
        if i < len(rest) and rest[i] == ("L", "&"):
            i += 1
            continue
        break
    tail = rest[i:]
    if any(p[0] != "O" for p in tail):
        return None
    return parts[: q + 1], pairs, tail
