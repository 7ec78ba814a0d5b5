"""Core benchmark: learner throughput and peak memory, canonicalize throughput vs w3lib.

    python benchmarks/bench_core.py                 # 1M events (the issue's target size)
    python benchmarks/bench_core.py --events 200000 # quicker

1. A generated multi-site stream is written to a temp file (not timed).
2. ``dustonline learn --state`` runs on it in a child process, as an operator would run
   it (reading, parsing, learning, RocksDB state), its shards in one process per usable
   core (``--processes`` to say how many): events/s, CPU time (every process) and peak
   RSS (the parent's, and the largest shard process's). Its rate is printed as a ratio
   to ``w3lib.url.canonicalize_url`` on the stream's distinct URLs, timed just before and
   just after it.
   With ``--pure-too`` it runs again on the pure-Python modules (DUSTONLINE_PURE_PYTHON=1,
   setup.py says what the install compiles), between its own two reference timings, and
   prints the compiled build's speed-up and whether the two learned the same rules.
   With ``--reference REV`` the learner of a past revision runs on the same stream, from
   its own checkout, between its own reference timings too: issue 16 asks that the ratio
   not fall below the learner's when the issue was filed (``--reference 6051348``), and
   a ratio measured on another day cannot say that on a machine whose speed drifts.
3. The learned rules canonicalize the same URLs (with Python's ``re``, and with RE2 when
   the ``re2`` extra is installed), against w3lib again, and the ratios are printed.
Figures are printed, never asserted: speed is measured here, not in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child_learn(events: str, rules_out: str, state: str, processes: str) -> None:
    from dustonline import _compiled
    from dustonline.config import Config
    from dustonline.rules.ruleset import write_rules
    from dustonline.runner import LearnRun

    run = LearnRun([events], Config().check(), state=state, processes=int(processes) or None)
    run.run(progress=True)
    learner, dlq, secs = run.learner, run.dlq, run.seconds
    s = learner.summary()
    write_rules(rules_out, learner.rules())
    run.close()  # joins the shard processes: their peak is in RUSAGE_CHILDREN from here
    print(
        json.dumps(
            {
                "events": s["events"],
                "seconds": secs,
                "processes": run.processes,
                "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "children_peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                "summary": s,
                "rejected": dlq.total,
                "modules": _compiled.status,
            }
        )
    )


def run_child(cmd: list[str], **kw) -> tuple[str, float]:
    """A child's standard output and the CPU seconds it and its own children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return out, cpu


# the learner of another revision, in its own checkout: whichever entry point it has
REFERENCE_CHILD = """
import json, resource, sys
from dustonline.config import load_config
cfg = load_config(None)
try:
    from dustonline.runner import LearnRun
except ImportError:  # before runner.py (0d90c96)
    from dustonline.cli import run_learner
    learner, dlq, secs = run_learner([sys.argv[1]], cfg, sys.argv[2], None, sys.argv[3], False, None)
else:
    run = LearnRun([sys.argv[1]], cfg, state=sys.argv[2], dead_letter=sys.argv[3])
    run.run(progress=False)
    learner, secs = run.learner, run.seconds
s = learner.summary()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"events": s["events"], "seconds": secs, "peak_mib": peak, "rules": len(learner.rules())}))
"""


