"""DustBuster's model (Bar-Yossef, Keidar, Schonfeld): its parameters, the token alphabet,
the URL list, likely rules (§5.1), refinement (§5.2), rules as the paper applies them and
canonization (§5.5). The learner is ``dustbuster.py``; the translation into the rule
contract is ``dustbuster_rules.py``."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import mmh3
import numpy as np

from ..events.event import FetchEvent
from ..hashing import text_bytes
from ..rules.urls import site_of


@dataclass(frozen=True)
class Params:
    """The paper's parameters with its values (§6.2, §6.6-6.7)."""

    S: int = 35  # §5.1/§6.2 maximum substring length, in tokens
    T_low: int = 6  # §5.2/§6.2 overflowing bucket size for detecting likely rules
    T_high: int = 11  # §5.2/§6.2 overflowing bucket size for eliminating redundant ones
    MS: int = 3  # §5.1/§6.2 minimum support size
    MRD: float = 0.05  # §5.2/§6.2 maximum relative deficiency
    MAD: int = 1  # §5.2/§6.2 maximum absolute deficiency
    MW: int = 1100  # §5.2/§6.2 maximum window size
    N: int = 100  # §5.4/§6.2 validation count
    epsilon: float = 0.05  # §5.4 refutation threshold (5% in §6.3, §6.7)
    MA: int = 10  # §5.5/§6.2 canonization iterations
    size_matching: bool = True  # §4.3 LikelySimilar by size ranges when no sketch is known
    validate: bool = True  # False: return likely rules unvalidated (access logs, §5.1)
    simhash_distance: int = 3  # near-duplicate sketches (our clustering distance)
    max_chain: int = 3  # longest MA chain emitted as one composed rule (our contract)


# ---------------------------------------------------------------- §3 tokens

BEGIN, END = "\x02", "\x03"  # the paper's ^ and $ tokens (not characters of any URL)
SEP = "\x01"  # token separator of the string form used for matching
_TOKEN = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]", re.S)
_ALNUM = re.compile(r"[A-Za-z0-9]")


def tokenize(url: str) -> tuple[str, ...]:
    """§3: ``^``, alphanumeric strings and single other characters, ``$``."""
    return (BEGIN, *_TOKEN.findall(url), END)


def _key(tokens: Sequence[str]) -> str:
    """Token string with a separator around every token: ``str.find`` then only finds
    occurrences on token boundaries, so substring tests are the paper's token tests."""
    return SEP + SEP.join(tokens) + SEP if tokens else SEP


def _url_of(key: str) -> str:
    return key.replace(SEP, "").replace(BEGIN, "").replace(END, "")


def show(tokens: Sequence[str]) -> str:
    """Printable form, markers as ^ and $ (as the paper writes rules)."""
    return "".join(tokens).replace(BEGIN, "^").replace(END, "$")


# ---------------------------------------------------------------- the URL list (§3)


@dataclass
class Record:
    """One unique URL of the URL list: §3's return code, size range (§4.3) and sketch."""

    url: str
    tokens: tuple[str, ...]
    digest: str | None = None
    simhash: int | None = None
    smin: int | None = None
    smax: int | None = None
    key: str = ""

    def __post_init__(self):
        self.key = _key(self.tokens)

    @property
    def evidence(self) -> bool:
        return self.digest is not None or self.simhash is not None


_CONTROL = re.compile("[\x01-\x03]").search  # our marker characters: such a URL is skipped


def url_list(events: Iterable[FetchEvent]) -> dict[str, dict[str, Record]]:
    """Site -> URL -> Record. Pre-processing of §5.1: unique URLs, 4xx/5xx (and failed,
    status <= 0) fetches dropped, size ranges min..max over all occurrences."""
    sites: dict[str, dict[str, Record]] = defaultdict(dict)
    for ev in events:
        if not 100 <= ev.status < 400 or _CONTROL(ev.url):
            continue
        site = sites[site_of(ev.url)]
        r = site.get(ev.url)
        if r is None:
            r = site[ev.url] = Record(ev.url, tokenize(ev.url))
        if 200 <= ev.status < 300:
            if r.digest is None and ev.digest is not None:
                r.digest = ev.digest
            if r.simhash is None and ev.simhash is not None:
                r.simhash = ev.simhash
        if ev.length is not None and ev.length >= 0:
            r.smin = ev.length if r.smin is None else min(r.smin, ev.length)
            r.smax = ev.length if r.smax is None else max(r.smax, ev.length)
    return {s: sites[s] for s in sorted(sites)}


