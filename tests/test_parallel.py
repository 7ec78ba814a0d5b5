"""Shards learned in processes of their own (learner/parallel.py): the rules of one process."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import children, running, shard_processes

from dustonline.config import config_from_dict
from dustonline.evaluation.generator import GenConfig, generate
from dustonline.learner.parallel import EVENTS, ParallelLearner, ShardProcessError
from dustonline.learner.partitioned import PartitionedLearner
from dustonline.rules.ruleset import encode_rule
from dustonline.runner import LearnRun

SAMPLE = Path(__file__).resolve().parents[1] / "dustonline/data/sample-stream.jsonl.gz"
CFG = {"learning": {"min_freq": 3, "min_supp": 3, "holdout": 0.33, "prepared": False, "shards": 4, "pool_every": 500}}


@pytest.fixture(scope="module")
def events():
    return [ev for ev, _ in generate(GenConfig(seed=4, sites=12, pages=1500))]


def _written(rules) -> bytes:
    return b"\n".join(map(encode_rule, rules))


def test_shards_in_processes_learn_what_they_learn_in_one(events):
    """Two and three processes (shards 0, 2 | 1, 3 and 0, 3 | 1 | 2), pooling every
    500 events and at the end (the rules depend on every round's counts): the rule
    records of one process, byte for byte, and its counters."""
    cfg = config_from_dict(CFG)
    one = PartitionedLearner(cfg, 1)
    one.learn_many(events)
    want = _written(one.rules())
    assert want.count(b"\n") > 5
    for processes in (2, 3):
        lrn = ParallelLearner(cfg, 1, processes)
        try:
            lrn.learn_many(events)
            assert _written(lrn.rules()) == want
            got, base = lrn.summary(), one.summary()
            assert {k: got[k] for k in ("events", "urls", "clusters", "candidates")} == {
                k: base[k] for k in ("events", "urls", "clusters", "candidates")
            }
        finally:
            lrn.close()
        assert all(not p.is_alive() for p in lrn._procs) and lrn.summary()["events"] == len(events)


def test_learn_runs_shards_on_the_cores_it_may_use_and_writes_the_same_rules(tmp_path):
    """What ``dustonline learn --partitions 4`` runs: processes unless told one, with
    ``--state`` too (a store per process), and a state keeps the number it began with."""
    cfg = config_from_dict({})
    runs = {}
    for processes in (1, 2):
        run = LearnRun([str(SAMPLE)], cfg, partitions=4, processes=processes)
        try:
            assert isinstance(run.learner, ParallelLearner if processes > 1 else PartitionedLearner)
            run.run(progress=False)
            runs[processes] = (_written(run.learner.rules()), run.counts())
            said = "in 2 processes" if processes > 1 else "in 1 process"
            assert any(line.startswith("shards") and said in line for line in run.summary_lines(0, "-", None))
        finally:
            run.close()
    assert runs[1] == runs[2] and runs[1][0].count(b"\n") > 20
    for asked in (2, 1):  # the second run continues the state the first began
        run = LearnRun([str(SAMPLE)], cfg, state=tmp_path / "state", partitions=4, processes=asked)
        try:
            assert isinstance(run.learner, ParallelLearner) and run.processes == 2
            run.run(progress=False)
            run.finish()
            if asked == 2:
                assert _written(run.learner.rules()) == runs[1][0]
        finally:
            run.close()
    assert sorted(p.name for p in (tmp_path / "state" / "checkpoint").glob("w*")) == ["w0", "w1"]
    with pytest.raises(ValueError, match="--processes must be >= 1"):
        LearnRun([str(SAMPLE)], cfg, partitions=4, processes=0)


@pytest.fixture
def learning(events):
    """Two shard processes that have learned 100 events; closed after the test."""
    lrn = ParallelLearner(config_from_dict(CFG), 1, 2)
    try:
        for ev in events[:100]:
            lrn.learn_one(ev)
        yield lrn
    finally:
        lrn.close()


def test_a_shard_process_that_fails_ends_the_run_with_its_traceback(learning):
    learning._send(1, EVENTS + b"\xc1")  # no msgpack: the process cannot decode its events
    with pytest.raises(ShardProcessError, match=r"(?s)shard process 1 failed:.*Traceback.*msgspec"):
        learning.flush()
    learning.close()
    assert all(not p.is_alive() for p in learning._procs)


def test_a_shard_process_that_is_killed_ends_the_run_with_its_exit_code(learning):
    victim = learning._procs[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(timeout=30)
    with pytest.raises(ShardProcessError, match=r"shard process 0 .* exited with code -9"):
        learning.flush()


def _learning_from_stdin(tmp_path: Path, lines: list[bytes], **popen) -> subprocess.Popen:
    """``learn -`` in 2 shard processes, sent ``lines`` with its input left open, once
    both processes have made their stores (in ``tmp_path``)."""
    p = subprocess.Popen(
        [sys.executable, "-m", "dustonline", "learn", "-", "--partitions", "4", "--processes", "2"]
        + ["--rules-out", str(tmp_path / "r.jsonl"), "--quiet"],
        stdin=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # where their temporary stores go
        **popen,
    )
    p.stdin.write(b"".join(lines))
    p.stdin.flush()
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("dustonline-state-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(tmp_path.glob("dustonline-state-*"))) == 2  # both processes have their stores
    return p


@pytest.fixture(scope="module")
def sample_lines() -> list[bytes]:
    with gzip.open(SAMPLE, "rb") as f:
        return f.readlines()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_no_shard_process_outlives_a_learn_killed_minus_9(tmp_path, sample_lines):
    """``learn -`` with its input still open: the shard processes are up and learning;
    the parent is killed -9; they see their pipe close, remove their temporary RocksDB
    and exit."""
    p = _learning_from_stdin(tmp_path, sample_lines[:3000])
    kids = children(p.pid)
    assert len(kids) >= 2
    p.kill()
    p.wait()
    deadline = time.monotonic() + 60
    while any(running(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(k) for k in kids)
    assert not list(tmp_path.glob("dustonline-state-*"))
    p.stdin.close()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_learn_says_which_shard_process_was_killed_and_exits_1(tmp_path, sample_lines):
    """The operator's view of a shard process killed (by the OOM killer, say): one line
    naming it and its exit code, exit status 1, and no rules file claimed written."""
    p = _learning_from_stdin(tmp_path, sample_lines[:3000], stderr=subprocess.PIPE)
    shards = shard_processes(p.pid)
    assert len(shards) == 2
    os.kill(shards[0], signal.SIGKILL)
    try:
        p.stdin.write(b"".join(sample_lines[3000:]))
        p.stdin.close()
    except BrokenPipeError:
        pass  # it stopped reading at its next batch for the killed process: sooner is fine
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1
    assert "dustonline: error: shard process" in err and "exited with code -9" in err, err
    assert "Traceback" not in err and not (tmp_path / "r.jsonl").exists()


def test_a_checkpointed_parallel_learner_resumes_as_it_was(tmp_path):
    """What ``learn --state`` in processes keeps (docs/performance.md): stopped at
    checkpoints between rounds and started again on its stores, it has the parent's
    state it had, and it ends with the partials and counters of a learner never stopped.
    The first stop comes while a process holds rule changes it has not yet sent (a
    shard derived on its own at event 205), the second while the parent holds events of
    joined domains for the next round."""
    import msgspec

    from dustonline.state.store import rocks_store

    cfg = config_from_dict({"learning": {"shards": 4, "join_after": 2, "pool_every": 700}})
    evs = [ev for ev, _ in generate(GenConfig(seed=1, sites=6, pages=6000, families=("domain", "www")))]
    paths = [tmp_path / "w0", tmp_path / "w1"]
    whole = ParallelLearner(cfg, 1, 2)
    lrn = ParallelLearner(cfg, 1, 2, root=rocks_store(tmp_path / "root"), paths=paths)
    done = 0
    try:
        for cut in (400, 3100, len(evs)):
            for ev in evs[done:cut]:
                lrn.learn_one(ev)
                whole.learn_one(ev)
            done = cut
            if cut == len(evs):
                break
            handed: list = []  # the rule changes the processes hand over at the checkpoint

            def spy(op, body, ask=lrn._ask_all, handed=handed):
                handed.append(ask(op, body))
                return handed[-1]

            lrn._ask_all = spy
            lrn.checkpoint()
            assert any(handed[0]) if cut == 400 else any(lrn._held.values())
            was = (lrn.events, lrn._held, lrn.joins.dump(), lrn.merger.dump(), lrn.summary())
            lrn.close()
            lrn = ParallelLearner(cfg, 1, 2, root=rocks_store(tmp_path / "root"), paths=paths)
            lrn.merger.restore(was[3])
            assert (lrn.events, lrn._held, lrn.joins.dump()) == was[:3]
            assert lrn.summary() == was[4]
        lrn.flush()
        whole.flush()
        partials = msgspec.json.decode(lrn.merger.dump())
        assert partials == msgspec.json.decode(whole.merger.dump()) and len(partials) > 5
        assert lrn.summary() == whole.summary() and lrn.joins.joined
    finally:
        lrn.close()
        whole.close()