def reference_learn(rev: str, events: Path, work: Path) -> dict:
    """``rev``'s learner on ``events``, from a worktree (bench_revisions.py's, with the C
    kernels) and from its directory, so that nothing of this checkout is imported."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_revisions import checkout

    tree = checkout(rev, work)
    try:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        env.pop("DUSTONLINE_PURE_PYTHON", None)
        cmd = [sys.executable, "-c", REFERENCE_CHILD, str(events), str(work / "state-ref"), str(work / "dlq-ref.jsonl")]
        out, cpu = run_child(cmd, env=env, cwd=tree)
        return {**json.loads(out.strip().splitlines()[-1]), "cpu": cpu}
    finally:
        if tree != ROOT:  # "." is this checkout itself, not a worktree checkout() made
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def write_bench_stream(
    n_events: int, sites: int, seed: int, events: Path, truth: Path, families: tuple[str, ...] | None = None
) -> int:
    """The benchmark's stream: ``sites`` generated sites, about ``n_events`` events (each
    page is fetched about 1.5-2 times: aliases, traps, errors); returns its pages.
    ``families``: the generator's alias families (None: its default mix)."""
    from dustonline.evaluation.generator import GenConfig, generate, write_stream

    probe = sum(1 for _ in generate(GenConfig(seed=seed, sites=20, pages=4000, families=families)))
    pages = int(n_events * 4000 / probe)
    write_stream(GenConfig(seed=seed, sites=sites, pages=pages, families=families), events, truth)
    return pages


