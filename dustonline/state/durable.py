"""Crash-safe state for ``dustonline learn --state DIR``.

RocksDB runs without a write-ahead log and the learner buffers its writes, so the live
database is only consistent at a checkpoint; after ``kill -9`` it holds some of the
writes since, and a rerun that trusted it continued from a state no input position
matches. So the live database is never trusted across processes:

- ``DIR/checkpoint/`` is the last consistent state: a RocksDB checkpoint of every store
  (hard links to the immutable table files: milliseconds), plus ``run.json``, the input
  position it covers and what the run has counted so far, written last. A checkpoint is
  built in ``checkpoint.new/`` and swapped in by renames, so a crash at any moment
  leaves one complete checkpoint to start from.
- ``DIR/live/`` is rebuilt from the checkpoint at every start (hard links again), so the
  writes of a killed process are dropped, and the run resumes at the recorded position.

A run whose shards learn in processes (learner/parallel.py) keeps each process's store
in ``w<N>/`` beside the main one, in ``live/`` and in the checkpoint alike; the state's
record says how many, and every later run over it learns in that many processes.

The unfinished run in a checkpoint must be resumed by the same command (inputs, format,
config, shards): anything else is refused, not merged. A finished run is the start
of the next one, which may read other inputs (state that continues across runs).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import mmh3
import msgspec

from .store import Store

try:
    import fcntl
except ImportError:  # not a POSIX system: no locks (StateDir._hold)
    fcntl = None  # type: ignore[assignment]

RUN_FILE = "run.json"
_FINGERPRINT_BYTES = 1 << 20


class StateError(ValueError):
    """The state directory cannot be used for this command (says what to do instead)."""


class InputId(msgspec.Struct, frozen=True):
    """A file as a rerun must find it again: size and a hash of its first and last MiB
    (not mtime: a copy of the same crawl log is the same input)."""

    path: str
    size: int = -1
    fingerprint: str = ""


class RunIdentity(msgspec.Struct, frozen=True):
    inputs: list[InputId]
    format: str
    config: str  # hash of the sections that decide what is learned
    partitions: int = 0  # shards (learner/shards.py); 0: one learner. The name is from before shards


class RunRecord(msgspec.Struct):
    identity: RunIdentity
    position: int = 0  # items of read_events consumed (events and rejected records)
    done: bool = False
    runs: int = 1  # runs over this state, this one included
    # this run's counts up to ``position``, restored on resume so the summary is the
    # uninterrupted run's
    rejected: dict[str, int] = {}
    skipped: dict[str, int] = {}
    dead_letter_bytes: int = 0
    # the learner's cumulative counters when this run started: this run's are the difference
    base_events: int = 0
    base_ignored: int = 0
    # processes the shards learn in, each with a store of its own (``part_path``); 1: the
    # shards, or the one learner, in the main store
    processes: int = 1


def identify(inputs: list[str], fmt: str, config, shards: int | None) -> RunIdentity:
    learned = {k: v for k, v in config.to_dict().items() if k in ("learning", "clustering", "window", "input")}
    return RunIdentity(
        inputs=[_input_id(p) for p in inputs],
        format=fmt,
        config=format(mmh3.hash128(msgspec.json.encode(learned)), "032x"),
        partitions=shards or 0,
    )


def _input_id(path: str) -> InputId:
    if path == "-":
        return InputId("-")
    p = Path(path)
    size = p.stat().st_size
    h = mmh3.mmh3_x64_128()
    with open(p, "rb") as fh:
        h.update(fh.read(_FINGERPRINT_BYTES))
        if size > _FINGERPRINT_BYTES:
            fh.seek(max(_FINGERPRINT_BYTES, size - _FINGERPRINT_BYTES))
            h.update(fh.read())
    return InputId(str(p.resolve()), size, h.digest().hex())


def _differences(a: RunIdentity, b: RunIdentity) -> list[str]:
    out = []
    if [i.path for i in a.inputs] != [i.path for i in b.inputs]:
        out.append("other input files or another order: " + " ".join(i.path for i in a.inputs))
    elif a.inputs != b.inputs:
        changed = [i.path for i, j in zip(a.inputs, b.inputs) if i != j]
        out.append("input files changed since: " + " ".join(changed))
    if a.format != b.format:
        out.append(f"--format {a.format}")
    if a.config != b.config:
        out.append("another configuration (learning, clustering, window or input)")
    if a.partitions != b.partitions:
        out.append(f"{a.partitions or 'no'} shards (learning.shards, or --partitions when it is 0)")
    return out


def _shards_said(n: int) -> str:
    return f"{n} shards" if n else "one learner (no shards)"


class StateDir:
    """``DIR`` of ``learn --state``: where the stores live and how they are checkpointed
    (shards are namespaces of the one store, or of their process's); one run's at a time."""

    def __init__(self, root: str | Path, wait: float = 60.0):
        self.root = Path(root)
        self.live = self.root / "live"
        self.ckpt = self.root / "checkpoint"
        self._new = self.root / "checkpoint.new"
        self._old = self.root / "checkpoint.old"
        # held by every shard process of the run (shared): a new run waits for a killed
        # run's processes to be gone before it rebuilds ``live/`` under them
        self.processes_lock = self.root / "lock.processes"
        self._wait = wait
        self._held: BinaryIO | None = None

    def store_path(self) -> Path:
        return self.live

    def part_path(self, n: int) -> Path:
        """The store of shard process ``n``, beside the main one."""
        return self.live / f"w{n}"

    # ------------------------------------------------------------ start
    def recover(self) -> RunRecord | None:
        """Take the directory for this run (``_hold``), pick the newest complete checkpoint
        and rebuild ``live/`` from it; returns its run record (None: a new state)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._hold()
        if (self.root / "CURRENT").exists() or any(self.root.glob("p*/CURRENT")):
            raise StateError(
                f"{self.root} holds state written before crash-safe checkpoints (a RocksDB "
                "at its top level), which a crash may have left inconsistent; learn into a "
                "new --state directory"
            )
        if not self.ckpt.exists():
            # a crash between the two renames of a swap: the new one is complete
            for cand in (self._new, self._old):
                if (cand / RUN_FILE).exists():
                    cand.rename(self.ckpt)
                    break
        for leftover in (self._new, self._old):
            shutil.rmtree(leftover, ignore_errors=True)
        shutil.rmtree(self.live, ignore_errors=True)
        if not (self.ckpt / RUN_FILE).exists():
            return None
        record = msgspec.json.decode((self.ckpt / RUN_FILE).read_bytes(), type=RunRecord)
        if any(p.is_dir() for p in self.ckpt.glob("p[0-9]*")):
            raise StateError(
                f"{self.root} holds a store per partition, as `learn --partitions` wrote before shards "
                "(one store now); learn into a new --state directory"
            )
        parts = [f"w{n}" for n in range(record.processes)] if record.processes > 1 else []
        missing = [m for m in parts if not (self.ckpt / m).is_dir()]
        if missing:
            raise StateError(
                f"{self.ckpt} lacks the stores of shard processes {', '.join(missing)} that its run "
                "record names; learn into a new --state directory"
            )
        tmp = self.root / "live.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        _link_copy(self.ckpt, tmp, skip={RUN_FILE, "extra"})
        tmp.rename(self.live)
        return record

    def _hold(self) -> None:
        """This run's alone until it ends: another run on the directory is refused, and
        the shard processes of a killed one, which see their parent gone only when they
        next read from it (after the work in hand), are waited for: until they exit they
        may still write to ``live/``."""
        if fcntl is None:
            return
        fh = open(self.root / "lock", "ab")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise StateError(f"{self.root} is in use by another dustonline learn; wait for it to end") from None
        with open(self.processes_lock, "ab") as procs:
            deadline = time.monotonic() + self._wait
            said = False
            while True:
                try:
                    fcntl.flock(procs, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not said:
                        print(
                            f"waiting for the shard processes of an earlier run on {self.root} to exit", file=sys.stderr
                        )
                        said = True
                    if time.monotonic() > deadline:
                        fh.close()
                        raise StateError(
                            f"shard processes of an earlier run on {self.root} are still running after "
                            f"{self._wait:.0f} s (`fuser {self.processes_lock}` names them); stop them and rerun"
                        ) from None
                    time.sleep(0.05)
        self._held = fh

    def release(self) -> None:
        """The directory is free for the next run."""
        if self._held is not None:
            self._held.close()
            self._held = None

    def extra(self, name: str) -> bytes | None:
        """A blob saved with the checkpoint (state kept outside the stores)."""
        p = self.ckpt / "extra" / name
        return p.read_bytes() if p.exists() else None

    def begin(self, last: RunRecord | None, identity: RunIdentity, events: int, ignored: int) -> RunRecord:
        """The run this command makes: the unfinished one resumed, or a new one."""
        if last is not None and not last.done:
            if any(i.path == "-" for i in last.identity.inputs):
                raise StateError(
                    f"{self.root} holds an unfinished run that read standard input, which cannot be "
                    "read again; learn into a new --state directory (or from a file, to resume)"
                )
            diff = _differences(last.identity, identity)
            if diff:
                raise StateError(
                    f"{self.root} holds an unfinished run of another command ({'; '.join(diff)}); "
                    "rerun that command to finish it, or learn into a new --state directory"
                )
            return last
        if last is not None and last.identity.partitions != identity.partitions:
            # the learners of another shard count are in other namespaces: continuing would
            # start empty learners beside the ones the state holds
            had, want = last.identity.partitions, identity.partitions
            raise StateError(
                f"{self.root} holds {_shards_said(had)} and this run would learn {_shards_said(want)}: to "
                f"continue it set learning.shards: {had} in the config"
                f"{'' if had else ' (one learner, the default before shards)'}, or learn into a new --state directory"
            )
        return RunRecord(
            identity=identity,
            runs=(last.runs + 1) if last is not None else 1,
            base_events=events,
            base_ignored=ignored,
        )

    # ------------------------------------------------------------ checkpoints
    def commit(
        self,
        store: Store,
        record: RunRecord,
        extra: dict[str, bytes] | None = None,
        parts: Callable[[Callable[[int], Path]], None] | None = None,
    ) -> None:
        """The store and ``record`` as the new checkpoint, atomically (the learner's own
        ``checkpoint`` comes first: it writes its metadata into the store). ``parts``
        snapshots the shard processes' stores, given where process N puts its own."""
        shutil.rmtree(self._new, ignore_errors=True)
        self._new.mkdir()
        store.snapshot(self._new / "db")
        for f in (self._new / "db").iterdir():  # the store's files sit at the top of the checkpoint
            f.rename(self._new / f.name)
        (self._new / "db").rmdir()
        if parts is not None:
            parts(lambda n: self._new / f"w{n}")
        if extra:
            (self._new / "extra").mkdir()
            for k, v in extra.items():
                _write_synced(self._new / "extra" / k, v)
        _write_synced(self._new / RUN_FILE, msgspec.json.encode(record))  # last: marks it complete
        if self.ckpt.exists():
            self.ckpt.rename(self._old)
        self._new.rename(self.ckpt)
        _sync_dir(self.root)
        shutil.rmtree(self._old, ignore_errors=True)

    def mark_done(self, record: RunRecord) -> None:
        """The run is over (its rules written): the next command starts a new run."""
        record.done = True
        tmp = self.ckpt / (RUN_FILE + ".tmp")
        _write_synced(tmp, msgspec.json.encode(record))
        os.replace(tmp, self.ckpt / RUN_FILE)
        _sync_dir(self.ckpt)


def hold_shared(path: str | Path) -> BinaryIO | None:
    """A shard process's hold on ``StateDir.processes_lock``, for as long as the file
    returned stays open (None where there are no locks)."""
    if fcntl is None:
        return None
    fh = open(path, "ab")  # the caller keeps it open
    fcntl.flock(fh, fcntl.LOCK_SH)
    return fh


def _link_copy(src: Path, dst: Path, skip: set[str]) -> None:
    """A checkpoint's files into ``dst``: table files hard-linked (immutable; RocksDB
    never rewrites one), the rest copied, since the opened database changes them; the
    shard processes' stores (``w<N>/``) likewise."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.name in skip:
            continue
        if f.is_dir():
            if f.name[:1] == "w" and f.name[1:].isdigit():
                _link_copy(f, dst / f.name, skip=set())
            continue
        if f.suffix == ".sst":
            try:
                os.link(f, dst / f.name)
                continue
            except OSError:  # a file system without hard links
                pass
        shutil.copy2(f, dst / f.name)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
