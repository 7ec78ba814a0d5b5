"""The shards of shards.py in worker processes: ``dustonline learn`` on every core.

Between rounds a shard's learner needs nothing from another shard (shards.py), so the
shards can learn in other processes and meet only at rounds. The parent reads the input
and sends each event to the process holding its site's shard; at every round, as
``ShardGroup`` does in one process, it has every shard derive, collects what each counted
across sites, hands each its share of the others' counts (``Rounds``), and merges the rule
changes (rules/merge.py). Each shard learns the same events in the same order, and
derives and pools at the same points, as in one process: the rules are the same byte
for byte; only the wall time differs (docs/performance.md).

Each process keeps its shards in a RocksDB of its own: temporary, or with ``--state`` a
store the run's checkpoints hold beside the parent's (state/durable.py). At a checkpoint
every process writes its learners' metadata and hands the parent the rule changes it has
not yet sent; the parent keeps what it alone holds (the joins, the events it holds for
joined domains, its event count) in its own store and the merged rules beside them. What
the rounds kept between them is not kept: a resumed run pools whole shares the first
time, as a resumed ``ShardGroup`` does.

A process that fails ends the run with its traceback; one that is killed ends it with
its exit code; none outlives the run (daemon processes), but one whose parent was
killed -9 sees it only when it next reads from it: a ``--state`` run's processes hold a
lock that a rerun waits on (state/durable.py).
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import msgspec

from ..config import Config
from ..events.event import FetchEvent
from ..events.routing import partition_of_host
from ..rules.merge import RuleMerger
from ..rules.ruleset import Rule
from ..rules.urls import host_of, site_of_host
from ..state.store import Store
from .joins import Joins
from .protocol import LearnerBase
from .shards import POOL_ROUNDS, Partials, Rounds, held_bytes, held_in_order, held_of, shard_count, summed
from .shared import Counts

BATCH = 512  # events per message to a process: the pipe's cost per message is paid per batch

# requests (one byte, then a pickle or msgpack body); a process answers every request but EVENTS
EVENTS, DERIVE, COUNTS, ADOPT, TAKE, GIVE, SUMMARY, CLOSE = b"e", b"d", b"c", b"a", b"t", b"g", b"s", b"q"
CHECKPOINT, SNAPSHOT = b"k", b"p"
FAILED = b"x"


class ParallelLearner(LearnerBase):
    """``PartitionedLearner``'s shards in ``processes`` processes (shard s in process
    s mod ``processes``): the same rules, learned on that many cores. With ``root`` (the
    parent's store) and ``paths`` (one store per process) it is checkpointed and resumes
    from them; ``paths`` then says how many processes. Each process holds ``lock``
    (shared) while it runs (state/durable.py)."""

    def __init__(
        self,
        config: Config,
        partitions: int,
        processes: int,
        root: Store | None = None,
        paths: list[Path] | None = None,
        lock: Path | None = None,
    ):
        self.partitions = partitions
        self.shards = shard_count(config, partitions)
        n = len(paths) if paths is not None else max(1, min(processes, self.shards))
        if n > self.shards:
            raise ValueError(f"{n} process stores for {self.shards} shards: a process holds one shard at least")
        self.root = root
        self.pool_every = config.learning.pool_every if self.shards > 1 else 0
        self.merger = RuleMerger()
        self.events = 0
        self._rounds = Rounds()
        self._owner = [s % n for s in range(self.shards)]
        self._bufs: list[list[FetchEvent]] = [[] for _ in range(n)]
        self._enc = msgspec.msgpack.Encoder()
        self._counts: list[Counts] = [{} for _ in range(self.shards)]  # as each shard last reported them
        self._summary: dict | None = None
        self._closed = False
        L = config.learning
        # the parent sees every event: it decides the joins (joins.py), the processes carry them out
        self.joins = Joins(self.shards, L.join_after) if L.join_after and self.shards > 1 else None
        self._held: dict[int, list[tuple[int, FetchEvent]]] = {}  # per shard joined: (home shard, event)
        if root is not None:
            self._restore(root)
        moved = self.joins.moved if self.joins is not None else {}
        ctx = multiprocessing.get_context("spawn")  # no fork of a process holding RocksDB's threads
        self._conns: list[Connection] = []
        self._procs = []
        for w in range(n):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(
                target=_serve,
                args=(
                    theirs,
                    config,
                    [s for s in range(self.shards) if s % n == w],
                    self.shards,
                    str(paths[w]) if paths is not None else None,
                    moved,
                    str(lock) if lock is not None else None,
                ),
                name=f"dustonline-shards-{w}",
                daemon=True,
            )
            p.start()
            theirs.close()
            self._conns.append(mine)
            self._procs.append(p)

    # ------------------------------------------------------------ the learner's API
    def learn_one(self, ev: FetchEvent) -> list[Rule]:
        host = host_of(ev.url)
        s = partition_of_host(host, self.shards)
        if self.joins is not None:
            site = site_of_host(host)
            self.joins.see(ev, site)
            dst = self.joins.moved.get(site)
            if dst is not None:  # the shard it joined learns it at the next round (ShardGroup.learn_held)
                self._held.setdefault(dst, []).append((s, ev))
                s = -1
        if s >= 0:
            w = self._owner[s]
            buf = self._bufs[w]
            buf.append(ev)
            if len(buf) >= BATCH:
                self._send_events(w)
        self.events += 1
        if self.pool_every and self.events % self.pool_every == 0:
            self._send_held()
            out = self._derived()
            out += self._round() or []
            out += self._joined()
            return self.merger.apply_all(out)
        return []

    def flush(self) -> list[Rule]:
        self._send_held()
        out = self._derived()
        for n in range(POOL_ROUNDS):
            changes = self._round()
            joined = self._joined() if n == 0 else []
            if changes is None and not joined:
                break
            out += (changes or []) + joined
        return self.merger.apply_all(out)

    def _send_held(self) -> None:
        """The joined domains' events since the last round, to the processes of the
        shards they joined, in ``ShardGroup.learn_held``'s order: those processes route
        them by the moves they were told."""
        held, self._held = self._held, {}
        for dst, ev in held_in_order(held):
            self._bufs[self._owner[dst]].append(ev)

    def rules(self) -> list[Rule]:
        return self.merger.rules()

    def summary(self) -> dict:
        if not self._closed:
            self._summary = self._gathered()
        out = dict(self._summary or {})
        out["active_rules"] = len(self.rules())
        out["joined"] = self.joins.joined if self.joins is not None else 0
        return out

    def _gathered(self) -> dict:
        return summed(self._ask_all(SUMMARY, None))

    def checkpoint(self) -> None:
        """With stores to keep: every process's learners write their metadata, the rule
        changes not yet merged are merged, and the parent's own state goes into ``root``.
        ``snapshot`` then copies the processes' stores."""
        if self.root is None:
            return  # the processes' stores are temporary
        for part in self._ask_all(CHECKPOINT, None):
            self.merger.apply_all(part)
        self.root.table("parallel")["state"] = [self.events, held_bytes(self._held)]
        if self.joins is not None:
            self.joins.save(self.root.table("joins"), "digests")
        self.root.flush()

    def snapshot(self, where: Callable[[int], Path]) -> None:
        """Each process's store as a database at ``where(process)`` (after ``checkpoint``)."""
        self._ask_each(SNAPSHOT, [str(where(w)) for w in range(len(self._conns))])

    def _restore(self, root: Store) -> None:
        saved = root.table("parallel").get("state")
        if saved is None:
            return  # a new state
        self.events = saved[0]
        self._held = held_of(saved[1])
        if self.joins is not None:
            self.joins.load(root.table("joins"), "digests")

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._summary = self._gathered()  # what ``learn`` reports after the processes are gone
        except ShardProcessError:
            pass
        for conn in self._conns:
            try:
                conn.send_bytes(CLOSE)
            except OSError:
                pass
        for p in self._procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()
        for conn in self._conns:
            conn.close()
        if self.root is not None:
            self.root.close()
        self._closed = True

    # ------------------------------------------------------------ rounds
    def _derived(self) -> Partials:
        """Every shard's changes since the last round, and what deriving now adds."""
        return [pr for part in self._ask_all(DERIVE, None) for pr in part]

    def _joined(self) -> Partials:
        """``ShardGroup._joined`` over processes, one move at a time: the process holding
        the shard a domain leaves hands its URLs over, and every process learns of the
        move (it routes by it); the one holding the shard it joins learns them."""
        if self.joins is None:
            return []
        out: Partials = []
        for m in self.joins.decide():
            src = self._owner[m.src]
            self._send_events(src)
            self._send(src, TAKE + pickle.dumps(m, pickle.HIGHEST_PROTOCOL))
            events, changes = self._recv(src)
            out += changes
            dst = self._owner[m.dst]
            given = [(m, events if w == dst else []) for w in range(len(self._conns))]
            out += [pr for part in self._ask_each(GIVE, given) for pr in part]
        return out

    def _round(self) -> Partials | None:
        """``ShardGroup._round`` over processes: None when no count moved."""
        counts = list(self._counts)  # the last round's dicts stay as Rounds saw them
        for part in self._ask_all(COUNTS, None):
            for s, (changed, gone) in part.items():
                if changed or gone:
                    now = counts[s] = dict(counts[s])
                    now.update(changed)
                    for name in gone:
                        del now[name]
        self._counts = counts
        adopt = self._rounds.shares(counts)
        if adopt is None:
            return None
        per_proc: list[dict[int, tuple[Counts, list[str] | None]]] = [{} for _ in self._conns]
        for s, share in enumerate(adopt):
            per_proc[self._owner[s]][s] = share
        return [pr for part in self._ask_each(ADOPT, per_proc) for pr in part]

    # ------------------------------------------------------------ the pipes
    def _send_events(self, w: int) -> None:
        buf = self._bufs[w]
        if buf:
            self._send(w, EVENTS + self._enc.encode(buf))
            buf.clear()

    def _ask_all(self, op: bytes, body) -> list:
        return self._ask_each(op, [body] * len(self._conns))

    def _ask_each(self, op: bytes, bodies: list) -> list:
        """Send every process its request (after the events it has not been sent), then
        read the answers: the processes work at once."""
        for w in range(len(self._conns)):
            self._send_events(w)
            self._send(w, op + pickle.dumps(bodies[w], pickle.HIGHEST_PROTOCOL))
        return [self._recv(w) for w in range(len(self._conns))]

    def _send(self, w: int, data: bytes) -> None:
        try:
            self._conns[w].send_bytes(data)
        except OSError:
            self._recv(w)  # raises with the process's traceback or exit code
            raise ShardProcessError(f"shard process {w} stopped reading") from None

    def _recv(self, w: int):
        try:
            data = self._conns[w].recv_bytes()
        except (EOFError, OSError):
            p = self._procs[w]
            p.join(timeout=5)
            raise ShardProcessError(f"shard process {w} ({p.name}) exited with code {p.exitcode}") from None
        if data[:1] == FAILED:
            raise ShardProcessError(f"shard process {w} failed:\n{data[1:].decode('utf-8', 'replace')}")
        return pickle.loads(data)


class ShardProcessError(RuntimeError):
    """A shard's process failed or was killed: the run cannot give the rules it would have."""


def _serve(
    conn: Connection,
    config: Config,
    shards: list[int],
    total: int,
    path: str | None,
    moved: dict[str, int],
    lock: str | None,
) -> None:
    """A shard process: learn the events sent, answer the parent's requests. ``path`` is
    its store (None: a temporary one); ``moved``, the joins of the run it resumes;
    ``lock``, held shared until it exits."""
    from ..console import tune_gc
    from ..state.durable import hold_shared
    from ..state.store import rocks_store
    from .shards import ShardGroup, adopt_share

    group = None
    try:
        tune_gc()
        if lock is not None:
            held = hold_shared(lock)  # noqa: F841  (held until the process exits)
        S = config.storage
        store = rocks_store(path, S.cache_entries, S.cache_mib)
        group = ShardGroup(config, shards, total, lambda s: store.namespace(f"{s}/", total), rounds=False, root=store)
        group.moved.update(moved)
        learners = dict(zip(shards, group.learners))
        decode = msgspec.msgpack.Decoder(list[FetchEvent]).decode
        sent: dict[int, Counts] = {s: {} for s in shards}  # the counts as last reported
        pending: Partials = []  # changes since the last round
        while True:
            data = conn.recv_bytes()
            op, body = data[:1], data[1:]
            if op == EVENTS:
                for ev in decode(body):
                    pending += group.learn_one(ev)
                continue
            if op == CLOSE:
                break
            arg = pickle.loads(body)
            answer: object
            if op == DERIVE:
                answer = pending + group.flush()
                pending = []
            elif op == COUNTS:
                diff = {}
                for s, lrn in learners.items():
                    now, was = lrn.shared_counts(), sent[s]
                    diff[s] = ({k: v for k, v in now.items() if was.get(k) != v}, [k for k in was if k not in now])
                    sent[s] = now
                answer = diff
            elif op == ADOPT:
                answer = [
                    (s, r) for s, (share, gone) in sorted(arg.items()) for r in adopt_share(learners[s], share, gone)
                ]
            elif op == TAKE:
                answer = group.take(arg)
            elif op == GIVE:
                answer = group.give(*arg)
            elif op == SUMMARY:
                answer = group.summary()
            elif op == CHECKPOINT:
                group.checkpoint()
                answer, pending = pending, []
            elif op == SNAPSHOT:
                store.snapshot(Path(arg))
                answer = None
            else:
                raise ValueError(f"unknown request {op!r}")
            conn.send_bytes(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
    except (EOFError, KeyboardInterrupt):
        pass  # the parent is gone or interrupted: nothing to answer
    except BaseException:  # noqa: BLE001  (whatever it is, the parent is told, then the process ends)
        try:
            conn.send_bytes(FAILED + traceback.format_exc().encode())
        except OSError:
            pass
        raise SystemExit(1) from None
    finally:
        if group is not None:
            group.close()
