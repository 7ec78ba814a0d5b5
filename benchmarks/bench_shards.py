"""What learning in shards costs embedded: ``dustonline learn`` with ``learning.shards``
G beside one learner, on bench_core's stream, the two at once, one process per core.

    python benchmarks/bench_shards.py                              # 1M events, G = 4
    python benchmarks/bench_shards.py --events 200000 --pool-every 5000,20000 --rounds 2

Why side by side: this machine's speed drifts by 2-3x over a day, and two runs one after
the other differ by 5-10%, more than what is measured here; two runs at once meet the
same drift (two builds doing the same work at once took 95.2 and 95.4 s). Each pair is
one learner (``learning.shards`` 0) and G shards pooling every ``--pool-every`` events,
as ``learn`` runs them (LearnRun, RocksDB state); ``--rounds`` repeats the pairs, the
two sides swapped each time. Figures are printed, never asserted: what G costs decides
whether it can be the default (docs/service.md#shards).
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


def child(events: str, state: str, learning: str) -> None:
    from dustonline.config import config_from_dict
    from dustonline.runner import LearnRun

    run = LearnRun([events], config_from_dict({"learning": json.loads(learning)}), state=state)
    run.run(progress=False)
    s = run.learner.summary()
    rules = len(run.learner.rules())
    run.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"events": s["events"], "seconds": run.seconds, "rules": rules, "peak_mib": peak}))


def pair(events: Path, work: Path, shards: int, every: int, swap: bool) -> tuple[dict, dict]:
    """One learner and G shards at once; (one learner's figures, the shards')."""
    sides = [{"shards": 0}, {"shards": shards, "pool_every": every}]
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
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
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
        write_bench_stream(args.events, args.sites, args.seed, events, truth)
        with open(events) as f:
            n = sum(1 for _ in f)
        print(f"stream: {n:,} events in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        rows = []
        for every in everies:
            ratios = []
            for r in range(args.rounds):
                one, sharded = pair(events, work, args.shards, every, swap=bool(r % 2))
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


if __name__ == "__main__":
    main()
