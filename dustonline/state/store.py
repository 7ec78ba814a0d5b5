"""Learner state behind a small interface: named tables of str -> msgpack-able values.

Dict-like on purpose: a Faust worker maps each table onto a Faust ``Table`` (RocksDB
with a changelog topic) without the core knowing. Both backends here share one write
buffer and read cache, so a unit test on the memory backend sees the same copy semantics
as RocksDB: a value read and mutated is not stored until it is assigned back.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from mypy_extensions import mypyc_attr
from sortedcontainers import SortedDict

from . import keyfilter
from .keyfilter import KeyFilter

_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder()
_MISSING = object()
_DELETED = object()


class Table:
    """One namespace of a store: a write buffer and a read cache over the backend.

    Writes collect in ``_pending`` and go to the backend in batches. Tables that are read
    back (``keep=True``) also keep recently written or read entries, misses included, in
    ``_cache``; write-mostly tables (URL records, time indexes) keep nothing after a
    flush, so memory holds what is hot rather than everything ever written."""

    __slots__ = (
        "_b",
        "_prefix",
        "_pending",
        "_cache",
        "_cap",
        "_keep",
        "_flush_at",
        "_decode",
        "_known",
        "_stale",
        "_retired",
        "_budget",
        "_mean",
        "_limit",
        "_filter_min",
    )

    def __init__(
        self,
        backend: _Backend,
        name: str,
        cache_entries: int,
        keep: bool = True,
        type: Any = None,
        flush_at: int | None = None,
        filtered: bool = False,
        cache_bytes: int = 0,
        filter_min: int = 0,
    ):
        self._b = backend
        self._prefix = name.encode() + b"\x00"
        self._pending: dict[str, Any] = {}
        self._cache: dict[str, Any] = {}
        self._cap = cache_entries
        self._keep = keep
        self._flush_at = max(1, flush_at or min(cache_entries, 20_000))
        self._decode = msgspec.msgpack.Decoder(type).decode if type is not None else _dec.decode
        # keyfilter.py says why; deletes are counted so the filter is rebuilt once they
        # outnumber the keys
        self._known: KeyFilter | None = None
        self._stale = 0
        self._retired: list[bytes] = []  # prefixes to range-delete after the next write
        # The read cache holds at most ``_limit`` entries: ``cache_entries``, and no more
        # than ``cache_bytes`` of entries as stored (``_mean`` a running estimate of an
        # entry's stored size, from what is read and written), since one table's entries
        # are 30 bytes and another's several KiB (in memory, 2-10 times their stored size)
        self._budget = cache_bytes
        self._mean = 0  # none seen yet
        self._limit = cache_entries
        self._filter_min = filter_min
        if filtered:
            self._rebuild_filter()

    def get(self, key: str, default: Any = None) -> Any:
        # the read cache first: it holds this table's pending writes too (``__setitem__``),
        # so a hit costs one lookup in the larger dict, not two
        v = self._cache.get(key, _MISSING)
        if v is _MISSING:
            v = self._pending.get(key, _MISSING)
            if v is _MISSING:
                known = self._known
                if known is not None:  # KeyFilter.__contains__, inlined: a call costs as much
                    i = hash(key) & known.mask
                    if not known.bits[i >> 3] & (1 << (i & 7)):
                        return default
                raw = self._b.get(self._prefix + key.encode())
                v = _DELETED if raw is None else self._decode(raw)
                if self._keep:
                    if raw is not None and self._budget:
                        self._sized(len(raw) + len(key))
                    cache = self._cache
                    if len(cache) >= self._limit:
                        self._shrink()
                    cache[key] = v
        return default if v is _DELETED else v

    def __getitem__(self, key: str) -> Any:
        v = self.get(key, _MISSING)
        if v is _MISSING:
            raise KeyError(key)
        return v

    def __contains__(self, key: str) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __setitem__(self, key: str, value: Any) -> None:
        pending = self._pending
        pending[key] = value
        if self._keep:
            self._cache[key] = value  # what ``get`` reads first (a flush would cache it anyway)
        known = self._known
        if known is not None:
            if value is _DELETED:
                self._stale += 1
            elif not known.add(key):
                self._rebuild_filter()
        if len(pending) >= self._flush_at:
            self.flush()

    def _sized(self, n: int) -> None:
        """One entry's stored size seen: the estimate moves a sixteenth of the way."""
        m = self._mean
        self._mean = m = max(16, n if m == 0 else m + (n - m) // 16)
        self._limit = max(min(self._cap, 64), min(self._cap, self._budget // m))

    def _rebuild_filter(self) -> None:
        """The filter from the keys stored: at open, when it is full, and when deletes
        outnumber keys. Sized for a million keys or four times those stored (4 MiB a
        million), so a run of a few million events never rebuilds while it grows."""
        self.flush()
        cut, scan = len(self._prefix), self._b.scan_keys
        count = sum(1 for _ in scan(self._prefix))  # a second pass, not a list of every key
        self._known = KeyFilter.of((k[cut:].decode() for k in scan(self._prefix)), count, self._filter_min)
        self._stale = 0

    def __delitem__(self, key: str) -> None:
        self[key] = _DELETED

    def pop(self, key: str, default: Any = None) -> Any:
        v = self.get(key, _MISSING)
        if v is _MISSING:
            return default
        self[key] = _DELETED
        return v

    def _shrink(self) -> None:
        """Forget the older entries of the read cache (insertion order) down to half its
        limit: recent entries, the likely hot ones, stay."""
        cache = self._cache
        for k in list(itertools.islice(cache, len(cache) - self._limit // 2)):
            del cache[k]

    def flush(self) -> None:
        """Write pending entries in one batch."""
        pending = self._pending
        if pending:
            self._b.write(self._prefix, pending, _DELETED, _enc.encode)
            self._pending = {}
        if self._retired:
            for start in self._retired:
                self._b.delete_range(start, _prefix_end(start) or b"\xff")
            self._retired = []
        if not pending:
            return
        if self._keep:
            if self._budget:
                for k, v in itertools.islice(pending.items(), 4):  # a sample: encoding is work
                    if v is not _DELETED:
                        self._sized(len(_enc.encode(v)) + len(k))
            cache = self._cache
            cache.update(pending)
            if len(cache) > self._limit:
                self._shrink()
        if self._known is not None and self._stale > self._known.n // 2 + 10_000:
            self._rebuild_filter()

    def items(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        """Entries whose key starts with ``prefix``, in key order (deterministic)."""
        self.flush()
        full = self._prefix + prefix.encode()
        cut = len(self._prefix)
        dec = self._decode
        for k, raw in self._b.scan(full):
            yield k[cut:].decode(), dec(raw)

    def keys(self, prefix: str = "") -> Iterator[str]:
        for k, _ in self.items(prefix):
            yield k

    def drop_prefix(self, prefix: str) -> None:
        """Delete every key under ``prefix`` in one range delete. Pending writes under it
        are discarded, not flushed: the delete would undo them, and flushing the whole
        buffer for every count reset was 6% of a learner run. Cached entries under it are
        left to age out: callers move on to a new prefix (an epoch) and never read the
        old one again."""
        pending = self._pending
        for k in [k for k in pending if k.startswith(prefix)]:
            del pending[k]
        start = self._prefix + prefix.encode()
        self._b.delete_range(start, _prefix_end(start) or b"\xff")
        if self._known is not None:
            self._stale += 1

    def retire_prefix(self, prefix: str) -> None:
        """Delete every key under ``prefix`` after the next write, for a caller that never
        writes or reads under it again (a count epoch left behind): unlike drop_prefix it
        need not look for pending writes under it among all the others, which was 3% of a
        learner run."""
        self._retired.append(self._prefix + prefix.encode())
        if self._known is not None:
            self._stale += 1


def _prefix_end(prefix: bytes) -> bytes | None:
    """The first key after every key starting with ``prefix`` (None: no such bound)."""
    p = prefix.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else None


@mypyc_attr(allow_interpreted_subclasses=True)  # the worker's Faust table backend (stream/state.py)
class _Backend:
    def get(self, key: bytes) -> bytes | None: ...
    def write(self, prefix: bytes, pending: dict[str, Any], deleted: Any, encode) -> None:
        """Write ``pending`` (str key -> value, ``deleted`` for a delete) under ``prefix``."""

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        raise NotImplementedError  # every backend has its own

    def scan_keys(self, prefix: bytes) -> Iterator[bytes]:
        raise NotImplementedError

    def delete_range(self, start: bytes, end: bytes) -> None: ...
    def sync(self) -> None: ...
    def snapshot(self, path: Path) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot be checkpointed to a directory")

    def close(self) -> None: ...


class _DictBackend(_Backend):
    """Keys kept sorted (sortedcontainers): a prefix scan or range delete is a bisection
    and a walk over what it returns. With a plain dict each one walked every key of every
    table: 40% of a 76k-event learner run, growing with the store."""

    def __init__(self):
        self.d: SortedDict = SortedDict()

    def get(self, key):
        return self.d.get(key)

    def write(self, prefix, pending, deleted, encode):
        d = self.d
        for k, v in pending.items():
            if v is deleted:
                d.pop(prefix + k.encode(), None)
            else:
                d[prefix + k.encode()] = encode(v)

    def _range(self, prefix: bytes) -> list[bytes]:
        end = _prefix_end(prefix)
        return list(self.d.irange(prefix, end, inclusive=(True, False)) if end else self.d.irange(prefix))

    def scan(self, prefix):
        d = self.d
        for k in self._range(prefix):
            yield k, d[k]

    def scan_keys(self, prefix):
        return self._range(prefix)

    def delete_range(self, start, end):
        d = self.d
        for k in list(d.irange(start, end, inclusive=(True, False))):
            del d[k]

    def sync(self):
        pass

    def close(self):
        pass


_SHARED: list = []  # the process's block cache and write buffer manager (_shared_memory)


def _shared_memory():
    """One block cache (64 MiB) and one memtable budget (256 MiB) for every store this
    process opens: ``learn --partitions 4`` opens four, which peaked at 1,485 MiB at 1M
    events with a cache and two 128 MiB memtables each. A single store is unaffected
    (its memtables stay under the budget)."""
    if not _SHARED:
        from rocksdict import Cache, WriteBufferManager

        _SHARED.extend([Cache(64 << 20), WriteBufferManager(256 << 20, False)])
    return _SHARED[0], _SHARED[1]


class _RocksBackend(_Backend):
    def __init__(self, path: str):
        from rocksdict import BlockBasedOptions, Options, Rdict, WriteOptions

        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        opts.increase_parallelism(max(1, os.cpu_count() or 1))
        # Most lookups are for keys not written yet (a new URL, digest, form): bloom
        # filters on the files and on the memtable answer those without a search
        # (measured, memtable filter: a miss 6 -> 3 us in a learner run).
        table = BlockBasedOptions()
        table.set_bloom_filter(10, False)
        cache, memtables = _shared_memory()
        table.set_block_cache(cache)
        opts.set_write_buffer_manager(memtables)
        opts.set_block_based_table_factory(table)
        opts.set_memtable_prefix_bloom_ratio(0.1)
        opts.set_memtable_whole_key_filtering(True)
        # 128 MiB memtables (two at most): hot keys (cluster records, counts) are
        # rewritten in memory and fewer files reach compaction. Measured at 1M events,
        # paired runs: 6-7% faster than 64 MiB, peak RSS 685 -> 750 MiB.
        opts.set_write_buffer_size(128 << 20)
        self.db = Rdict(path, opts)
        # No WAL: writes reach the store in batches from the tables' buffers, so a crash
        # between checkpoints loses buffered state anyway; ``sync`` at a checkpoint
        # persists the memtable instead.
        wo = WriteOptions()
        # rocksdict.pyi declares disable_wal a method; it is a settable property (0.3.29)
        wo.disable_wal = True  # type: ignore[method-assign, assignment]
        self.db.set_write_options(wo)

    def get(self, key):
        return self.db.get(key)

    def write(self, prefix, pending, deleted, encode):
        from rocksdict import WriteBatch

        # one pass, no intermediate lists: this loop runs for every state write
        wb = WriteBatch(raw_mode=True)
        put, delete = wb.put, wb.delete
        for k, v in pending.items():
            if v is deleted:
                delete(prefix + k.encode())
            else:
                put(prefix + k.encode(), encode(v))
        self.db.write(wb)

    def scan(self, prefix):
        return scan_prefix(self.db, prefix)

    def scan_keys(self, prefix):
        return (k for k, _ in scan_prefix(self.db, prefix))

    def delete_range(self, start, end):
        self.db.delete_range(start, end)

    def sync(self):
        self.db.flush()

    def snapshot(self, path):
        from rocksdict import Checkpoint

        self.db.flush()
        Checkpoint(self.db).create_checkpoint(str(path))

    def close(self):
        self.db.close()


def scan_prefix(db, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of a raw-mode rocksdict ``db`` under ``prefix``, in key order."""
    it = db.iter()
    it.seek(prefix)
    while it.valid():
        k = it.key()
        if not k.startswith(prefix):
            break
        yield k, it.value()
        it.next()


class Store:
    """A set of named tables over one backend. ``flush`` makes everything durable."""

    def __init__(
        self,
        backend: _Backend,
        cache_entries: int = 200_000,
        cleanup: str | None = None,
        cache_mib: float = 0,
        namespace: str = "",
    ):
        self._b = backend
        self._tables: dict[str, Table] = {}
        self._cache_entries = cache_entries
        self._cache_bytes = int(cache_mib * (1 << 20))
        self._cleanup = cleanup
        self._namespace = namespace  # prefixed to table names: a store within a store
        self._owner = not namespace  # a namespace leaves syncing and closing the backend to its owner
        self._filter_min = 0  # keys a table's filter holds at least (0: keyfilter.py's default)
        self._share = 1  # namespaces splitting the backend's memory (``namespace``)

    @property
    def cache_entries(self) -> int:
        """Entries a table caches at most (what a learner's own caches size themselves by)."""
        return self._cache_entries

    def namespace(self, name: str, share: int = 1) -> Store:
        """Tables of their own over this store's backend, named ``name`` + table (a
        shard's learner, learner/shards.py); ``share`` namespaces split the caches. Its
        ``flush`` and ``close`` write its tables only: the backend is this store's."""
        if not name or name[-1] != "/":
            raise ValueError(f"a namespace ends with '/': {name!r}")
        ns = Store(
            self._b,
            max(1, self._cache_entries // share),
            cache_mib=self._cache_bytes / share / (1 << 20),
            namespace=self._namespace + name,
        )
        ns._filter_min = max(1 << 12, (self._filter_min or keyfilter.MIN_CAPACITY) // share)
        ns._share = self._share * share
        return ns

    def table(
        self,
        name: str,
        keep: bool = True,
        cache_entries: int | None = None,
        type: Any = None,
        exact_cap: bool = False,
        flush_at: int | None = None,
        filtered: bool = False,
    ) -> Table:
        """The table ``name``. ``keep=False`` for tables mostly written and scanned, whose
        entries are not worth caching once written; ``cache_entries`` below the store's
        for tables whose entries are rarely read twice; ``type`` (a msgspec type) to
        decode values into instead of plain lists and dicts; ``exact_cap`` to cache
        ``cache_entries`` even above the store's setting (a table of bounded key space);
        ``flush_at`` pending writes before they go to the backend (default: 20,000 or
        the cache size), larger to coalesce rewrites of hot keys; ``filtered`` to keep
        an in-memory filter of the keys (4 MiB, or 4-16 bytes a key past a million) for tables mostly asked
        for keys they do not hold. The first call decides."""
        t = self._tables.get(name)
        if t is None:
            cap = (
                self._cache_entries
                if cache_entries is None
                else cache_entries
                if exact_cap
                else min(max(1, cache_entries // self._share), self._cache_entries)
            )
            t = self._tables[name] = Table(
                self._b,
                self._namespace + name,
                cap,
                keep,
                type,
                flush_at,
                filtered,
                self._cache_bytes,
                self._filter_min,
            )
        return t

    def flush(self) -> None:
        for t in self._tables.values():
            t.flush()
        if self._owner:
            self._b.sync()

    def snapshot(self, path: Path) -> None:
        """Everything written so far as a database in ``path`` (state/durable.py)."""
        self.flush()
        self._b.snapshot(path)

    def close(self) -> None:
        self.flush()
        if not self._owner:
            return
        self._b.close()
        if self._cleanup:
            shutil.rmtree(self._cleanup, ignore_errors=True)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def memory_store(cache_entries: int = 200_000, cache_mib: float = 0) -> Store:
    return Store(_DictBackend(), cache_entries, cache_mib=cache_mib)


def rocks_store(path: str | Path | None = None, cache_entries: int = 200_000, cache_mib: float = 0) -> Store:
    """RocksDB in ``path``; with no path a temporary directory removed on close."""
    cleanup = None
    if path is None:
        path = cleanup = tempfile.mkdtemp(prefix="dustonline-state-")
    Path(path).mkdir(parents=True, exist_ok=True)
    return Store(_RocksBackend(str(path)), cache_entries, cleanup=cleanup, cache_mib=cache_mib)
