"""The learner's store on a Faust table: one partition's slice of a RocksDB-backed table
with a changelog topic, written only at checkpoints.

The learner buffers its writes (``dustonline.state.store``) and expects a checkpoint to be a
consistency point. Faust writes a table key to its changelog as soon as it is set, and
commits offsets on its own schedule; a learner writing straight into the table would let
a crash keep the state of events whose offsets were never committed, and count them
twice on replay. So writes between checkpoints stay in an overlay here; ``commit`` puts
them into the table's local RocksDB in one atomic batch and hands them to the worker,
which sends them to the changelog partition as one record batch ending with the source
offset they cover, and acks the source events only then. A restarted or replacement
worker restores exactly a checkpoint and skips the events it already holds.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from dustonline.state.store import _Backend, scan_prefix

from .faust_compat import partition_db

OFFSET_KEY = b"\x01dustonline\x00offset"  # sorts before every table prefix (a letter)


class FaustTableBackend(_Backend):
    def __init__(self, table, partition: int):
        self.table = table
        self.partition = partition
        self.db = partition_db(table, partition)  # faust's rocksdict.Rdict (raw mode)
        self._overlay: dict[bytes, bytes | None] = {}
        self._sorted: list[bytes] | None = None
        self._batch = self._new_batch()  # the overlay's writes, in order, for ``commit``
        from rocksdict import WriteOptions

        # No WAL: the local store only lives as long as the process (app.py empties it at
        # every start; the changelog is the truth), so a log to recover it from is waste
        self._write_options = WriteOptions()
        # rocksdict.pyi declares disable_wal a method; it is a settable property (0.3.29)
        self._write_options.disable_wal = True

    @staticmethod
    def _new_batch():
        from rocksdict import WriteBatch

        return WriteBatch(raw_mode=True)

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
                if ov[mine[i]] is not None:
                    yield mine[i], ov[mine[i]]
                i += 1
            if i < len(mine) and mine[i] == k:
                if ov[k] is not None:
                    yield k, ov[k]
                i += 1
            else:
                yield k, v
        for k in mine[i:]:
            if ov[k] is not None:
                yield k, ov[k]

    def scan_keys(self, prefix: bytes) -> Iterator[bytes]:
        for k, _ in self.scan(prefix):
            yield k

    # ------------------------------------------------------------ writes (overlay)
    def write(self, prefix: bytes, pending: dict[str, Any], deleted: Any, encode) -> None:
        """Into the overlay and, in the same pass, the batch ``commit`` writes: one loop
        over the records rather than two (a checkpoint's records are mostly written once)."""
        ov = self._overlay
        put, delete = self._batch.put, self._batch.delete
        for k, v in pending.items():
            key = prefix + k.encode()
            if v is deleted:
                ov[key] = None
                delete(key)
            else:
                ov[key] = raw = encode(v)
                put(key, raw)
        self._sorted = None

    def delete_range(self, start: bytes, end: bytes) -> None:
        ov = self._overlay
        it = self.db.iter()
        it.seek(start)
        while it.valid():
            k = it.key()
            if k >= end:
                break
            ov[k] = None
            it.next()
        for k in [k for k in ov if start <= k < end]:
            ov[k] = None
        self._batch.delete_range(start, end)
        self._sorted = None

    def sync(self) -> None:
        """Nothing: durability comes with ``commit`` (a checkpoint of the worker)."""

    def close(self) -> None:
        """The partition was revoked: let go of Faust's RocksDB handle, which Faust stops
        referencing at a revoke and leaves to the garbage collector to close. Held here
        (a learner is a reference cycle, freed only by a collection), its LOCK made the
        next assignment of the partition to this worker retry for 30 s and crash."""
        self._overlay.clear()
        self._batch = self._new_batch()
        self.db = None

    # ------------------------------------------------------------ checkpoint
    @property
    def applied_offset(self) -> int:
        """The last source offset the stored state includes (-1: none)."""
        raw = self.db.get(OFFSET_KEY)
        return int(raw) if raw is not None else -1

    def commit(self, source_offset: int) -> list[tuple[bytes, bytes | None]]:
        """Overlay -> local RocksDB in one atomic batch, with the source offset it covers.
        Returns the records for the changelog partition (the caller sends them in
        batches: Faust's one-message-at-a-time path measured ~7k records/s)."""
        ov = self._overlay
        ov[OFFSET_KEY] = offset = str(source_offset).encode()
        wb, self._batch = self._batch, self._new_batch()
        wb.put(OFFSET_KEY, offset)
        self.db.write(wb, self._write_options)
        records = list(ov.items())
        self._overlay = {}
        self._sorted = None
        return records
