"""Parameter-order rules: what alignment cannot express (Koppula et al.'s key-value view).

Alignment matches tokens in order, so ``?cat=a&item=7`` and ``?item=7&cat=a`` align
to "item is an optional token before or after cat", a rule that drops the page id and
fails validation. Here a permutation is learned in Koppula's terms instead: the query
is a set of key=value pairs, and a dup-cluster whose URLs list the same pairs in
different orders is evidence that, on its hosts, the order of those keys does not
matter. The canonical order is the sorted one: it depends on no arrival order, so rule
ids and outputs stay stable while evidence accumulates (and it is surt's and w3lib's).

A permutation is expressible in the rule contract as an alternation, one branch per
order, each capturing keys and values; the transformation writes, per output position,
the references of every branch one after another, since a group that did not take part
in the match gives the empty string:
``\\?(?:(cat)=([a-z]+)&(item)=([0-9]+)|(item)=([0-9]+)&(cat)=([a-z]+))`` ->
``?$1$7=$2$8&$3$5=$4$6``.

Two kinds of candidates, validated (support, fpr, min_freq, retirement) like any other:
1. a *permutation rule* per key set, from the evidence of every cluster that showed it
   (``standalone``): it rewrites exactly that key set to sorted order on the hosts
   that showed it. It proves the permutation on validation clusters: where order does
   matter (distinct pages), its fpr rises and nothing else is derived from it.
2. *permuted variants* (``variant``): rules do not chain (first match wins, by support),
   so a permutation rule alone is shadowed by the host's aligned rule (which drops the
   session path or www, and keeps the order). Once a permutation rule is valid, every
   aligned candidate on its hosts whose query is ``k=v&...`` with as many pairs gets
   a variant: the same rule with the seen orders tried first and written in sorted
   order. It matches what its rule matches, merges more, so it outranks it and makes
   it redundant (Alg. 6) without any change to rule order.

State: per cluster its evidence (``ClusterRec.perm``), per key set the sum over
clusters (store table ``perm``, keyed like the group ids, ``perm:`` + keys), and which
permutations variants were derived from (``used``), so a restarted learner derives the
same variants.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

import mmh3

from .generalize import Candidate
from .rulegen import AmbiguousRule, char_bits, class_for, escape, render
from .rules import parse_transformation

if TYPE_CHECKING:
    from .learner import OnlineLearner

PREFIX = "perm:"
MAX_KEYS = 4        # at most 4! = 24 orders of one key set in one alternation
MAX_ORDERS = 6      # orders of one key set kept in a rule (the most seen first)


# ---------------------------------------------------------------- evidence
def query_pairs(url: str) -> list[tuple[str, str]] | None:
    """The query as (key, value) pairs; None without a query or with a repeated key (its
    order may matter: ``a=1&a=2`` is a list)."""
    q = url.find("?")
    if q < 0:
        return None
    query = url[q + 1:].split("#", 1)[0]
    pairs = [p.partition("=")[::2] for p in query.split("&")]
    if len({k for k, _ in pairs}) != len(pairs):
        return None
    return pairs


def evidence(urls: Iterable[str]) -> list | None:
    """What one dup-cluster says about parameter order: ``[[keys, orders, bits], ...]``
    per key set (sorted keys) that two of its URLs list with equal non-empty values in
    different orders; ``orders`` are the unsorted orders seen, ``bits`` the values'
    character classes per key (rulegen.char_bits). None: nothing."""
    parsed = [p for p in map(query_pairs, urls) if p is not None and len(p) >= 2]
    if len(parsed) < 2:
        return None
    found: dict[tuple, list] = {}
    for i, a in enumerate(parsed):
        da = dict(a)
        for b in parsed[i + 1:]:
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
    if not found:
        return None
    return [[list(k), sorted(map(list, found[k][0])), found[k][1]] for k in sorted(found)]


def _key(keys) -> str:
    return "\x1f".join(keys)


def perm_id(key: str) -> str:
    return "r-%012x" % (mmh3.hash64("perm\x1d" + key, signed=False)[0] >> 16)


def variant_id(rid: str) -> str:
    return "r-%012x" % (mmh3.hash64(rid + "\x1dperm", signed=False)[0] >> 16)


# ---------------------------------------------------------------- rendering
def _branch(keys, order, bits, group: int) -> tuple[str, list[int], list[int]]:
    """One order of a key set as a regex branch; per sorted key its key and value group."""
    kref, vref = [0] * len(keys), [0] * len(keys)
    pieces = []
    for k in order:
        j = keys.index(k)
        kref[j], vref[j] = group + 1, group + 2
        group += 2
        pieces.append(f"({escape(k)})\\=({class_for(bits[j])})")
    return "\\&".join(pieces), kref, vref


def _query_out(krefs: list[list[int]], vrefs: list[list[int]]) -> str:
    """Output position i: the key, then the value, of whichever branch matched."""
    return "&".join("".join(f"${g}" for g in k) + "=" + "".join(f"${g}" for g in v)
                    for k, v in zip(krefs, vrefs))


def _orders(perm) -> list[list[str]]:
    keys, orders, _bits = perm
    return [o for o in orders if o != keys]


def standalone(keys: list[str], orders: list[list[str]], bits: list[int]) -> tuple[str, str]:
    """The permutation rule of one key set: any seen order -> sorted order, the rest of
    the URL kept. The sorted branch is in it so that pairs (sorted, other) count as its
    support."""
    branches, krefs, vrefs, g = [], [[] for _ in keys], [[] for _ in keys], 1
    for order in [keys] + [o for o in orders if o != keys]:
        rx, kr, vr = _branch(keys, order, bits, g)
        g += 2 * len(keys)
        branches.append(rx)
        for j in range(len(keys)):
            krefs[j].append(kr[j])
            vrefs[j].append(vr[j])
    return "^([^?#]*)\\?(?:" + "|".join(branches) + ")$", "$1?" + _query_out(krefs, vrefs)


_PAIR_KINDS = ("C", "T")


def _split_query(parts: list[tuple]):
    """(prefix parts ending with "?", [(key part, value part)], trailing optional parts),
    or None when the query is not a plain ``k=v&k=v`` of captured keys and values."""
    for q, p in enumerate(parts):
        if p[0] == "L" and "?" in p[1]:
            break
    else:
        return None
    text = parts[q][1]
    if not text.endswith("?") or text.count("?") != 1:
        return None
    rest = parts[q + 1:]
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
    return parts[:q + 1], pairs, tail


def _piece(part: tuple, card_set: int) -> str:
    """One part's context regex, as rulegen.render writes it."""
    return render([part], card_set)[0][1:-1]


