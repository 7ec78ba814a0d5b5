"""``dustonline learn --state``: killed at any moment, rerun, the same rules (issue 17).

The runs are real processes killed with SIGKILL, on a real RocksDB state directory."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import shard_processes

from dustonline.evaluation.generator import GenConfig, write_stream
from dustonline.state.durable import RUN_FILE, StateDir, StateError, hold_shared

CMD = [sys.executable, "-m", "dustonline"]
EVERY = 1000  # records between checkpoints: many per run, so kills land between and during them


def learn(*args, check=True):
    p = subprocess.run(CMD + ["learn", *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}\n{p.stderr}")
    return p


def counts(stderr: str) -> dict:
    """The summary's record counts (read, learned, ignored, rejected)."""
    out = {}
    for line in stderr.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("read", "learned", "ignored", "rejected"):
            out[word] = int(rest.split()[0].replace(",", ""))
    return out


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    d = tmp_path_factory.mktemp("durable")
    events = d / "events.jsonl"
    write_stream(GenConfig(seed=11, sites=12, pages=8000), events, d / "truth.jsonl")
    lines = events.read_bytes().splitlines(keepends=True)
    # bad records spread through the stream: the dead-letter file must come out the same too
    bad = range(len(lines) // 7, len(lines), len(lines) // 7)
    for i in bad:
        lines.insert(i, b'{"url": "ftp://bad.example/%d", "ts": 1700000000}\n' % i)
    events.write_bytes(b"".join(lines))
    (d / "ck.yaml").write_text(f"storage:\n  checkpoint_every: {EVERY}\n")
    ref = learn(events, "--rules-out", d / "ref.jsonl", "--state", d / "ref-state", "--config", d / "ck.yaml",
                "--dead-letter", d / "ref-dead.jsonl", "--quiet")  # fmt: skip
    return d, events, ref, len(bad)


def _position(state) -> int:
    try:
        return json.loads((state / "checkpoint" / RUN_FILE).read_text())["position"]
    except (OSError, ValueError, KeyError):
        return -1


def _kill_after(args, state, position: int, extra: float) -> None:
    """Start ``learn``, wait until its checkpoint covers ``position`` records, let it run
    ``extra`` seconds more (into the next stretch, or into a checkpoint), then SIGKILL."""
    proc = subprocess.Popen(CMD + ["learn", *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while proc.poll() is None and _position(state) < position and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(extra)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("processes", [1, 2])
def test_killed_runs_resume_to_the_rules_of_an_uninterrupted_run(stream, processes):
    """In one process, and with the shards in two (learner/parallel.py), where only the
    parent is killed: its shard processes finish what they had in hand while the rerun
    waits for them."""
    d, events, ref, _ = stream
    rng = random.Random(17 + processes)
    total = counts(ref.stderr)["read"]
    assert total > 6 * EVERY
    # three runs killed once or twice each, at random points after 0 to 4 checkpoints
    for n in range(3):
        state, rules, dead = d / f"s{n}-{processes}", d / f"r{n}.jsonl", d / f"dead{n}.jsonl"
        args = [events, "--rules-out", rules, "--state", state, "--config", d / "ck.yaml"]
        args += ["--dead-letter", dead, "--quiet", "--processes", processes]
        for _ in range(1 + n % 2):
            _kill_after(args, state, rng.randrange(0, 4) * EVERY, rng.uniform(0.0, 0.6))
        got = learn(*args)
        assert rules.read_bytes() == (d / "ref.jsonl").read_bytes()
        assert dead.read_bytes() == (d / "ref-dead.jsonl").read_bytes()
        assert counts(got.stderr) == counts(ref.stderr)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_run_whose_shard_process_was_killed_resumes_to_the_same_rules(stream):
    """The OOM killer takes a shard process: the run stops with exit status 1, and its
    rerun resumes from the last checkpoint to the uninterrupted run's rules."""
    d, events, ref, _ = stream
    state, rules = d / "oom", d / "oom.jsonl"
    args = [events, "--rules-out", rules, "--state", state, "--config", d / "ck.yaml", "--quiet", "--processes", 2]
    proc = subprocess.Popen(CMD + ["learn", *map(str, args)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and _position(state) < 2 * EVERY and time.monotonic() < deadline:
        time.sleep(0.01)
    shards = shard_processes(proc.pid)
    assert proc.poll() is None and len(shards) == 2, "the run ended before a shard process could be killed"
    os.kill(shards[1], signal.SIGKILL)
    assert proc.wait(timeout=120) == 1 and "exited with code -9" in proc.stderr.read()
    assert _position(state) >= 2 * EVERY and not rules.exists()
    got = learn(*args)
    assert "resumed at record" in got.stderr
    assert rules.read_bytes() == (d / "ref.jsonl").read_bytes()
    assert counts(got.stderr) == counts(ref.stderr)


def test_the_summary_accounts_for_every_record(stream):
    _, events, ref, bad = stream
    c = counts(ref.stderr)
    assert c["read"] == c["learned"] + c["ignored"] + c["rejected"] == counts_of(events)
    assert c["rejected"] == bad and c["learned"] > 0


def test_an_unfinished_run_is_resumed_only_by_the_same_command(stream, tmp_path):
    d, events, _, _ = stream
    state = tmp_path / "st"
    learn(events, "--rules-out", tmp_path / "a.jsonl", "--state", state, "--config", d / "ck.yaml", "--quiet")
    run = json.loads((state / "checkpoint" / RUN_FILE).read_text())
    assert run["done"] and run["position"] == counts_of(events)
    # killed after its last checkpoint, before the rules were written: unfinished
    run["done"] = False
    (state / "checkpoint" / RUN_FILE).write_text(json.dumps(run))
    other = tmp_path / "other.jsonl"
    other.write_bytes(events.read_bytes()[:100_000].rpartition(b"\n")[0] + b"\n")
    p = learn(other, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--quiet", check=False)
    assert p.returncode == 2 and "unfinished run" in p.stderr and "rerun that command" in p.stderr
    # another shard count learns other rules: refused
    eight = tmp_path / "eight.yaml"
    eight.write_text((d / "ck.yaml").read_text() + "learning:\n  shards: 8\n")
    p = learn(events, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--config", eight, check=False)
    assert p.returncode == 2 and "4 shards (learning.shards" in p.stderr
    # a partition count dividing the shards learns the same rules: it finishes the run
    p = learn(events, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--config", d / "ck.yaml",
              "--partitions", "2", "--quiet")  # fmt: skip
    assert "resumed at record" in p.stderr
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    # finished now: the next run continues the state with other input, and counts its own records
    p = learn(other, "--rules-out", tmp_path / "c.jsonl", "--state", state, "--quiet")
    assert counts(p.stderr)["read"] == counts_of(other) and "run 2" in p.stderr


def test_a_state_of_another_shard_count_is_continued_only_with_that_count(stream, tmp_path):
    """A finished run's state holds its shards' learners: a run with another shard count
    (one learner's state from before shards were the default, say) would start empty
    learners beside them. It is refused, saying which setting continues it."""
    d, events, _, _ = stream
    one = tmp_path / "one.yaml"
    one.write_text((d / "ck.yaml").read_text() + "learning:\n  shards: 0\n  join_after: 0\n")
    state = tmp_path / "st"
    learn(events, "--rules-out", tmp_path / "a.jsonl", "--state", state, "--config", one, "--quiet")
    p = learn(events, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--quiet", check=False)
    assert p.returncode == 2 and "one learner (no shards)" in p.stderr and "learning.shards: 0" in p.stderr
    assert not (tmp_path / "b.jsonl").exists()
    p = learn(events, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--config", one, "--quiet")
    assert "run 2" in p.stderr


def counts_of(path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def test_partitioned_state_resumes_with_its_merged_rules(stream, tmp_path):
    d, events, _, _ = stream
    base = [events, "--partitions", "2", "--config", d / "ck.yaml", "--quiet"]
    learn(*base, "--rules-out", tmp_path / "a.jsonl", "--state", tmp_path / "a")
    state = tmp_path / "b"
    _kill_after([*base, "--rules-out", tmp_path / "b.jsonl", "--state", state], state, 3 * EVERY, 0.2)
    assert _position(state) >= 3 * EVERY
    learn(*base, "--rules-out", tmp_path / "b.jsonl", "--state", state)
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()


@pytest.mark.parametrize("processes", [1, 2])
def test_state_with_joined_domains_resumes_to_the_same_rules(tmp_path, processes):
    """Joins (learner/joins.py) are part of the state: a run killed after domains joined
    and resumed joins no domain twice and writes the rules of one never killed. In two
    processes the parent keeps the joins and the events it holds for joined domains, and
    each shard process the moves and the URLs it learned again."""
    events = tmp_path / "events.jsonl"
    write_stream(GenConfig(seed=1, sites=6, pages=30000, families=("domain", "www")), events, tmp_path / "t.jsonl")
    cfg = tmp_path / "joins.yaml"
    cfg.write_text(
        f"storage:\n  checkpoint_every: {EVERY}\nlearning:\n  shards: 4\n  join_after: 3\n  pool_every: 700\n"
    )
    base = [events, "--config", cfg, "--processes", processes]
    ref = learn(*base, "--rules-out", tmp_path / "a.jsonl", "--state", tmp_path / "a")
    assert f"in {processes} process" in ref.stderr
    assert "joined" in ref.stderr
    state = tmp_path / "b"
    _kill_after([*base, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--quiet"], state, 3 * EVERY, 0.0)
    assert _position(state) >= 3 * EVERY
    got = learn(*base, "--rules-out", tmp_path / "b.jsonl", "--state", state)
    assert "resumed at record" in got.stderr
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    joined = [line for line in ref.stderr.splitlines() if line.startswith("joined")]
    assert joined == [line for line in got.stderr.splitlines() if line.startswith("joined")]


def test_a_state_is_one_runs_at_a_time(stream, tmp_path):
    """A second learn on a state in use is refused; a run whose parent was killed -9
    leaves shard processes that write to ``live/`` until they see it gone, and a rerun
    waits for them (here a stand-in holds their lock) before it rebuilds ``live/``."""
    d, events, _, _ = stream
    state = tmp_path / "st"
    first = subprocess.Popen(
        CMD + ["learn", "-", "--rules-out", tmp_path / "a.jsonl", "--state", state, "--quiet"],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (state / "live").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p = learn(events, "--rules-out", tmp_path / "b.jsonl", "--state", state, check=False)
        assert p.returncode == 2 and "in use by another dustonline learn" in p.stderr
    finally:
        first.stdin.close()
        assert first.wait(timeout=120) == 0
    held = hold_shared(StateDir(state).processes_lock)  # the killed run's shard processes
    try:
        with pytest.raises(StateError, match="still running after 0 s .*fuser"):
            StateDir(state, wait=0.2).recover()
        marker = state / "live" / "written-by-an-old-process"
        marker.write_bytes(b"")
        rerun = subprocess.Popen(
            CMD + ["learn", events, "--rules-out", tmp_path / "b.jsonl", "--state", state, "--quiet"],
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)
        assert rerun.poll() is None and marker.exists()  # waiting, live/ untouched
    finally:
        held.close()
    assert rerun.wait(timeout=120) == 0
    assert "waiting for the shard processes of an earlier run" in rerun.stderr.read()
    assert not marker.exists()  # live/ rebuilt from the checkpoint once the processes were gone


def test_state_of_the_layout_before_checkpoints_is_refused(stream, tmp_path):
    _, events, _, _ = stream
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "CURRENT").write_text("MANIFEST-000001\n")
    p = learn(events, "--rules-out", tmp_path / "r.jsonl", "--state", tmp_path / "old", check=False)
    assert p.returncode == 2 and "new --state directory" in p.stderr


def test_inputs_and_outputs_are_checked_before_learning(stream, tmp_path):
    _, events, _, _ = stream
    state = tmp_path / "st"
    p = learn(events, tmp_path / "missing.jsonl", "--rules-out", tmp_path / "r.jsonl", "--state", state, check=False)
    assert p.returncode == 2 and "missing.jsonl: no such file" in p.stderr
    p = learn(events, "--rules-out", tmp_path / "no" / "dir" / "r.jsonl", "--state", state, check=False)
    assert p.returncode == 2 and "--rules-out" in p.stderr
    p = learn(events, "--rules-out", tmp_path, "--state", state, check=False)
    assert p.returncode == 2 and "is a directory" in p.stderr
    assert not state.exists()  # nothing was learned


def test_the_dead_letter_file_holds_one_runs_records(stream, tmp_path):
    _, events, ref, _ = stream
    dead = tmp_path / "dead.jsonl"
    for _ in range(2):
        learn(events, "--rules-out", tmp_path / "r.jsonl", "--dead-letter", dead, "--quiet")
        assert len(dead.read_text().splitlines()) == counts(ref.stderr)["rejected"]
