"""Dead-letter file for rejected input records.

A long run must not stop on one bad line, but the operator must be able to see what was
dropped and why: each rejection is kept as one JSON line, and counted by reason.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import IO

import msgspec

from .readers import Rejected

_enc = msgspec.json.Encoder()


class DeadLetter:
    """Appends rejections to ``path`` (opened only when the first one arrives; ``start``
    for a file of one run's); None = just count."""

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

    def start(self, resume_at: int | None = None, counts: dict[str, int] | None = None) -> None:
        """The file holds one run's dead letters: a new run removes what an earlier run
        left, a resumed run cuts the file back to what its checkpoint had written (the
        records after it are read again) and counts on from there."""
        self.close()
        self._counts = Counter(counts or {})
        if self.path is None:
            return
        if resume_at is None:
            self.path.unlink(missing_ok=True)
        elif self.path.exists() and self.path.stat().st_size > resume_at:
            os.truncate(self.path, resume_at)

    def tell(self) -> int:
        """Bytes in the file so far (a checkpoint records it)."""
        if self._fh is not None:
            return self._fh.tell()
        return self.path.stat().st_size if self.path is not None and self.path.exists() else 0

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
