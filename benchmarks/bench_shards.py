"""What learning in shards costs embedded: ``dustonline learn`` with ``learning.shards``
G beside one learner, on bench_core's stream, the two at once, one process per core.

    python benchmarks/bench_shards.py                              # 1M events, G = 4
    python benchmarks/bench_shards.py --events 200000 --pool-every 5000,20000 --rounds 2
    python benchmarks/bench_shards.py --processes 2 --rounds 2     # the shards on two cores
    python benchmarks/bench_shards.py --processes 2 --families all  # joining domains (joins.py; --join-after 0: none)

Why side by side: this machine's speed drifts by 2-3x over a day, and two runs one after
the other differ by 5-10%, more than what is measured here; two runs at once meet the
same drift (two builds doing the same work at once took 95.2 and 95.4 s). Each pair is
one learner (``learning.shards`` 0) and G shards pooling every ``--pool-every`` events,
as ``learn`` runs them (LearnRun, RocksDB state); ``--rounds`` repeats the pairs, the
two sides swapped each time. With ``--processes N`` the shards learn as ``learn`` runs
them without ``--state``, in N processes (learner/parallel.py), so the two cannot run at
once: each round runs one learner, the shards, the shards, one learner (ABBA, so that a
steady drift cancels) and compares wall time and CPU time (every process). Figures are
printed, never asserted (docs/service.md#shards).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(events: str, state: str, learning: str, processes: str = "1") -> None:
    """One run; ``state`` "-" learns without one (the shards then in ``processes`` processes)."""
    from dustonline.config import config_from_dict
    from dustonline.runner import LearnRun

    cfg = config_from_dict({"learning": json.loads(learning)})
    if state == "-":
        run = LearnRun([events], cfg, processes=int(processes))
    else:
        run = LearnRun([events], cfg, state=state, processes=int(processes))
    run.run(progress=False)
    s = run.learner.summary()
    rules = len(run.learner.rules())
    run.close()  # joins the shards' processes: their CPU time is in RUSAGE_CHILDREN from here
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {
        "events": s["events"],
        "seconds": run.seconds,
        "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,  # imports too (under 1 s a process)
        "rules": rules,
        "joined": s.get("joined", 0),
        "peak_mib": me.ru_maxrss / 1024,
        "children_peak_mib": kids.ru_maxrss / 1024,
    }
    print(json.dumps(out))


def run_one(events: Path, learning: dict, processes: int) -> dict:
    cmd = [sys.executable, __file__, "--child", str(events), "-", json.dumps(learning), str(processes)]
    env = {**os.environ}
    env.pop("DUSTONLINE_PURE_PYTHON", None)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def in_processes(
    events: Path, shards: int, every: int, processes: int, join_after: int = 0
) -> tuple[list[dict], list[dict]]:
    """One learner, the shards in ``processes`` processes, the shards, one learner."""
    one: list[dict] = []
    sharded: list[dict] = []
    them = {"shards": shards, "pool_every": every, "join_after": join_after}
    for learning, n, into in (
        ({"shards": 0}, 1, one),
        (them, processes, sharded),
        (them, processes, sharded),
        ({"shards": 0}, 1, one),
    ):
        into.append(run_one(events, learning, n))
    return one, sharded


def pair(events: Path, work: Path, shards: int, every: int, swap: bool, join_after: int) -> tuple[dict, dict]:
    """One learner and G shards at once; (one learner's figures, the shards')."""
    sides = [{"shards": 0}, {"shards": shards, "pool_every": every, "join_after": join_after}]
    if swap:
        sides.reverse()
    procs = []
    for i, learning in enumerate(sides):
        state = work / f"state-{i}"  # new each pair: a state left there would resume
        shutil.rmtree(state, ignore_errors=True)
        cmd = [sys.executable, __file__, "--child", str(events), str(state), json.dumps(learning)]
        env = {**os.environ}
        env.pop("DUSTONLINE_PURE_PYTHON", None)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env))
    out = []
    for p in procs:
        stdout, _ = p.communicate()
        if p.returncode:
            raise SystemExit(f"a learner failed (exit {p.returncode})")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    if swap:
        out.reverse()
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000, help="approximate stream size")
    ap.add_argument("--sites", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--pool-every", default="5000", help="learning.pool_every of the shards, comma-separated")
    ap.add_argument("--rounds", type=int, default=1, help="pairs per setting, sides swapped each time")
    ap.add_argument("--processes", type=int, default=0, help="learn the shards in this many processes (alone)")
    from dustonline.config import Config

    ap.add_argument(
        "--join-after", type=int, default=Config().learning.join_after, help="learning.join_after of the shards"
    )
    ap.add_argument("--families", default="", help="the stream's alias families, comma-separated ('all': every one)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    if (os.cpu_count() or 1) < 2:
        print("warning: one CPU; the pair runs on it in turns and the ratio means less", file=sys.stderr)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_core import write_bench_stream

    everies = [int(x) for x in args.pool_every.split(",") if x]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        events, truth = work / "events.jsonl", work / "truth.jsonl"
        t0 = time.perf_counter()
        families = tuple(x for x in args.families.split(",") if x) or None
        write_bench_stream(args.events, args.sites, args.seed, events, truth, families)
        with open(events) as f:
            n = sum(1 for _ in f)
        print(f"stream: {n:,} events in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if args.processes:
            measure_processes(events, args, everies)
            return
        rows = []
        for every in everies:
            ratios = []
            for r in range(args.rounds):
                one, sharded = pair(events, work, args.shards, every, swap=bool(r % 2), join_after=args.join_after)
                ratio = sharded["seconds"] / one["seconds"]
                ratios.append(ratio)
                print(
                    f"G = {args.shards}, pool every {every:,}: {sharded['seconds']:.1f} s, {sharded['rules']} rules, "
                    f"peak {sharded['peak_mib']:.0f} MiB | one learner {one['seconds']:.1f} s, {one['rules']} rules, "
                    f"peak {one['peak_mib']:.0f} MiB | ratio {ratio:.3f}",
                    file=sys.stderr,
                )
            rows.append((every, statistics.median(ratios), min(ratios), max(ratios)))
        print(f"\n{args.shards} shards against one learner, side by side ({args.rounds} pair(s) each):")
        print("| pool_every | time, shards / one learner (median) | range |")
        print("|---|---|---|")
        for every, med, lo, hi in rows:
            print(f"| {every:,} | **{med:.3f}** | {lo:.3f}-{hi:.3f} |")


def measure_processes(events: Path, args, everies: list[int]) -> None:
    rows = []
    for every in everies:
        wall, cpu = [], []
        for _ in range(args.rounds):
            one, sharded = in_processes(events, args.shards, every, args.processes, args.join_after)
            for o, s in zip(one, reversed(sharded)):  # A1 with B2, A2 with B1: neighbours in time
                wall.append(s["seconds"] / o["seconds"])
                cpu.append(s["cpu"] / o["cpu"])
            for s in sharded:
                print(
                    f"G = {args.shards} in {args.processes} processes, pool every {every:,}: {s['seconds']:.1f} s, "
                    f"CPU {s['cpu']:.1f} s, {s['rules']} rules, {s['joined']} domains joined, "
                    f"peak {s['peak_mib']:.0f} MiB "
                    f"(each shard process at most {s['children_peak_mib']:.0f})",
                    file=sys.stderr,
                )
            for o in one:
                print(
                    f"one learner: {o['seconds']:.1f} s, CPU {o['cpu']:.1f} s, {o['rules']} rules, "
                    f"peak {o['peak_mib']:.0f} MiB",
                    file=sys.stderr,
                )
        rows.append((every, statistics.median(wall), min(wall), max(wall), statistics.median(cpu)))
    joins = f", join_after {args.join_after}" if args.join_after else ""
    print(
        f"\n{args.shards} shards in {args.processes} processes{joins} against one learner "
        f"({args.rounds} round(s) of ABBA):"
    )
    print("| pool_every | wall time, shards / one learner (median) | range | CPU time (median) |")
    print("|---|---|---|---|")
    for every, med, lo, hi, c in rows:
        print(f"| {every:,} | **{med:.3f}** | {lo:.3f}-{hi:.3f} | {c:.3f} |")


if __name__ == "__main__":
    main()