def variant(parts: list[tuple], perms: list, card_set: int) -> tuple[str, str] | None:
    """A candidate's rule with ``perms`` (``[keys, orders, bits]``, valid permutations of
    its hosts) folded in: the query becomes ``(?:seen orders...|the rule's own query)``
    and every branch writes sorted order. None when no permutation fits the query."""
    split = _split_query(parts)
    if split is None:
        return None
    prefix, pairs, tail = split
    n = len(pairs)
    keyres = [re.compile(_piece(k, card_set)) for k, _ in pairs]
    fits = [p for p in perms if len(p[0]) == n and _orders(p)
            and all(rx.fullmatch(k) for k in p[0] for rx in keyres)]
    if not fits:
        return None
    try:
        pre_ctx, pre_out = render(prefix, card_set)
    except AmbiguousRule:
        return None
    pre_ctx = pre_ctx[1:-1]
    g = re.compile(pre_ctx).groups
    branches, krefs, vrefs = [], [[] for _ in range(n)], [[] for _ in range(n)]
    for keys, orders, bits in sorted(fits):
        for order in orders:
            if order == keys:
                continue
            rx, kr, vr = _branch(keys, order, bits, g)
            g += 2 * n
            branches.append(rx)
            for j in range(n):
                krefs[j].append(kr[j])
                vrefs[j].append(vr[j])
    own = []
    for j, (k, v) in enumerate(pairs):
        own.append(f"{_piece(k, card_set)}\\={_piece(v, card_set)}")
        krefs[j].append(g + 1)
        vrefs[j].append(g + 2)
        g += 2
    branches.append("\\&".join(own))
    context = "^" + pre_ctx + "(?:" + "|".join(branches) + ")" + "".join(_piece(p, card_set) for p in tail) + "$"
    transformation = pre_out + _query_out(krefs, vrefs)
    try:
        if re.compile(context).groups != g:
            return None
        parse_transformation(transformation, g)
    except (ValueError, re.error):
        return None
    return context, transformation


