"""A process's children as /proc shows them, for the tests that kill shard processes."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def shard_processes(pid: int) -> list[int]:
    """``learn``'s shard processes (learner/parallel.py): its spawned children, not
    multiprocessing's resource tracker."""
    spawned = [k for k in children(pid) if b"multiprocessing.spawn" in Path(f"/proc/{k}/cmdline").read_bytes()]
    return [k for k in spawned if b"resource_tracker" not in Path(f"/proc/{k}/cmdline").read_bytes()]


def running(pid: int) -> bool:
    """Alive and not a zombie (an exited child its new parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
