"""State benchmark: is the learner's state bounded once the window evicts?

    python benchmarks/bench_state.py                  # 400k events over 100 days
    python benchmarks/bench_state.py --events 150000  # quicker
    python benchmarks/bench_state.py --compact        # also compact RocksDB at each row

bench_core.py's streams span 14 days, inside the 30-day window, so they never evict.
This one spans ``--days`` (100: more than three windows) of event time at the default
config, with pages discovered evenly over the whole span, as an operator's continuous
crawl of the same sites would arrive:

1. A generated stream is written to a temp file (not timed). The generator discovers
   pages in the first 70% of its ``duration`` and fetches aliases later, so the stream
   is generated over ``days / 0.7`` and cut at ``days``: new pages keep coming to the end.
2. A child process learns it as ``dustonline learn`` does (``read_events``, an
   ``OnlineLearner`` on a RocksDB store in a temp dir). Every ``--step`` days of event
   time it checkpoints (a worker does the same) and prints one row: events so far, URLs
   and clusters held, keys of each store table, the RocksDB directory's size, peak RSS
   in that period (VmHWM, reset at each row through /proc/self/clear_refs), and the
   period's learner throughput as a ratio to ``w3lib.url.canonicalize_url`` on the
   same period's URLs, timed in slices between the learner's events (every 1000 events,
   the latest 100 URLs) so both see the same load: this machine's speed drifts 2-3x
   in a day, and other work shares it.
3. It says whether the state is flat: the last row within 15% of the row at two windows.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DAY = 86400.0
TOLERANCE = 0.15  # "flat": within this share of the row at two windows
REMEMBERING = {"ver", "epoch"}  # kept past the window on purpose (candidates.py), not judged
REF_EVERY = 1000  # learner events between two slices of the reference
REF_SLICE = 100  # the latest URLs, timed through w3lib at each slice


# --------------------------------------------------------------------------- stream


def gen_config(seed: int, sites: int, pages: int, days: float):
    from dustonline.evaluation.generator import DISCOVERY_SHARE, GenConfig

    return GenConfig(seed=seed, sites=sites, pages=pages, duration=days * DAY / DISCOVERY_SHARE)


def write_cut(cfg, days: float, path: Path | None) -> int:
    """Write the events of the first ``days`` of the stream (all of them discovered
    pages, their aliases, traps and errors so far); returns how many."""
    import msgspec

    from dustonline.evaluation.generator import generate

    end = cfg.start_ts + days * DAY
    encode = msgspec.json.Encoder().encode
    n = 0
    fh = open(path, "wb") if path is not None else None
    buf: list[bytes] = []
    try:
        for ev, _truth in generate(cfg):
            if ev.ts >= end:
                break  # events come in time order
            n += 1
            if fh is not None:
                buf.append(encode(ev.to_json()))
                if len(buf) >= 8192:
                    fh.write(b"\n".join(buf) + b"\n")
                    buf.clear()
        if fh is not None and buf:
            fh.write(b"\n".join(buf) + b"\n")
    finally:
        if fh is not None:
            fh.close()
    return n


# --------------------------------------------------------------------------- measuring


def _status(field: str, pid: int | str = "self") -> int | None:
    """A VmXXX line of /proc/<pid>/status, in KiB (None off Linux)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS, so the next reading is this period's peak."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_kib(resettable: bool) -> int:
    hwm = _status("VmHWM") if resettable else None
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def table_keys(store) -> dict[str, int]:
    """Keys of each table, counted on RocksDB itself (after a flush): what is on disk,
    whatever the tables cache."""
    counts: dict[str, int] = {}
    it = store._b.db.iter()
    it.seek_to_first()
    while it.valid():
        name = it.key().partition(b"\x00")[0].decode()
        counts[name] = counts.get(name, 0) + 1
        it.next()
    return counts


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def ref_secs(urls: list[str]) -> float:
    """Seconds w3lib's canonicalize_url takes on ``urls``: the speed reference."""
    from w3lib.url import canonicalize_url

    t0 = time.perf_counter()
    for u in urls:
        canonicalize_url(u)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- child: learn


