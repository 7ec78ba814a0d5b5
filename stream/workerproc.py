"""Real ``dustonline worker`` processes in subprocesses, watched through their state
endpoint: for the service tests (tests/test_worker.py) and the end-to-end benchmark."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import yaml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_config(broker: str, tmp: Path, partitions: int, learning: dict | None = None, **kafka) -> Path:
    """A config file with topics and group of their own (every run starts clean)."""
    name = "w" + uuid.uuid4().hex[:8]
    # pooling only when the group is quiet (learning.pool_every 0, kafka.pool_every_seconds
    # 0), as `learn --partitions N` then pools at its end: events sent by other producers
    # than `dustonline replay` (which places rounds where `learn` pools, rounds.py) get
    # periodic rounds where the coordinator finds the group, which `learn` cannot model
    learning = {"min_freq": 3, "min_supp": 3} if learning is None else learning
    data = {
        "learning": {"pool_every": 0, **learning},
        "kafka": {
            "bootstrap_servers": broker,
            "pages_topic": f"{name}.pages",
            "rules_topic": f"{name}.rules",
            "dlq_topic": f"{name}.dlq",
            "group_id": name,
            "partitions": partitions,
            "checkpoint_every": 500,
            "idle_flush_seconds": 1.0,
            "pool_every_seconds": 0,
            **kafka,
        },
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class WorkerProc:
    """One ``dustonline worker`` in a subprocess, with its own state dir and web port."""

    def __init__(self, config: Path, workdir: Path, name: str = "w"):
        self.config, self.name = config, name
        self.dir = workdir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "worker.log"

    def start(self) -> WorkerProc:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.port = free_port()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dustonline",
                    "worker",
                    "--config",
                    str(self.config),
                    "--data-dir",
                    str(self.dir / "data"),
                    "--web-port",
                    str(self.port),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        return self

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        """A graceful stop (SIGTERM): Faust leaves the group, the others rebalance."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def get(self, path: str):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            body = r.read()
        return json.loads(body) if path.endswith("state") else body.decode()

    def state(self) -> dict | None:
        try:
            return self.get("/dustonline/state")
        except OSError:
            return None

    def tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def partitions_state(workers) -> dict[int, dict]:
    """Partition -> learner summary, from the workers that own them now."""
    out: dict[int, dict] = {}
    for w in workers:
        st = w.state() if w.alive() else None
        if st:
            for p, s in st["partitions"].items():
                if int(p) in st["assigned"]:
                    out[int(p)] = s
    return out


def wait_until(pred, timeout: float, what: str, workers=()) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return
        time.sleep(0.3)
    logs = "\n".join(f"--- {w.name}:\n{w.tail()}" for w in workers)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs}")


def learned_all(workers, partitions: int, n_events: int):
    """A predicate: every partition owned, every event learned, rules derived, checkpointed."""

    def done() -> bool:
        st = partitions_state(workers)
        return (
            len(st) == partitions
            and sum(s["events"] for s in st.values()) >= n_events
            and all(s["since_flush"] == 0 and s["pending"] == 0 for s in st.values())
        )

    return done