def similar(a: Record, b: Record, d: int) -> bool:
    """DocSketch(u) = DocSketch(v) of Fig. 4: same digest or simhashes within d bits."""
    if a.digest is not None and a.digest == b.digest:
        return True
    return a.simhash is not None and b.simhash is not None and bin(a.simhash ^ b.simhash).count("1") <= d


# ---------------------------------------------------------------- §5.1 likely rules

_MASK = (1 << 64) - 1
_B = 0x100000001B3  # polynomial base of the prefix hashes


@functools.lru_cache(maxsize=1 << 16)
def _th(tok: str) -> tuple[int, int]:
    """Two independent 64-bit hashes of a token: prefix and suffix polynomials."""
    return mmh3.hash64(text_bytes(tok), 7, signed=False)  # both halves; text_bytes: hashing.py says why


_pairs_cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _spans(n: int, S: int) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) with 0 <= i <= j <= n and j - i <= S: substring tokens[i:j] (lines 6-7)."""
    got = _pairs_cache.get((n, S))
    if got is None:
        i, j = np.triu_indices(n + 1)
        keep = (j - i) <= S
        got = _pairs_cache[(n, S)] = (i[keep].astype(np.int32), j[keep].astype(np.int32))
    return got


@dataclass
class Likely:
    """A pair (alpha, beta), alpha > beta in the order of §5.4 (alpha -> beta shrinks)."""

    alpha: tuple[str, ...]
    beta: tuple[str, ...]
    support: int  # calculated support with T_high (ordering, Fig. 3)
    support_low: int  # calculated support with T_low (the MS filter)

    @property
    def a(self) -> str:
        return _key(self.alpha)

    @property
    def b(self) -> str:
        return _key(self.beta)


def _greater(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    """§5.4: x > y when x is longer, or as long and later in lexicographic order."""
    return (len(x), "".join(x)) > (len(y), "".join(y))


class _Evidence:
    """§4.3 LikelySimilar over one site's records, vectorized: sketches (digest, simhash)
    when both documents have one, else size ranges must overlap (size matching on and
    both sizes known), else no cue says they differ."""

    def __init__(self, recs: list[Record], p: Params):
        ids: dict[str, int] = {}
        self.dig = np.array(
            [ids.setdefault(r.digest, len(ids)) if r.digest is not None else -1 for r in recs], dtype=np.int64
        )
        self.sim = np.array([r.simhash or 0 for r in recs], dtype=np.uint64)
        self.hass = np.array([r.simhash is not None for r in recs], dtype=bool)
        self.smin = np.array([-1 if r.smin is None else r.smin for r in recs], dtype=np.int64)
        self.smax = np.array([-1 if r.smax is None else r.smax for r in recs], dtype=np.int64)
        self.p = p

    def likely(self, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
        d1, d2 = self.dig[u1], self.dig[u2]
        both_d = (d1 >= 0) & (d2 >= 0)
        both_s = self.hass[u1] & self.hass[u2]
        sketch = (both_d & (d1 == d2)) | (
            both_s & (np.bitwise_count(self.sim[u1] ^ self.sim[u2]) <= self.p.simhash_distance)
        )
        if self.p.size_matching:
            lo1, hi1, lo2, hi2 = self.smin[u1], self.smax[u1], self.smin[u2], self.smax[u2]
            sizes = (lo1 < 0) | (lo2 < 0) | ~((hi1 < lo2) | (hi2 < lo1))
        else:
            sizes = np.ones(len(u1), dtype=bool)
        return np.where(both_d | both_s, sketch, sizes)


def detect_likely(recs: list[Record], p: Params) -> list[Likely]:
    """Fig. 2 on one site's URL list; both thresholds in one pass (§5.2), sorted by support."""
    if len(recs) < 2:
        return []
    pow_ = [1]
    for _ in range(max(len(r.tokens) for r in recs) + 1):
        pow_.append(pow_[-1] * _B & _MASK)
    POW = np.array(pow_, dtype=np.uint64)
    Us: list[np.ndarray] = []  # per record; concatenated into U, I, J, ENV, SUB below
    Is: list[np.ndarray] = []
    Js: list[np.ndarray] = []
    ENVs: list[np.ndarray] = []
    SUBs: list[np.ndarray] = []
    for k, r in enumerate(recs):
        t = r.tokens
        n = len(t)
        ph, sh = [0] * (n + 1), [0] * (n + 1)
        for x in range(n):
            ph[x + 1] = (ph[x] * _B + _th(t[x])[0]) & _MASK
        for x in range(n - 1, -1, -1):
            sh[x] = (sh[x + 1] * _B + _th(t[x])[1]) & _MASK
        PH, SH = np.array(ph, dtype=np.uint64), np.array(sh, dtype=np.uint64)
        i, j = _spans(n, p.S)
        L = (j - i).astype(np.uint64)
        # substring tokens[i:j] and envelope (tokens[:i], tokens[j:]) as 64-bit keys
        SUBs.append((PH[j] - PH[i] * POW[j - i]) * np.uint64(0x9E3779B97F4A7C15) + L)
        ENVs.append(
            PH[i] * np.uint64(0xC2B2AE3D27D4EB4F)
            + SH[j] * np.uint64(0x165667B19E3779F9)
            + i.astype(np.uint64) * np.uint64(0x27D4EB2F165667C5)
            + (n - j).astype(np.uint64)
        )
        Us.append(np.full(len(i), k, dtype=np.int32))
        Is.append(i)
        Js.append(j)
    U, I, J = np.concatenate(Us), np.concatenate(Is), np.concatenate(Js)
    ev = _Evidence(recs, p)
    ENV, SUB = np.concatenate(ENVs), np.concatenate(SUBs)
    order = np.argsort(ENV, kind="stable")  # line 11: group by envelope
    env = ENV[order]
    starts = np.flatnonzero(np.r_[True, env[1:] != env[:-1]])
    sizes = np.diff(np.r_[starts, len(env)])
    lo_keys, hi_keys, low, reps = [], [], [], []
    for size in range(2, p.T_high + 1):  # line 13: |B| = 1 or > T: skip
        st = starts[sizes == size]
        if not len(st):
            continue
        M = order[st[:, None] + np.arange(size)]
        for a in range(size):  # lines 14-16: pairs in a bucket
            for b in range(a + 1, size):
                r1, r2 = M[:, a], M[:, b]
                ok = ev.likely(U[r1], U[r2])
                r1, r2 = r1[ok], r2[ok]
                s1, s2 = SUB[r1], SUB[r2]
                swap = s1 > s2
                lo_keys.append(np.where(swap, s2, s1))
                hi_keys.append(np.where(swap, s1, s2))
                reps.append(np.stack([np.where(swap, r2, r1), np.where(swap, r1, r2)], 1))
                low.append(np.full(len(r1), size <= p.T_low))
    if not lo_keys:
        return []
    lo, hi, low_ = np.concatenate(lo_keys), np.concatenate(hi_keys), np.concatenate(low)
    rep = np.concatenate(reps)
    if not len(lo):
        return []
    o = np.lexsort((hi, lo))  # line 17: group IT by pair
    lo, hi, low_, rep = lo[o], hi[o], low_[o], rep[o]
    first = np.flatnonzero(np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])])
    sup_high = np.diff(np.r_[first, len(lo)])
    sup_low = np.add.reduceat(low_.astype(np.int64), first)
    out: list[Likely] = []
    for f, sh_, sl in zip(first[sup_low >= p.MS], sup_high[sup_low >= p.MS], sup_low[sup_low >= p.MS]):
        x, y = rep[f]
        ax = recs[U[x]].tokens[I[x] : J[x]]
        ay = recs[U[y]].tokens[I[y] : J[y]]
        if _greater(ay, ax):
            ax, ay = ay, ax
        out.append(Likely(ax, ay, int(sh_), int(sl)))
    out.sort(key=lambda l: (-l.support, -l.support_low, l.a, l.b))  # line 21 (ties: stable text order)
    return out