def child(events: str, state: str, step_days: float, compact: bool) -> None:
    import w3lib.url  # noqa: F401  (imported here, not inside the first timed slice)

    from dustonline.cli import tune_gc
    from dustonline.config import Config
    from dustonline.events.readers import Rejected, read_events
    from dustonline.learner.online import OnlineLearner
    from dustonline.state.store import rocks_store

    cfg = Config().check()
    tune_gc()
    store = rocks_store(state, cfg.storage.cache_entries)
    learner = OnlineLearner(cfg, store)
    resettable = reset_peak()
    step = step_days * DAY
    start = edge = None
    busy = ref_t = 0.0
    ref_n = 0
    recent: list[str] = []
    period_events = 0
    rejected = 0

    def row(day: float) -> None:
        nonlocal busy, ref_t, ref_n, period_events
        peak = peak_kib(resettable)  # before measuring allocates anything
        rss = _status("VmRSS")
        rate = period_events / busy if busy > 0 else 0.0
        ref = ref_n / ref_t if ref_t > 0 else 0.0
        learner.checkpoint()  # a worker's checkpoint: pending writes and memtables reach disk
        disk = du(Path(state))
        disk_c = None
        if compact:
            store._b.db.compact_range(None, None)
            disk_c = du(Path(state))
        s = learner.summary()
        out = {
            "day": day,
            "events": s["events"],
            "urls": s["urls"],
            "clusters": s["clusters"],
            "evicted_urls": s["evicted_urls"],
            "candidates": s["candidates"],
            "active_rules": s["active_rules"],
            "tables": table_keys(store),
            "disk": disk,
            "disk_compacted": disk_c,
            "peak_kib": peak,
            "rss_kib": rss,
            "rate": rate,
            "ref_rate": ref,
            "period_events": period_events,
            "peak_resettable": resettable,
        }
        print(json.dumps(out), flush=True)
        busy = ref_t = 0.0
        ref_n = period_events = 0
        reset_peak()

    it = iter(read_events([events]))
    t0 = time.perf_counter()
    while True:
        try:
            item = next(it)
        except StopIteration:
            break
        if isinstance(item, Rejected):
            rejected += 1
            continue
        ts = item.ts
        if start is None:
            start, edge = ts, ts + step
        if ts >= edge:
            busy += time.perf_counter() - t0
            while ts >= edge:
                edge += step
            row((edge - step - start) / DAY)
            t0 = time.perf_counter()
        learner.learn_one(item)
        period_events += 1
        if period_events % REF_EVERY >= REF_EVERY - REF_SLICE:
            recent.append(item.url)
            if len(recent) == REF_SLICE:
                t1 = time.perf_counter()
                busy += t1 - t0
                ref_t += ref_secs(recent)
                ref_n += len(recent)
                recent.clear()
                t0 = time.perf_counter()
    learner.flush()
    busy += time.perf_counter() - t0
    row((ts - start) / DAY if start is not None else 0.0)
    learner.close()
    if rejected:
        print(json.dumps({"rejected": rejected}), flush=True)


# --------------------------------------------------------------------------- parent: report


