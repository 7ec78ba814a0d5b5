"""URL alignment: Needleman-Wunsch over token-set sequences (thesis Eq. 2.1 / 4.1), the
linear multiple alignment of DustLin (Alg. 4) and the progressive one of DUSTER (Alg. 1).

A consensus keeps the aligned rows, not only the thesis' column sets: rule generation
needs each URL's text per span (a session id is one value, not a column of characters)
and token counts to choose variants deterministically. With K <= 10 rows this is small.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ..rules.urls import lower
from .tokenize import token_type, tokenize

GAP = ""
Column = dict[str, int]


class Consensus:
    """An aligned cluster sample: ``rows`` are the aligned URLs' tokens (``GAP`` for λ),
    all of one length. Columns (token -> count) are derived, and so is the thesis' set view."""

    __slots__ = ("rows", "_cols")

    def __init__(self, rows: list[list[str]]):
        self.rows = rows
        self._cols: list[Column] | None = None

    @classmethod
    def of_url(cls, url: str) -> Consensus:
        return cls([tokenize(url)])

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def cols(self) -> list[Column]:
        if self._cols is None:
            cols: list[Column] = [{} for _ in self.rows[0]] if self.rows else []
            for row in self.rows:
                for col, t in zip(cols, row):
                    col[t] = col.get(t, 0) + 1
            self._cols = cols
        return self._cols

    def sets(self) -> list[set[str]]:
        """The thesis' view: each column as a token set, λ included."""
        return [set(c) for c in self.cols]

    def to_state(self) -> list[list[str]]:
        return self.rows

    @classmethod
    def from_state(cls, rows: list[list[str]]) -> Consensus:
        return cls(rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Consensus) and self.rows == other.rows

    def __repr__(self) -> str:
        return f"Consensus(n={self.n}, {[sorted(c) for c in self.cols]})"


_TYPE_BITS = {"a": 1, "n": 2, "p": 4}


_TOKEN_KEYS: dict[str, tuple] = {}


def _token_key(t: str) -> tuple:
    k = _TOKEN_KEYS.get(t)
    if k is None:
        low = lower(t)
        k = (frozenset((low,)), _TYPE_BITS[token_type(low)], low)
        if len(_TOKEN_KEYS) < 1 << 16:
            _TOKEN_KEYS[t] = k
    return k


def _keys(c: Consensus) -> list[tuple]:
    """Per column: (case-folded set, type bitmask, the single folded token or None); λ is
    left out of scoring. Memoized per token: most columns hold a single token."""
    rows = c.rows
    if len(rows) == 1:
        known = _TOKEN_KEYS.get  # a dict hit, not a call, for the usual known token
        return [known(t) or _token_key(t) for t in rows[0]]
    out = []
    nrows = len(rows)
    for col in zip(*rows):
        t0 = col[0]
        if t0 and col.count(t0) == nrows:  # the common case: an invariant column
            out.append(_token_key(t0))
            continue
        toks = set(col)
        toks.discard(GAP)
        if len(toks) == 1:
            out.append(_token_key(toks.pop()))
            continue
        low = frozenset(lower(t) for t in toks)
        bits = 0
        for t in low:
            bits |= _TYPE_BITS[token_type(t)]
        out.append((low, bits, next(iter(low)) if len(low) == 1 else None))
    return out


def score(a: tuple, b: tuple) -> float:
    """Eq. 4.1: Jaccard of the case-folded sets when some tokens share a type, else -1."""
    if not (a[1] & b[1]):
        return -1.0
    if a[2] is not None and b[2] is not None:
        return 1.0 if a[2] == b[2] else 0.0
    la, lb = a[0], b[0]
    inter = len(la & lb)
    return inter / (len(la) + len(lb) - inter) if inter else 0.0


