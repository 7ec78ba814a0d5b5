"""The learner's store on a Faust table: one partition's slice of a RocksDB-backed table
with a changelog topic, written only at checkpoints.

The learner buffers its writes (``dustonline.state.store``) and expects a checkpoint to be a
consistency point. Faust writes a table key to its changelog as soon as it is set, and
commits offsets on its own schedule; a learner writing straight into the table would let
a crash keep the state of events whose offsets were never committed, and count them
twice on replay. So writes between checkpoints stay in an overlay
(``dustonline.state.overlay``); ``commit`` puts them into the table's local RocksDB in one
atomic batch and hands them to the worker, which sends them to the changelog partition as
one record batch ending with the source offset they cover, and acks the source events
only then. A restarted or replacement worker restores exactly a checkpoint and skips the
events it already holds.
"""

from __future__ import annotations

from dustonline.state.overlay import OFFSET_KEY, OverlayBackend

from .faust_compat import partition_db

__all__ = ["OFFSET_KEY", "FaustTableBackend"]


class FaustTableBackend(OverlayBackend):
    """``close`` (at a revoke) lets go of Faust's RocksDB handle, which Faust stops
    referencing at a revoke and leaves to the garbage collector to close. Held here (a
    learner is a reference cycle, freed only by a collection), its LOCK made the next
    assignment of the partition to this worker retry for 30 s and crash."""

    def __init__(self, table, partition: int):
        super().__init__(partition_db(table, partition))  # faust's rocksdict.Rdict (raw mode)
        self.table = table
        self.partition = partition
