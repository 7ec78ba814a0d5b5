"""A learn run: event files through a learner, every record accounted for, and with
``--state`` a checkpoint every ``storage.checkpoint_every`` records, so a killed run
resumes where its last checkpoint left off and writes the rules an uninterrupted run
writes (state/durable.py)."""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections import Counter
from pathlib import Path

from .config import Config
from .console import progress_bar, tune_gc
from .events.deadletter import DeadLetter
from .events.readers import Rejected, read_events
from .learner.online import OnlineLearner
from .learner.parallel import ParallelLearner
from .learner.partitioned import PartitionedLearner
from .learner.shards import shard_count
from .state.durable import RunRecord, StateDir, identify
from .state.store import Store, rocks_store


def usable_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class LearnRun:
    """``dustonline learn``'s work, and what ``learn`` and ``demo`` print about it."""

    def __init__(
        self,
        inputs: list[str],
        cfg: Config,
        state: str | Path | None = None,
        fmt: str | None = None,
        dead_letter: str | Path | None = None,
        partitions: int | None = None,
        processes: int | None = None,
    ):
        if partitions is not None and partitions < 1:
            raise ValueError(f"--partitions must be >= 1, got {partitions}")
        if processes is not None and processes < 1:
            raise ValueError(f"--processes must be >= 1, got {processes}")
        self.inputs, self.cfg = list(inputs), cfg
        self.fmt = fmt or cfg.input.format
        # shards, each in a namespace of the one store (learner/shards.py); None: one learner
        shards = shard_count(cfg, partitions or 1) if partitions or cfg.learning.shards else None
        self.state = StateDir(state) if state is not None else None
        last = self.state.recover() if self.state is not None else None
        # shards learn in processes of their own, one per core; a state keeps the number
        # it was started with (a store per process)
        procs = min(shards or 1, processes or usable_cores())
        if last is not None and shards:
            procs = min(last.processes, shards)  # (another shard count is refused below)
        self.processes = procs
        self.store: Store | None = None  # the parent's store, or the one learner's
        self.learner: OnlineLearner | PartitionedLearner | ParallelLearner
        if procs > 1:
            self.learner = self._in_processes(cfg, partitions or 1, procs)
        else:
            self.learner = self._in_process(cfg, partitions or 1, shards)
        merged = self.state.extra("merger") if self.state is not None else None
        if merged is not None and not isinstance(self.learner, OnlineLearner):
            self.learner.merger.restore(merged)
        s = self.learner.summary()
        self.record = (
            self.state.begin(last, identify(self.inputs, self.fmt, cfg, shards), s["events"], s["ignored"])
            if self.state is not None
            else RunRecord(identity=identify([], self.fmt, cfg, shards))
        )
        self.record.processes = procs
        self.resumed_at = self.record.position
        self.dlq = DeadLetter(dead_letter)
        self.dlq.start(self.record.dead_letter_bytes if self.resumed_at else None, self.record.rejected)
        self.skipped: Counter[str] = Counter()
        self.seconds = 0.0

    def _in_processes(self, cfg: Config, partitions: int, procs: int) -> ParallelLearner:
        if self.state is None:
            return ParallelLearner(cfg, partitions, procs)
        self.store = rocks_store(self.state.store_path(), 1024, 8)  # the joins' digests, the held events
        return ParallelLearner(
            cfg,
            partitions,
            procs,
            root=self.store,
            paths=[self.state.part_path(n) for n in range(procs)],
            lock=self.state.processes_lock,
        )

    def _in_process(self, cfg: Config, partitions: int, shards: int | None) -> OnlineLearner | PartitionedLearner:
        S = cfg.storage
        self.store = store = rocks_store(
            self.state.store_path() if self.state is not None else None, S.cache_entries, S.cache_mib
        )
        if not shards:
            return OnlineLearner(cfg, store)
        return PartitionedLearner(cfg, partitions, lambda s: store.namespace(f"{s}/", shards), root=store)

    def run(self, progress: bool = True) -> None:
        """Every record of the inputs (after those a resumed run's checkpoint holds), then
        the rules derived from the tail of the stream."""
        tune_gc()
        rec, learner, dlq = self.record, self.learner, self.dlq
        items = read_events(self.inputs, self.fmt, self.cfg.input.max_url_length, skipped=self.skipped)
        if rec.position:
            if progress:
                print(f"resuming from the checkpoint at record {rec.position:,}", file=sys.stderr)
            for _ in itertools.islice(items, rec.position):
                pass
            self.skipped.clear()
            self.skipped.update(rec.skipped)
        every = self.cfg.storage.checkpoint_every if self.state is not None else 0
        pos = rec.position
        bar = progress_bar(progress, initial=pos)
        t0 = time.perf_counter()
        try:
            for item in items:
                if isinstance(item, Rejected):
                    dlq.add(item)
                else:
                    learner.learn_one(item)
                pos += 1
                if every and pos % every == 0:
                    self._commit(pos)
                if bar is not None:
                    bar.update(1)
            learner.flush()  # derive rules from the tail of the stream too
            learner.checkpoint()
            if self.state is not None:
                self._commit(pos)
        finally:
            if bar is not None:
                bar.close()
            dlq.close()
        self.seconds = time.perf_counter() - t0

    def _commit(self, pos: int) -> None:
        assert self.state is not None
        self.learner.checkpoint()
        rec = self.record
        rec.position = pos
        rec.rejected = dict(self.dlq.counts)
        rec.skipped = dict(self.skipped)
        rec.dead_letter_bytes = self.dlq.tell()
        learner = self.learner
        extra = {"merger": learner.merger.dump()} if not isinstance(learner, OnlineLearner) else None
        parts = learner.snapshot if isinstance(learner, ParallelLearner) else None
        assert self.store is not None  # a --state run has one
        self.state.commit(self.store, rec, extra, parts)

    def _why_no_rules(self, s: dict) -> str:
        """A small crawl that learns nothing says why, instead of an empty file."""
        L = self.cfg.learning
        shared = s["urls"] - s["clusters"]  # URLs in a cluster with another URL
        return (
            f"no rules: {shared:,} URLs shared their content with another URL. A rewrite rule needs "
            f"{L.min_freq} dup-clusters of one URL shape on a site and {L.min_supp} URL pairs it merges, "
            f"none of different contents; a dropped parameter needs {L.min_freq} clusters where it varied "
            f"(learning.confidence {L.confidence} sets these; a lower one learns from less: "
            f"docs/configuration.md). {s['candidates']:,} candidates fell short."
        )

    def finish(self) -> None:
        """The rules are out: the next command on this state starts a new run."""
        if self.state is not None:
            self.state.mark_done(self.record)

    def close(self) -> None:
        self.learner.close()
        if self.state is not None:
            self.state.release()

    # ------------------------------------------------------------ accounting
    def counts(self) -> dict[str, int]:
        """This run's records: read = learned + ignored + rejected (a resumed run counts
        what its checkpoint had counted, so it reports what an uninterrupted run does)."""
        s, rec = self.learner.summary(), self.record
        events = s["events"] - rec.base_events
        ignored = s["ignored"] - rec.base_ignored
        skipped = sum(self.skipped.values())
        return {
            "read": events + skipped + self.dlq.total,
            "learned": events - ignored,
            "ignored": ignored + skipped,
            "skipped": skipped,
            "rejected": self.dlq.total,
        }

    def summary_lines(self, rules_written: int, rules_dest: str, dead_letter: str | None) -> list[str]:
        c, s = self.counts(), self.learner.summary()
        done = c["read"] - self.resumed_at
        rate = done / self.seconds if self.seconds > 0 else 0.0
        why = "non-2xx, empty payload or no content evidence"
        if self.skipped:
            why += "; not fetches: " + ", ".join(f"{n:,} {r}" for r, n in sorted(self.skipped.items()))
        lines = [
            f"read        {c['read']:>10,}  records ({rate:,.0f}/s, {self.seconds:.1f} s)",
            f"learned     {c['learned']:>10,}",
            f"ignored     {c['ignored']:>10,}  ({why})",
            f"rejected    {c['rejected']:>10,}  {self.dlq.summary() if self.dlq.total else ''}".rstrip(),
            f"urls        {s['urls']:>10,}",
            f"clusters    {s['clusters']:>10,}",
            f"candidates  {s['candidates']:>10,}",
            f"active rules{rules_written:>10,}  -> {'stdout' if rules_dest == '-' else rules_dest}",
        ]
        if isinstance(self.learner, (PartitionedLearner, ParallelLearner)):
            n = self.processes
            lines.append(f"shards      {self.learner.shards:>10,}  in {n} process{'es' if n > 1 else ''}")
            if s.get("joined"):
                n = s["joined"]
                what = f"registered domain{'s' if n > 1 else ''} to another's shard"
                lines.append(f"joined      {n:>10,}  {what} ({s['relearned']:,} URLs handed over)")
                joins = self.learner.joins
                if joins is not None:
                    pairs = [f"{a} -> {b}" for a, b in list(joins.partner.items())[:3]]
                    lines.append("            " + ", ".join(pairs) + (", ..." if n > 3 else ""))
        if rules_written == 0:
            lines.append(self._why_no_rules(s))
        if self.state is not None:
            how = f"resumed at record {self.resumed_at:,}" if self.resumed_at else "new"
            lines.append(
                f"state       {self.state.root}: run {self.record.runs}, {how}; {s['events']:,} events over all runs"
            )
        if self.dlq.total and dead_letter:
            lines.append(f"dead letters of this run in {dead_letter} (rewritten by each run)")
        return lines
