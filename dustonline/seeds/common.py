"""Small pieces more than one seed learner needs."""

from __future__ import annotations

from collections.abc import Sequence


def common_ends(a: Sequence, b: Sequence) -> tuple[int, int]:
    """Lengths of the longest common prefix of ``a`` and ``b``, then of the longest common
    suffix of what is left: the edit between two token sequences sits in between."""
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return p, s