def align(x: Consensus, y: Consensus) -> tuple[float, Consensus]:
    """Pairwise alignment of x (matrix rows) and y (columns); gap cost 0.

    The traceback from the bottom-right cell prefers the diagonal, then left, then up:
    the order that reproduces the thesis' Figure 4.1 / Table 4.1. Only the middle of the
    matrix is computed; both shortcuts give the full matrix's result exactly:
    - a common suffix of columns scoring 1: with sf <= 1 the diagonal is always taken there;
    - a common prefix of length p: wherever min(i, j) <= p the score is min(i, j), so the
      traceback there is "diagonal iff sf = 1, else left if j > i, else up", walked below
      without the matrix (tests/test_align.py checks this against the plain algorithm).
    """
    xk, yk = _keys(x), _keys(y)
    m, n = len(xk), len(yk)
    s = 0
    while s < m and s < n and xk[m - 1 - s][2] is not None and xk[m - 1 - s][2] == yk[n - 1 - s][2]:
        s += 1
    p = 0
    lim = min(m, n) - s
    while p < lim and xk[p][2] is not None and xk[p][2] == yk[p][2]:
        p += 1
    mm, nn = m - s - p, n - s - p
    mid, pairs, i, j = _dp(xk[p : p + mm], yk[p : p + nn], p, score)
    if i == j:  # the traceback reached the prefix on its diagonal: it stays there
        pairs.extend((k, k) for k in range(i, 0, -1))
        i = j = 0
    while i > 0 and j > 0:  # the prefix region, in closed form
        if score(xk[i - 1], yk[j - 1]) == 1.0:
            pairs.append((i, j))
            i -= 1
            j -= 1
        elif j > i:
            pairs.append((0, j))
            j -= 1
        else:
            pairs.append((i, 0))
            i -= 1
    while j > 0:
        pairs.append((0, j))
        j -= 1
    while i > 0:
        pairs.append((i, 0))
        i -= 1
    pairs.reverse()
    pairs.extend((m - s + k, n - s + k) for k in range(1, s + 1))
    return mid + p + s, _merge(x, y, compact_gaps(pairs, xk, yk))


def _dp_py(xmid: list, ymid: list, p: int, score=score) -> tuple[float, list, int, int]:
    """The matrix between the common prefix and suffix: its score, the traceback's pairs
    (last first; full 1-based indexes, 0 = gap) and where the traceback left it. The C
    extension ``_kernels.dp`` does the same, faster, when it was built."""
    mm, nn = len(xmid), len(ymid)
    ysingle = [yj[2] for yj in ymid]
    ytypes = [yj[1] for yj in ymid]
    prev = [0.0] * (nn + 1)
    S = [prev]
    sf_rows: list = [None]
    for xi in xmid:
        xs, xt = xi[2], xi[1]
        if xs is not None:  # most columns hold one token: Eq. 4.1 is then 1 / 0 / -1
            sfr = [
                -1.0 if not (xt & yt) else (1.0 if xs == ys else 0.0) if ys is not None else score(xi, yj)
                for ys, yt, yj in zip(ysingle, ytypes, ymid)
            ]
        else:
            sfr = [score(xi, yj) if xt & yj[1] else -1.0 for yj in ymid]
        cur = [0.0]
        left = 0.0
        for pd, pu, v in zip(prev, prev[1:], sfr):  # prev[j-1], prev[j], score(i, j)
            d = pd + v
            if left > d:
                d = left
            if pu > d:
                d = pu
            cur.append(d)
            left = d
        S.append(cur)
        sf_rows.append([0.0] + sfr)
        prev = cur
    pairs: list[tuple[int, int]] = []
    i, j = mm, nn
    while i > 0 and j > 0:
        c = S[i][j]
        if c == S[i - 1][j - 1] + sf_rows[i][j]:
            pairs.append((p + i, p + j))
            i -= 1
            j -= 1
        elif c == S[i][j - 1]:
            pairs.append((0, p + j))
            j -= 1
        else:
            pairs.append((p + i, 0))
            i -= 1
    return S[mm][nn], pairs, p + i, p + j


try:  # the optional C kernel (setup.py builds it where a compiler is present)
    from .._kernels import dp as _dp

    NATIVE = True
except ImportError:  # pragma: no cover - depends on the build
    _dp, NATIVE = _dp_py, False
if os.environ.get("DUSTONLINE_PURE_PYTHON"):
    _dp, NATIVE = _dp_py, False


