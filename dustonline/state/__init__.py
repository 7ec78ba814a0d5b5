"""Learner state: named tables on RocksDB (rocksdict) or in memory, and the append-only
chunk logs the rolling window indexes with."""

from .store import Store, Table, memory_store, rocks_store

__all__ = ["Store", "Table", "memory_store", "rocks_store"]