# ---------------------------------------------------------------- the learner's hooks
class Permuter:
    """Permutation state of one OnlineLearner, in its store; learner.py calls ``cluster``
    when a cluster's sample changes, ``refresh`` for a dirty ``perm:`` group,
    ``variants`` when a group's candidates are derived and ``recheck`` after a flush."""

    def __init__(self, learner: "OnlineLearner"):
        self.learner = learner
        self.table = learner.store.table("perm")
        self.card_set = learner.card_set
        self._live: set[str] = set()   # key sets with a candidate or with variants derived
        self._trusted: dict[str, list] = {}  # host -> valid permutations [keys, orders, bits]
        for key, rec in self.table.items():
            if rec.get("used") is not None or perm_id(key) in learner._cands:
                self._live.add(key)
        self._index()

    # evidence ------------------------------------------------------------
    def cluster(self, cl, urls: list[str] | None) -> bool:
        """Replace the cluster's evidence (``urls``: its sample, None when it teaches
        nothing); True when it changed."""
        ev = evidence(urls) if urls else None
        new = None if ev is None else [sorted(set(cl.hosts)), ev]
        old = cl.perm
        if old == new:
            return False
        if old is not None:
            self._apply(old, -1)
        if new is not None:
            self._apply(new, +1)
        cl.perm = new
        return True

    def _apply(self, rec: list, sign: int) -> None:
        hosts, ev = rec
        for keys, orders, bits in ev:
            key = _key(keys)
            r = self.table.get(key) or {"n": 0, "hosts": {}, "orders": {}, "bits": [0] * len(keys), "used": None}
            r["n"] += sign
            for counts, items in ((r["hosts"], hosts), (r["orders"], [_key(o) for o in orders])):
                for item in items:
                    left = counts.get(item, 0) + sign
                    if left > 0:
                        counts[item] = left
                    else:
                        counts.pop(item, None)
            if sign > 0:  # classes only widen, as generalize.py's slots do
                r["bits"] = [a | b for a, b in zip(r["bits"], bits)]
            self.table[key] = r
            self.learner._dirty_groups.add(PREFIX + key)

    @staticmethod
    def _shape(r: dict) -> tuple[list, list, list]:
        """(orders, bits, hosts) a key set's rule is made of: its most seen orders."""
        orders = sorted(r["orders"], key=lambda o: (-r["orders"][o], o))[:MAX_ORDERS]
        return [o.split("\x1f") for o in sorted(orders)], list(r["bits"]), sorted(r["hosts"])

    # candidates ----------------------------------------------------------
    def refresh(self, sid: str, out: list) -> None:
        """(Re)derive the permutation rule of one key set, or drop it."""
        L = self.learner
        key = sid[len(PREFIX):]
        r = self.table.get(key)
        rid = perm_id(key)
        if r is None or r["n"] < L.min_freq or not r["orders"]:
            if rid in L._cands:
                L._drop_candidate(rid, out)
            if r is not None and r["n"] <= 0 and r.get("used") is None:
                self.table.pop(key)
                self._live.discard(key)
            return
        keys = key.split("\x1f")
        orders, bits, hosts = self._shape(r)
        context, transformation = standalone(keys, orders, bits)
        L._upsert_candidate(Candidate(rid, context, transformation, r["n"], tuple(hosts)), sid, out)
        self._live.add(key)

    def recheck(self) -> bool:
        """Follow the permutation rules' validity: a permutation that became valid (or
        changed, or stopped being valid) re-derives the groups of candidates on its
        hosts. True when some group was marked dirty."""
        L = self.learner
        hosts: set[str] = set()
        for key in sorted(self._live):
            r = self.table.get(key)
            cand = L._cands.get(perm_id(key))
            want = list(self._shape(r)) if r is not None and cand is not None and L._valid(cand.rec) else None
            used = r.get("used") if r is not None else None
            if want != used:
                hosts.update(used[2] if used else ())
                hosts.update(want[2] if want else ())
                r["used"] = want
                if want is None and r["n"] <= 0:
                    self.table.pop(key)
                else:
                    self.table[key] = r
            if want is None and cand is None:
                self._live.discard(key)
        if not hosts:
            return False
        self._index()
        marked = False
        for h in sorted(hosts):
            for rid in L._by_host.get(h, ()):
                sid = L._cands[rid].rec["group"]
                if not sid.startswith(PREFIX):
                    L._dirty_groups.add(sid)
                    marked = True
        return marked

    def _index(self) -> None:
        trusted: dict[str, list] = {}
        for key in sorted(self._live):
            r = self.table.get(key)
            used = r.get("used") if r is not None else None
            if used:
                orders, bits, hosts = used
                for h in hosts:
                    trusted.setdefault(h, []).append([key.split("\x1f"), orders, bits])
        self._trusted = trusted

    def variants(self, cands: Iterable[Candidate]) -> dict[str, Candidate]:
        """Permuted variants of a group's candidates on hosts with a valid permutation."""
        out: dict[str, Candidate] = {}
        if not self._trusted:
            return out
        for c in cands:
            if not c.parts:
                continue
            perms = {}
            for h in c.hosts:
                for p in self._trusted.get(h, ()):
                    perms[_key(p[0])] = p
            if not perms:
                continue
            got = variant(list(c.parts), [perms[k] for k in sorted(perms)], self.card_set)
            if got is not None:
                vid = variant_id(c.id)
                out[vid] = Candidate(vid, got[0], got[1], c.freq, c.hosts)
        return out
