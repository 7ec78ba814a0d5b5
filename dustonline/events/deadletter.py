"""Dead-letter file for rejected input records.

A long run must not stop on one bad line, but the operator must be able to see what was
dropped and why: each rejection is kept as one JSON line, and counted by reason.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import IO

import msgspec

from .readers import Rejected

_enc = msgspec.json.Encoder()


class DeadLetter:
    """Appends rejections to ``path`` (opened only when the first one arrives); None = just count."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path is not None else None
        self._fh: IO[bytes] | None = None
        self._counts: Counter[str] = Counter()

    def add(self, rej: Rejected) -> None:
        self._counts[rej.reason] += 1
        if self.path is None:
            return
        if self._fh is None:
            self._fh = open(self.path, "ab")
        # line-at-a-time so a crash loses nothing already rejected
        self._fh.write(_enc.encode(rej) + b"\n")
        self._fh.flush()

    @property
    def counts(self) -> dict[str, int]:
        """Rejections per reason, most frequent first (ties by name, for stable output)."""
        return dict(sorted(self._counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def summary(self) -> str:
        if not self._counts:
            return "0 rejected"
        return f"{self.total} rejected: " + ", ".join(f"{n} {r}" for r, n in self.counts.items())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> DeadLetter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
