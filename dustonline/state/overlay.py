"""A RocksDB store whose writes wait in an overlay until ``commit``: the worker's state
between checkpoints (stream/state.py adapts it to a partition of a Faust table).

A checkpoint must be a consistency point: writes of events whose offsets are not yet
committed cannot reach the local store, or a replacement would count them twice. So
writes stay in an overlay, which reads see; ``commit`` writes them in one atomic batch
ending with the source offset they cover, and returns them for the changelog. Compiled
with the rest of the state layer: every record a worker checkpoints goes through
``write`` and ``commit``, and every read of the worker's learner through ``get``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from mypy_extensions import mypyc_attr

from .store import _Backend, scan_prefix

OFFSET_KEY = b"\x01dustonline\x00offset"  # sorts before every table prefix (a letter)


def _new_batch() -> Any:
    from rocksdict import WriteBatch

    return WriteBatch(raw_mode=True)


@mypyc_attr(allow_interpreted_subclasses=True)  # stream/state.py's Faust table backend
class OverlayBackend(_Backend):
    def __init__(self, db: Any):
        """``db``: a raw-mode rocksdict ``Rdict``, written only by ``commit``."""
        from rocksdict import WriteOptions

        self.db = db
        self._overlay: dict[bytes, bytes | None] = {}
        self._sorted: list[bytes] | None = None
        self._batch = _new_batch()  # the overlay's writes, in order, for ``commit``
        # No WAL: the local store only lives as long as the process (the worker empties
        # it at every start; the changelog is the truth), so a log to recover it from is waste
        self._write_options = WriteOptions()
        # rocksdict.pyi declares disable_wal a method; it is a settable property (0.3.29)
        self._write_options.disable_wal = True  # type: ignore[method-assign, assignment]

    # ------------------------------------------------------------ reads
    def get(self, key: bytes) -> bytes | None:
        ov = self._overlay
        if key in ov:
            return ov[key]
        return self.db.get(key)

    def _overlay_range(self, prefix: bytes) -> list[bytes]:
        if self._sorted is None:
            self._sorted = sorted(self._overlay)
        keys = self._sorted
        i = bisect.bisect_left(keys, prefix)
        j = i
        while j < len(keys) and keys[j].startswith(prefix):
            j += 1
        return keys[i:j]

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Stored entries merged with the overlay (which wins), in key order."""
        ov = self._overlay
        mine = self._overlay_range(prefix)
        i = 0
        for k, v in scan_prefix(self.db, prefix):
            while i < len(mine) and mine[i] < k:
                o = ov[mine[i]]
                if o is not None:
                    yield mine[i], o
                i += 1
            if i < len(mine) and mine[i] == k:
                o = ov[k]
                if o is not None:
                    yield k, o
                i += 1
            else:
                yield k, v
        for k in mine[i:]:
            o = ov[k]
            if o is not None:
                yield k, o

    def scan_keys(self, prefix: bytes) -> Iterator[bytes]:
        for k, _ in self.scan(prefix):
            yield k

    # ------------------------------------------------------------ writes (overlay)
    def write(self, prefix: bytes, pending: dict[str, Any], deleted: Any, encode: Any) -> None:
        """Into the overlay and, in the same pass, the batch ``commit`` writes: one loop
        over the records rather than two (a checkpoint's records are mostly written once)."""
        ov = self._overlay
        batch = self._batch
        put, delete = batch.put, batch.delete
        for k, v in pending.items():
            key = prefix + k.encode()
            if v is deleted:
                ov[key] = None
                delete(key)
            else:
                raw: bytes = encode(v)
                ov[key] = raw
                put(key, raw)
        self._sorted = None

    def delete_range(self, start: bytes, end: bytes) -> None:
        ov = self._overlay
        it = self.db.iter()
        it.seek(start)
        while it.valid():
            k: bytes = it.key()
            if k >= end:
                break
            ov[k] = None
            it.next()
        for k in [k for k in ov if start <= k < end]:
            ov[k] = None
        self._batch.delete_range(start, end)
        self._sorted = None

    def sync(self) -> None:
        """Nothing: durability comes with ``commit``."""

    def close(self) -> None:
        """Let go of the database handle (the owner closes it)."""
        self._overlay.clear()
        self._batch = _new_batch()
        self.db = None

    # ------------------------------------------------------------ checkpoint
    @property
    def applied_offset(self) -> int:
        """The last source offset the stored state includes (-1: none)."""
        raw = self.db.get(OFFSET_KEY)
        return int(raw) if raw is not None else -1

    def commit(self, source_offset: int) -> dict[bytes, bytes | None]:
        """Overlay -> the database in one atomic batch, with the source offset it covers.
        Returns the records for the changelog, key -> value (None: deleted), the offset
        last: the overlay itself, since a list of its pairs was a tuple per record."""
        ov = self._overlay
        offset = str(source_offset).encode()
        ov[OFFSET_KEY] = offset  # last: present only if the whole batch is
        wb, self._batch = self._batch, _new_batch()
        wb.put(OFFSET_KEY, offset)
        self.db.write(wb, self._write_options)
        self._overlay = {}
        self._sorted = None
        return ov