# ---------------------------------------------------------------- §5.2 refinement


def refines_rule(a2: str, b2: str, a: str, b: str) -> bool:
    """Lemma 6: a2 -> b2 refines a -> b iff a2 = g a d and b2 = g b d for some (g, d);
    every occurrence of a in a2 is tried. Arguments are token keys (``_key``)."""
    if a2 == a and b2 == b:
        return True
    i = a2.find(a)
    while i >= 0:
        if a2[:i] + b + a2[i + len(a) :] == b2:
            return True
        i = a2.find(a, i + 1)
    return False


def refines_pair(x: Likely, y: Likely) -> bool:
    """§5.2: pairs stand for both directions; refinement is checked both ways."""
    return refines_rule(x.a, x.b, y.a, y.b) or refines_rule(x.a, x.b, y.b, y.a)


def eliminate_redundancies(R: list[Likely], p: Params) -> list[Likely]:
    """Fig. 3: in a window of rules with nearly the same support, keep the refinement."""
    gone = [False] * len(R)
    for i in range(len(R)):
        if gone[i]:
            continue
        current = False
        for j in range(1, min(p.MW, len(R) - 1 - i) + 1):
            if R[i].support - R[i + j].support > max(p.MRD * R[i].support, p.MAD):
                break
            if refines_pair(R[i], R[i + j]):
                gone[i + j] = True
            elif refines_pair(R[i + j], R[i]):
                current = True
                break
        if current:
            gone[i] = True
    return [r for r, g in zip(R, gone) if not g]


