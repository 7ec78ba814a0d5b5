"""Append-only logs in chunks: the rolling window's indexes (by time bucket, by site).

Eviction needs the URLs of an expired time bucket and a site's URLs in arrival order.
As one state entry per URL per index, those were two of the seven RocksDB writes of a
new URL, and each eviction deleted its entry again. Here a group's entries are kept in
chunks of ``CHUNK``: the open chunk lives in memory and is written when full or at
``save`` (checkpoints), so an index costs one write per ``CHUNK`` URLs. Readers skip
stale entries themselves (a URL refreshed into a later bucket, or already evicted).

A checkpoint writes only the open chunks that changed since the last one, and closes
those holding ``SEAL`` entries or more: rewriting every open chunk at every checkpoint
was half the bytes a worker checkpointed (a site's open chunk, up to 255 entries, for
the 20 it gained). Chunk boundaries then depend on when checkpoints fell, but nothing
reads them: readers see each group's entries in order, and ``bound`` counts entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .store import Table

CHUNK = 256
SEAL = CHUNK // 8  # a checkpoint closes an open chunk this full: rewrites stay small


class TimeGroups:
    """The group of a time log that holds event time ``ts``: its bucket of ``seconds``,
    zero-padded so groups sort as their buckets. Events come in time order, so the last
    bucket's text is kept rather than formatted for every event."""

    __slots__ = ("seconds", "_last")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._last: tuple[int | None, str] = (None, "")

    def __call__(self, ts: float) -> str:
        b = int(ts // self.seconds)
        if b != self._last[0]:
            self._last = (b, f"{b:012d}")
        return self._last[1]


class ChunkLog:
    __slots__ = ("table", "open", "dirty")

    def __init__(self, table: Table, opened: dict[str, Any] | None = None):
        """``opened``: ``state()`` as saved at the last checkpoint (group -> open chunk and
        entries appended; a bare chunk number from before the count was kept)."""
        self.table = table
        # group -> [number of its open chunk, the open chunk's entries, entries appended
        # since the group began (its log's length, stale entries included)]
        self.open: dict[str, list] = {}
        self.dirty: set[str] = set()  # groups whose open chunk changed since ``save``
        for group, st in (opened or {}).items():
            no, appended = (st, -1) if isinstance(st, int) else st
            items = self.table.get(_key(group, no)) or []
            self.open[group] = [no, items, no * CHUNK + len(items) if appended < 0 else appended]

    def append(self, group: str, entry: Any) -> None:
        o = self.open.get(group)
        if o is None:
            o = self.open[group] = [0, [], 0]
        items = o[1]
        items.append(entry)
        o[2] += 1
        if len(items) >= CHUNK:
            self.table[_key(group, o[0])] = items
            o[0] += 1
            o[1] = []
        self.dirty.add(group)

    def chunks(self, group: str | None = None) -> Iterator[tuple[str, str, list]]:
        """(group, chunk key, entries) in key order, of one group or (None) of all:
        the written chunks and the open ones."""
        if group is None:
            for g in sorted(self.dirty):
                self._write(g)
        elif group in self.dirty:
            self._write(group)
        for key, items in self.table.items("" if group is None else group + "\x00"):
            yield key.partition("\x00")[0], key, items

    def replace(self, key: str, items: list) -> None:
        """Rewrite a chunk with fewer entries (the rest consumed); empty drops it."""
        group, _, no = key.partition("\x00")
        o = self.open.get(group)
        if o is not None and o[0] == int(no):
            o[1] = list(items)
            self.dirty.discard(group)  # written just below
        if items:
            self.table[key] = items
        else:
            self.table.pop(key)

    def bound(self, group: str) -> int:
        """At most this many entries in ``group``: all appended since it began."""
        o = self.open.get(group)
        return 0 if o is None else o[2]

    def drop_group(self, group: str) -> None:
        self.open.pop(group, None)
        self.dirty.discard(group)
        self.table.drop_prefix(group + "\x00")

    def save(self) -> None:
        """Write the open chunks that changed (a checkpoint); close those of ``SEAL``
        entries or more, so the next checkpoint does not write them again."""
        for g in sorted(self.dirty):
            o = self._write(g)
            if o is not None and len(o[1]) >= SEAL:
                o[0] += 1
                o[1] = []

    def _write(self, group: str) -> list | None:
        self.dirty.discard(group)
        o = self.open.get(group)
        if o is not None and o[1]:
            self.table[_key(group, o[0])] = o[1]
        return o

    def state(self) -> dict[str, list[int]]:
        return {g: [o[0], o[2]] for g, o in sorted(self.open.items())}


def _key(group: str, no: int) -> str:
    return f"{group}\x00{no:010d}"
