"""Two revisions of the learner on one stream, compared by instructions executed.

    python benchmarks/bench_revisions.py HEAD~3 .              # a past commit against the working tree
    python benchmarks/bench_revisions.py A B --events 20000    # a shorter stream: quicker

This machine's speed drifts by 2-3x over a day and by 10% between two runs, so a change
of a few percent cannot be read from timings. ``valgrind --tool=cachegrind`` counts the
instructions each ``dustonline learn`` executes, which does not drift: the same revision
on the same stream counts the same within 0.1%. Both run at once (one core each), each
from its own checkout: run from another directory, ``python -m`` would import the code
of that directory instead (it comes before PYTHONPATH). The rules of both are compared
too, so a change meant to be behaviour-preserving is checked in the same run.

Instructions are not time (cache misses and RocksDB's own threads are not in them), so
a real change should show in both; this settles the small ones. Needs valgrind and git.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout(rev: str, work: Path) -> Path:
    """The working tree for ".", else a detached worktree of ``rev`` with the C kernels."""
    if rev == ".":
        return ROOT
    path = work / re.sub(r"[^\w.-]", "_", rev)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", "--detach", str(path), rev], check=True)
    kernels = list((ROOT / "dustonline").glob("_kernels*.so"))
    same_c = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", rev, "--", "dustonline/_kernels.c"]).returncode
    if kernels and same_c == 0:
        shutil.copy(kernels[0], path / "dustonline")
    else:  # the kernels changed between the two: build this revision's own
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=path, check=True)
    return path


def count(tree: Path, stream: Path, out: Path) -> int:
    state = out.with_suffix(".state")
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    cmd += [sys.executable, "-m", "dustonline", "learn", str(stream), "--state", str(state), "--rules-out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True)
    if res.returncode != 0:
        sys.exit(f"{tree}: dustonline learn failed\n{res.stderr.decode()[-2000:]}")
    m = re.search(rb"I\s+refs:\s+([\d,]+)", res.stderr)
    if m is None:
        sys.exit(f"{tree}: no instruction count in valgrind's output")
    return int(m.group(1).replace(b",", b""))


def rules_of(path: Path) -> list[str]:
    """The rules without their publication time."""
    import json

    return [
        json.dumps({k: v for k, v in json.loads(line).items() if k != "updated"}, sort_keys=True) for line in open(path)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="a git revision, or . for the working tree")
    ap.add_argument("new", help="a git revision, or . for the working tree")
    ap.add_argument("--stream", help="events to learn (default: a generated bench_core stream)")
    ap.add_argument("--events", type=int, default=50_000, help="size of the generated stream")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    work = Path(tempfile.mkdtemp(prefix="dustonline-revs-"))
    try:
        stream = Path(args.stream) if args.stream else work / "events.jsonl"
        if not args.stream:
            from bench_core import write_bench_stream  # this directory: bench_core's stream

            write_bench_stream(args.events, 300, args.seed, stream, work / "t.jsonl")
        trees = [checkout(rev, work) for rev in (args.base, args.new)]
        outs = [work / "base.jsonl", work / "new.jsonl"]
        print(f"learning {stream} under cachegrind, both revisions at once ...", flush=True)
        with ThreadPoolExecutor(2) as pool:
            base, new = pool.map(count, trees, [stream, stream], outs)
        print(f"{args.base:>12}  {base:>16,} instructions")
        print(f"{args.new:>12}  {new:>16,} instructions")
        print(f"{'ratio':>12}  {new / base:>16.3f}   (new / base; below 1: fewer)")
        a, b = rules_of(outs[0]), rules_of(outs[1])
        print(f"{'rules':>12}  {'identical' if a == b else 'DIFFER'} ({len(a)} and {len(b)})")
    finally:
        for tree in work.iterdir():  # the worktrees checkout() made
            if (tree / ".git").exists():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "-f", str(tree)])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