def timed(fn, urls, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for u in urls:
            fn(u)
        best = min(best, time.perf_counter() - t0)
    return len(urls) / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000, help="approximate stream size")
    ap.add_argument("--sites", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", metavar="DIR", help="keep the stream and rules here")
    ap.add_argument("--pure-too", action="store_true", help="learn again on the pure-Python modules and compare")
    ap.add_argument(
        "--reference",
        metavar="REV",
        help="learn the stream with this revision's learner too (issue 16's reference: 6051348) and compare",
    )
    ap.add_argument(
        "--processes", type=int, default=0, metavar="N", help="learn the shards in N processes (default: as learn does)"
    )
    ap.add_argument("--child", nargs=4, metavar=("EVENTS", "RULES", "STATE", "PROCESSES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_learn(*args.child)
        return

    from dustonline.rules.ruleset import RuleSet

    work = Path(args.keep or tempfile.mkdtemp(prefix="dustonline-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    events, truth, rules = work / "events.jsonl", work / "truth.jsonl", work / "rules.jsonl"
    t0 = time.perf_counter()
    pages = write_bench_stream(args.events, args.sites, args.seed, events, truth)
    n_lines = sum(1 for _ in open(events, "rb"))
    print(
        f"stream: {n_lines:,} events, {args.sites} sites, {pages:,} pages, "
        f"generated in {time.perf_counter() - t0:.1f} s -> {events}"
    )

    import msgspec
    from w3lib.url import canonicalize_url

    urls = []
    seen = set()
    with open(truth, "rb") as fh:
        for line in fh:
            u = msgspec.json.decode(line)["url"]
            if u not in seen:
                seen.add(u)
                urls.append(u)
    urls = urls[:300_000]

    import shutil

    def learn(rules_out: Path, pure: bool) -> tuple[dict, float, float]:
        """The learner in a child process, with the reference timed on both sides (this
        machine's speed drifts; their spread shows how much)."""
        state = work / ("state-pure" if pure else "state")
        shutil.rmtree(state, ignore_errors=True)  # a kept directory must not resume old state
        env = {k: v for k, v in os.environ.items() if k != "DUSTONLINE_PURE_PYTHON"}
        if pure:
            env["DUSTONLINE_PURE_PYTHON"] = "1"
        before = timed(canonicalize_url, urls)
        cmd = [sys.executable, __file__, "--child", str(events), str(rules_out), str(state), str(args.processes)]
        out, cpu = run_child(cmd, env=env)
        after = timed(canonicalize_url, urls)
        return {**json.loads(out.strip().splitlines()[-1]), "cpu": cpu}, before, after

    res, ref_before, ref_after = learn(rules, pure=False)
    ref_learn = (ref_before * ref_after) ** 0.5
    rate = res["events"] / res["seconds"]
    s = res["summary"]
    n = res["processes"]
    where = f"{n} processes for the shards" if n > 1 else "one process"
    print(f"\n== learner (dustonline learn --state: read + parse + learn + RocksDB state, {where})")
    print(f"modules          {res['modules']}")
    print(f"events           {res['events']:,}")
    print(f"time             {res['seconds']:.1f} s   (CPU {res['cpu']:.1f} s, every process, imports too)")
    print(f"throughput       {rate:,.0f} events/s")
    print(f"w3lib reference  {ref_before:,.0f} URLs/s before, {ref_after:,.0f} after")
    print(f"ratio            {rate / ref_learn:.3f}   events/s per w3lib URL/s (issue 16: >= 0.18)")
    peak = f"{res['peak_mib']:,.0f} MiB"
    if n > 1:
        peak += f" the parent, {res['children_peak_mib']:,.0f} MiB the largest shard process"
    print(f"peak memory      {peak}    (target < 1024 a process)")
    print(
        f"urls {s['urls']:,}  clusters {s['clusters']:,}  alignments {s['alignments']:,}  "
        f"candidates {s['candidates']:,}  active rules {s['active_rules']:,}"
    )
    if args.pure_too:
        pure_rules = work / "rules-pure.jsonl"
        pres, pb, pa = learn(pure_rules, pure=True)
        prate = pres["events"] / pres["seconds"]
        print("\n== the same, pure-Python modules (DUSTONLINE_PURE_PYTHON=1)")
        print(f"modules          {pres['modules']}")
        print(f"throughput       {prate:,.0f} events/s")
        print(f"w3lib reference  {pb:,.0f} URLs/s before, {pa:,.0f} after")
        print(f"ratio            {prate / (pb * pa) ** 0.5:.3f}   events/s per w3lib URL/s")
        print(f"peak memory      {pres['peak_mib']:,.0f} MiB")
        same = pure_rules.read_bytes() == rules.read_bytes()
        print(f"compiled / pure  {rate / prate:.2f}x   rules byte-identical: {'yes' if same else 'NO'}")

    if args.reference:
        before = timed(canonicalize_url, urls)
        ref_res = reference_learn(args.reference, events, work)
        after = timed(canonicalize_url, urls)
        ref_rate = ref_res["events"] / ref_res["seconds"]
        print(f"\n== the learner of {args.reference}, same stream, same run (its own checkout)")
        rules_note = f"{ref_res['rules']:,} rules; this build {s['active_rules']:,}"
        print(f"throughput       {ref_rate:,.0f} events/s   ({rules_note})")
        print(f"w3lib reference  {before:,.0f} URLs/s before, {after:,.0f} after")
        print(f"ratio            {ref_rate / (before * after) ** 0.5:.3f}   events/s per w3lib URL/s")
        print(f"peak memory      {ref_res['peak_mib']:,.0f} MiB")
        print(
            f"this build / {args.reference}  {rate / ref_rate:.2f}x events/s, "
            f"{(rate / ref_learn) / (ref_rate / (before * after) ** 0.5):.2f}x in ratio to w3lib, "
            f"{(ref_res['cpu'] / ref_res['events']) / (res['cpu'] / res['events']):.2f}x in events per CPU second"
        )

    rs = RuleSet.load(rules)
    ours = timed(rs.canonicalize, urls)
    ref = timed(canonicalize_url, urls)
    try:  # the re2 extra, when installed: the same rules applied by RE2
        rs2 = RuleSet.load(rules, engine="re2")
    except ImportError:
        rs2 = None
    re2_rate = timed(rs2.canonicalize, urls) if rs2 is not None else 0.0
    print(f"\n== canonicalize ({len(urls):,} distinct URLs of the stream, {len(rs):,} rules, best of 3)")
    print(f"dustonline RuleSet.canonicalize   {ours:>12,.0f} URLs/s")
    if rs2 is not None:
        print(f"  with engine='re2'               {re2_rate:>12,.0f} URLs/s")
    print(f"w3lib.url.canonicalize_url        {ref:>12,.0f} URLs/s")
    print(f"ratio                             {ours / ref:>12.2f}x   (target >= 1.0)")
    if rs2 is not None:
        print(f"ratio, engine='re2'               {re2_rate / ref:>12.2f}x")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
