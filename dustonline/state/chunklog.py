"""Append-only logs in chunks: the rolling window's indexes (by time bucket, by site).

Eviction needs the URLs of an expired time bucket and a site's URLs in arrival order.
As one state entry per URL per index, those were two of the seven RocksDB writes of a
new URL, and each eviction deleted its entry again. Here a group's entries are kept in
chunks of ``CHUNK``: the open chunk lives in memory and is written when full or at
``save`` (checkpoints), so an index costs one write per ``CHUNK`` URLs. Readers skip
stale entries themselves (a URL refreshed into a later bucket, or already evicted).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .store import Table

CHUNK = 256


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
    __slots__ = ("table", "open")

    def __init__(self, table: Table, opened: dict[str, int] | None = None):
        """``opened``: ``state()`` as saved at the last checkpoint (group -> open chunk)."""
        self.table = table
        # group -> [number of its open chunk, the open chunk's entries]
        self.open: dict[str, list] = {}
        for group, no in (opened or {}).items():
            self.open[group] = [no, self.table.get(_key(group, no)) or []]

    def append(self, group: str, entry: Any) -> None:
        o = self.open.get(group)
        if o is None:
            o = self.open[group] = [0, []]
        items = o[1]
        items.append(entry)
        if len(items) >= CHUNK:
            self.table[_key(group, o[0])] = items
            o[0] += 1
            o[1] = []

    def chunks(self, group: str | None = None) -> Iterator[tuple[str, str, list]]:
        """(group, chunk key, entries) in key order, of one group or (None) of all:
        the written chunks and the open ones."""
        self.save(group)
        for key, items in self.table.items("" if group is None else group + "\x00"):
            yield key.partition("\x00")[0], key, items

    def replace(self, key: str, items: list) -> None:
        """Rewrite a chunk with fewer entries (the rest consumed); empty drops it."""
        group, _, no = key.partition("\x00")
        o = self.open.get(group)
        if o is not None and o[0] == int(no):
            o[1] = list(items)
        if items:
            self.table[key] = items
        else:
            self.table.pop(key)

    def bound(self, group: str) -> int:
        """At most this many entries in ``group`` (written chunks counted full)."""
        o = self.open.get(group)
        return 0 if o is None else o[0] * CHUNK + len(o[1])

    def drop_group(self, group: str) -> None:
        self.open.pop(group, None)
        self.table.drop_prefix(group + "\x00")

    def save(self, group: str | None = None) -> None:
        """Write the open chunks (of one group, or all)."""
        for g, (no, items) in self.open.items() if group is None else [(group, self.open.get(group, (0, None)))]:
            if items:
                self.table[_key(g, no)] = items

    def state(self) -> dict[str, int]:
        return {g: o[0] for g, o in sorted(self.open.items())}


def _key(group: str, no: int) -> str:
    return f"{group}\x00{no:010d}"