def compact_gaps(pairs: list[tuple[int, int]], xk: list, yk: list) -> list[tuple[int, int]]:
    """Among alignments of equal score, prefer fewer gap runs.

    With gap cost 0 the diagonal-first traceback pairs a token with its rightmost equal
    partner: /x?id=5 against /x?id=5&sid=a5f pairs the 5s inside the session id and
    splits "&sid=a5f" into two gap runs. A token sandwiched between two gap runs on the
    other side is moved to the start of the first run when it scores as well there, which
    merges the runs. Ties the thesis' own example cares about (Table 4.1) have equal run
    counts either way and are left alone.
    """
    changed = True
    while changed:
        changed = False
        n = len(pairs)
        k = 1
        while k < n - 1:
            i, j = pairs[k]
            if i and j:
                for side in (0, 1):  # side 0: gaps in y around a lone y token; 1: the mirror
                    if (
                        pairs[k - 1][1 - side] == 0
                        and pairs[k - 1][side]
                        and pairs[k + 1][1 - side] == 0
                        and pairs[k + 1][side]
                    ):
                        start = k - 1
                        while start > 0 and pairs[start - 1][1 - side] == 0 and pairs[start - 1][side]:
                            start -= 1
                        a0 = pairs[start][side]
                        cur = score(xk[i - 1], yk[j - 1])
                        new = score(xk[a0 - 1], yk[j - 1]) if side == 0 else score(xk[i - 1], yk[a0 - 1])
                        if new >= cur:
                            moved = (a0, j) if side == 0 else (i, a0)
                            others = [pr for pr in pairs[start : k + 1] if pr[side] != a0 and pr != (i, j)]
                            gap = [(pr[0], 0) if side == 0 else (0, pr[1]) for pr in others]
                            gap.append((i, 0) if side == 0 else (0, j))
                            pairs[start : k + 1] = [moved] + gap
                            changed = True
                            break
            k += 1
    return pairs


def _merge(x: Consensus, y: Consensus, pairs: list[tuple[int, int]]) -> Consensus:
    rows = [[r[i - 1] if i else GAP for i, _ in pairs] for r in x.rows]
    rows += [[r[j - 1] if j else GAP for _, j in pairs] for r in y.rows]
    return Consensus(rows)


def add_url(consensus: Consensus | None, url: str) -> Consensus:
    """One DustLin step (Alg. 4, line 8): align the new URL against the running consensus."""
    seq = Consensus.of_url(url)
    if consensus is None:
        return seq
    return align(seq, consensus)[1]


def linear_alignment(urls: Iterable[str], k: int = 10) -> Consensus | None:
    """DustLin: the first ``k`` URLs, in the given (deterministic) order, one after another."""
    cons = None
    for idx, url in enumerate(urls):
        if idx >= k:
            break
        cons = add_url(cons, url)
    return cons


def progressive_alignment(urls: Sequence[str]) -> Consensus | None:
    """DUSTER (Alg. 1, Feng-Doolittle): repeatedly merge the best-scoring pair.

    Ties are broken by the order the sequences entered, so the result is reproducible.
    """
    seqs: dict[int, Consensus] = {i: Consensus.of_url(u) for i, u in enumerate(urls)}
    if not seqs:
        return None
    if len(seqs) == 1:
        return seqs[0]
    pending: list[tuple[float, int, int, Consensus]] = []
    for a in range(len(urls)):
        for b in range(a + 1, len(urls)):
            sc, cons = align(seqs[a], seqs[b])
            pending.append((sc, a, b, cons))
    next_id = len(urls)
    while len(seqs) > 1:
        pending = [p for p in pending if p[1] in seqs and p[2] in seqs]
        best = max(pending, key=lambda p: (p[0], -p[1], -p[2]))
        _, a, b, cons = best
        del seqs[a], seqs[b]
        for other in sorted(seqs):
            sc, merged = align(cons, seqs[other])
            pending.append((sc, next_id, other, merged))
        seqs[next_id] = cons
        next_id += 1
    return next(iter(seqs.values()))
