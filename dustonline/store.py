"""Learner state behind a small interface: named tables of str -> msgpack-able values.

Dict-like on purpose: a Faust worker maps each table onto a Faust ``Table`` (RocksDB
with a changelog topic) without the core knowing. Both backends here share one write-back
cache, so a unit test on the memory backend sees the same copy semantics as RocksDB:
a value read and mutated is not stored until it is assigned back.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import msgspec

_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder()
_MISSING = object()
_DELETED = object()


class Table:
    """One namespace of a store. Reads go through a cache; writes are batched."""

    def __init__(self, backend: "_Backend", name: str, cache_entries: int):
        self._b = backend
        self._prefix = name.encode() + b"\x00"
        self._cache: dict[str, Any] = {}
        self._dirty: set[str] = set()
        self._cap = cache_entries

    def get(self, key: str, default: Any = None) -> Any:
        v = self._cache.get(key, _MISSING)
        if v is _MISSING:
            raw = self._b.get(self._prefix + key.encode())
            v = _DELETED if raw is None else _dec.decode(raw)
            self._remember(key, v)
        return default if v is _DELETED else v

    def __getitem__(self, key: str) -> Any:
        v = self.get(key, _MISSING)
        if v is _MISSING:
            raise KeyError(key)
        return v

    def __contains__(self, key: str) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __setitem__(self, key: str, value: Any) -> None:
        self._remember(key, value)
        self._dirty.add(key)

    def __delitem__(self, key: str) -> None:
        self._remember(key, _DELETED)
        self._dirty.add(key)

    def pop(self, key: str, default: Any = None) -> Any:
        v = self.get(key, _MISSING)
        if v is _MISSING:
            return default
        del self[key]
        return v

    def _remember(self, key: str, value: Any) -> None:
        if len(self._cache) >= self._cap and key not in self._cache:
            self.flush(drop=True)
        self._cache[key] = value

    def flush(self, drop: bool = False) -> None:
        """Write dirty entries in one batch. With ``drop``, also forget the older half of
        the cache (insertion order): recent entries, the likely hot ones, stay."""
        if self._dirty:
            puts, dels = [], []
            for k in self._dirty:
                v = self._cache[k]
                if v is _DELETED:
                    dels.append(self._prefix + k.encode())
                else:
                    puts.append((self._prefix + k.encode(), _enc.encode(v)))
            self._b.write(puts, dels)
            self._dirty.clear()
        if drop:
            cache = self._cache
            for k in list(itertools.islice(cache, len(cache) // 2 + 1)):
                del cache[k]

    def items(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        """Entries whose key starts with ``prefix``, in key order (deterministic)."""
        self.flush()
        full = self._prefix + prefix.encode()
        cut = len(self._prefix)
        for k, raw in self._b.scan(full):
            yield k[cut:].decode(), _dec.decode(raw)

    def keys(self, prefix: str = "") -> Iterator[str]:
        for k, _ in self.items(prefix):
            yield k

    def drop_prefix(self, prefix: str) -> None:
        """Delete every key under ``prefix`` in one range delete. Cached entries under it
        are left to age out: callers move on to a new prefix (an epoch) and never read
        the old one again."""
        self.flush()
        start = self._prefix + prefix.encode()
        self._b.delete_range(start, start[:-1] + bytes([start[-1] + 1]) if start else b"\xff")


class _Backend:
    def get(self, key: bytes) -> bytes | None: ...
    def write(self, puts: list[tuple[bytes, bytes]], dels: list[bytes]) -> None: ...
    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]: ...
    def delete_range(self, start: bytes, end: bytes) -> None: ...
    def close(self) -> None: ...


class _DictBackend(_Backend):
    def __init__(self):
        self.d: dict[bytes, bytes] = {}

    def get(self, key):
        return self.d.get(key)

    def write(self, puts, dels):
        for k, v in puts:
            self.d[k] = v
        for k in dels:
            self.d.pop(k, None)

    def scan(self, prefix):
        for k in sorted(k for k in self.d if k.startswith(prefix)):
            yield k, self.d[k]

    def delete_range(self, start, end):
        for k in [k for k in self.d if start <= k < end]:
            del self.d[k]

    def close(self):
        pass


class _RocksBackend(_Backend):
    def __init__(self, path: str):
        from rocksdict import BlockBasedOptions, Cache, Options, Rdict

        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        opts.increase_parallelism(max(1, os.cpu_count() or 1))
        table = BlockBasedOptions()
        table.set_bloom_filter(10, False)  # most lookups are for keys not stored yet
        table.set_block_cache(Cache(64 << 20))
        opts.set_block_based_table_factory(table)
        self.db = Rdict(path, opts)

    def get(self, key):
        return self.db.get(key)

    def write(self, puts, dels):
        from rocksdict import WriteBatch

        wb = WriteBatch(raw_mode=True)
        for k, v in puts:
            wb.put(k, v)
        for k in dels:
            wb.delete(k)
        self.db.write(wb)

    def scan(self, prefix):
        it = self.db.iter()
        it.seek(prefix)
        while it.valid():
            k = it.key()
            if not k.startswith(prefix):
                break
            yield k, it.value()
            it.next()

    def delete_range(self, start, end):
        self.db.delete_range(start, end)

    def close(self):
        self.db.close()


class Store:
    """A set of named tables over one backend. ``flush`` makes everything durable."""

    def __init__(self, backend: _Backend, cache_entries: int = 200_000, cleanup: str | None = None):
        self._b = backend
        self._tables: dict[str, Table] = {}
        self._cache_entries = cache_entries
        self._cleanup = cleanup

    def table(self, name: str) -> Table:
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = Table(self._b, name, self._cache_entries)
        return t

    def flush(self) -> None:
        for t in self._tables.values():
            t.flush()

    def close(self) -> None:
        self.flush()
        self._b.close()
        if self._cleanup:
            shutil.rmtree(self._cleanup, ignore_errors=True)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def memory_store(cache_entries: int = 200_000) -> Store:
    return Store(_DictBackend(), cache_entries)


def rocks_store(path: str | Path | None = None, cache_entries: int = 200_000) -> Store:
    """RocksDB in ``path``; with no path a temporary directory removed on close."""
    cleanup = None
    if path is None:
        path = cleanup = tempfile.mkdtemp(prefix="dustonline-state-")
    Path(path).mkdir(parents=True, exist_ok=True)
    return Store(_RocksBackend(str(path)), cache_entries, cleanup=cleanup)