# ---------------------------------------------------------------- rules as the paper applies them


@dataclass
class DRule:
    """A DUST rule as §5.4-5.5 apply it: substring alpha -> beta (first occurrence, token
    aligned) or a parameter rule (§5.3: value -> default, or omitted)."""

    kind: str  # "sub", "param-value", "param-omit"
    a: str = ""  # sub: token keys of alpha and beta
    b: str = ""
    name: str = ""  # param: its name and default value v_p
    value: str = ""
    support: int = 0
    hosts: tuple[str, ...] = ()
    id: str = ""

    def apply(self, url: str, key: str | None = None) -> str:
        """The paper's "one standard way" (§5.4 Remark): the first occurrence."""
        if self.kind == "sub":
            k = key or _key(tokenize(url))
            i = k.find(self.a)
            if i < 0:
                return url
            return _url_of(k[:i] + self.b + k[i + len(self.a) :])
        m = _param_re(self.name).search(url)
        if m is None:
            return url
        if self.kind == "param-value":
            return url[: m.start(2)] + self.value + url[m.end(2) :]
        end = m.end()
        if end < len(url) and url[end] == "&":  # another parameter follows
            return url[: m.start() + 1] + url[end + 1 :]
        return url[: m.start()] + url[end:]

    def describe(self) -> str:
        if self.kind == "sub":
            return f'"{show(self.a.split(SEP)[1:-1])}" -> "{show(self.b.split(SEP)[1:-1])}"'
        return f"{self.name}=* -> {self.name}={self.value}" if self.kind == "param-value" else f"omit {self.name}"


_param_cache: dict[str, re.Pattern] = {}


def _param_re(name: str) -> re.Pattern:
    rx = _param_cache.get(name)
    if rx is None:
        rx = _param_cache[name] = re.compile(r"([?&])" + re.escape(name) + r"=([^&#]*)")
    return rx


# ---------------------------------------------------------------- §5.5 canonization


def canonize(
    url: str, rules: Sequence[DRule], MA: int = 10, trace: list | None = None, path: list | None = None
) -> str:
    """Fig. 6: each rule in turn applied up to MA times, the pass repeated up to MA times
    until a pass changes nothing. ``trace`` collects the indexes of rules that fired,
    ``path`` the URLs they made."""
    u = url
    for _ in range(MA):
        prev = u
        for i, r in enumerate(rules):
            for _ in range(MA):
                v = r.apply(u)
                if v == u:
                    break
                u = v
                if trace is not None:
                    trace.append(i)
                if path is not None:
                    path.append(v)
        if prev == u:
            break
    return u