def mib(n: float) -> str:
    return f"{n / (1 << 20):,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=400_000, help="approximate stream size")
    ap.add_argument("--days", type=float, default=100.0, help="event time the stream spans")
    ap.add_argument("--step", type=float, default=10.0, help="days of event time per row")
    ap.add_argument("--sites", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--compact", action="store_true", help="also compact RocksDB at each row and show its size")
    ap.add_argument("--keep", metavar="DIR", help="keep the stream and state here")
    ap.add_argument("--child", nargs=4, metavar=("EVENTS", "STATE", "STEP", "COMPACT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        events, state, step, comp = args.child
        child(events, state, float(step), comp == "1")
        return

    from dustonline.config import Config

    window = Config().check().window
    work = Path(args.keep or tempfile.mkdtemp(prefix="dustonline-bench-state-"))
    work.mkdir(parents=True, exist_ok=True)
    events, state = work / "events.jsonl", work / "state"
    probe_pages = 4000
    probe = write_cut(gen_config(args.seed, 20, probe_pages, args.days), args.days, None)
    pages = int(args.events * probe_pages / probe)
    t0 = time.perf_counter()
    n = write_cut(gen_config(args.seed, args.sites, pages, args.days), args.days, events)
    print(
        f"stream: {n:,} events over {args.days:g} days of event time, {args.sites} sites, {pages:,} pages, "
        f"generated in {time.perf_counter() - t0:.1f} s -> {events}"
    )
    print(
        f"config: default (window {window.seconds / DAY:g} days, sweep every {window.sweep_every / DAY:g} day, "
        f"cap {window.max_urls_per_site:,} URLs a site)"
    )
    shutil.rmtree(state, ignore_errors=True)  # a kept directory must not resume old state
    cmd = [sys.executable, __file__, "--child", str(events), str(state), str(args.step), "1" if args.compact else "0"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    rows = []
    names: list[str] = []
    for line in proc.stdout:
        r = json.loads(line)
        if "rejected" in r:
            print(f"rejected events: {r['rejected']}")
            continue
        rows.append(r)
        if len(rows) == 1:
            head = (
                f"{'day':>5} {'events':>9} {'urls':>8} {'clusters':>8} {'evicted':>8} {'rules':>5} "
                f"{'disk MiB':>8} {'compact':>7} {'peak RSS':>8} {'RSS':>5} {'ev/s':>7} {'ratio':>6}"
            )
            print(
                "\nper period of event time (peak RSS: highest in the period, MiB; ratio: learner events/s "
                "as a share of w3lib canonicalize_url URLs/s, timed between the same period's events)"
            )
            print(head)
        print(
            f"{r['day']:>5.0f} {r['events']:>9,} {r['urls']:>8,} {r['clusters']:>8,} {r['evicted_urls']:>8,} "
            f"{r['active_rules']:>5} {mib(r['disk']):>8} "
            f"{mib(r['disk_compacted']) if r['disk_compacted'] is not None else '-':>7} "
            f"{r['peak_kib'] / 1024:>8,.0f} {(r['rss_kib'] or 0) / 1024:>5,.0f} {r['rate']:>7,.0f} "
            f"{100 * r['rate'] / r['ref_rate'] if r['ref_rate'] else 0:>5.2f}%",
            flush=True,
        )
        names = sorted(set(names) | set(r["tables"]))
    if proc.wait() != 0:
        sys.exit(f"learner child failed ({proc.returncode})")
    print(f"\nlearned in {time.perf_counter() - t0:.0f} s")
    if not rows[0]["peak_resettable"]:
        print("(no /proc/self/clear_refs: peak RSS is the process's peak so far, not the period's)")

    print("\nkeys per store table")
    width = max(len(x) for x in names)
    print(f"{'day':>{width}} " + " ".join(f"{r['day']:>8.0f}" for r in rows))
    for name in names:
        print(f"{name:>{width}} " + " ".join(f"{r['tables'].get(name, 0):>8,}" for r in rows))
    print(f"{'total':>{width}} " + " ".join(f"{sum(r['tables'].values()):>8,}" for r in rows))

    days_w = window.seconds / DAY
    base = next((r for r in rows if r["day"] >= 2 * days_w - 1e-9), None)
    last = rows[-1]
    if base is None or base is last:
        print(f"\nflat: not judged (the stream must span more than two windows, {2 * days_w:g} days)")
    else:
        checks = {
            "urls": (base["urls"], last["urls"]),
            "clusters": (base["clusters"], last["clusters"]),
            "keys": (sum(base["tables"].values()), sum(last["tables"].values())),
            "disk": (base["disk"], last["disk"]),
            "peak RSS": (base["peak_kib"], last["peak_kib"]),
        }
        if last["disk_compacted"] is not None:
            checks["disk compacted"] = (base["disk_compacted"], last["disk_compacted"])
        grown = {k: b / a - 1 for k, (a, b) in checks.items() if a}
        growing = {
            name: last["tables"].get(name, 0) / base["tables"][name] - 1
            for name in names
            if name not in REMEMBERING
            and base["tables"].get(name, 0) >= 100
            and last["tables"].get(name, 0) > base["tables"][name] * (1 + TOLERANCE)
        }
        print(
            f"\nday {last['day']:.0f} against day {base['day']:.0f} (two windows): "
            + ", ".join(f"{k} {v:+.1%}" for k, v in grown.items())
        )
        if growing:
            print("tables growing: " + ", ".join(f"{k} {v:+.1%}" for k, v in growing.items()))
        kept = {name: last["tables"].get(name, 0) - base["tables"].get(name, 0) for name in sorted(REMEMBERING)}
        print(
            "remembered on purpose (versions and count epochs of dropped candidates, one key a rule id): "
            + ", ".join(f"{k} {v:+,} keys" for k, v in kept.items())
        )
        flat = all(abs(v) <= TOLERANCE for v in grown.values()) and not growing
        print(f"flat after the first window (within {TOLERANCE:.0%}): {'yes' if flat else 'NO'}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
