"""End to end through Kafka: one worker against the embedded learner, in the same run.

    python benchmarks/bench_stream.py [--events 200000] [--batch 100] [--batched-only]
        [--latency-events 40000 --rate 4000 --latency-batch-ms 0] [--workers 1] [--rounds 1]

Needs a broker: uses the one on 127.0.0.1:9092 (DUSTONLINE_KAFKA_PORT), or starts
scripts/kafka.sh's and stops it at the end. Prints:

1. Throughput. The stream is replayed onto a fresh pages topic first, one event per
   message and then ``--batch`` events per message (`dustonline replay --batch`); each
   time the workers learn it, from its first event to its last checkpoint (consume,
   parse, learn, RocksDB table, changelog). The embedded learner (`dustonline learn`'s
   path: read, parse, learn, RocksDB; with ``--partitions N`` for N workers) runs on the
   same events and config just before and just after each worker run; the ratios are
   workers / the geometric mean of those two.
   ``--rounds N`` measures both N times in turn and prints the median ratios with
   their spread: this machine's speed drifts by more than the effects measured.
2. Rule latency. A second stream is published at a steady rate while the workers learn
   it and a subscriber follows the rules topic. For every rule activation, the embedded
   learner on the same stream says which event's processing published it; the latency
   is from publishing that event to the subscriber holding the rule. Derivation is
   debounced (learning.refresh_every events), so the evidence for a rule can be complete
   up to that many events before the event that publishes it; that wait is not counted.

``--workers N`` runs N workers on N partitions (the default config's routing: sites
keyed by registered domain), for both measurements. ``--pool-every N`` sets
learning.pool_every on both sides (default: the config's, 5,000; 0: the group pools
when quiet): with several partitions the replay places a round every N events, where
each partition waits for the group (stream/rounds.py), and the embedded reference pools
at the same events.
"""

from __future__ import annotations

import argparse
import atexit
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_state import _status  # noqa: E402  (benchmarks/ is on the path: the script's own folder)

from dustonline.config import Config, Kafka, load_config  # noqa: E402
from dustonline.evaluation.generator import GenConfig, generate  # noqa: E402
from dustonline.learner.online import OnlineLearner  # noqa: E402
from dustonline.learner.partitioned import PartitionedLearner  # noqa: E402
from dustonline.rules.ruleset import ACTIVE  # noqa: E402
from dustonline_stream.admin import ensure_topics  # noqa: E402
from dustonline_stream.pages import PagePublisher  # noqa: E402
from dustonline_stream.replay import replay  # noqa: E402
from dustonline_stream.workerproc import WorkerProc, learned_all, partitions_state, service_config, wait_until  # noqa: E402


def broker() -> str:
    """The local broker; one this run starts is stopped when it ends, since the test
    suite of a checkout cannot start its own on a port left taken."""
    port = os.environ.get("DUSTONLINE_KAFKA_PORT", "9092")
    script = ROOT / "scripts" / "kafka.sh"
    if subprocess.run(["bash", str(script), "status"], capture_output=True).returncode != 0:
        print("starting a local broker (scripts/kafka.sh start) ...", flush=True)
        subprocess.run(["bash", str(script), "start", "--fresh"], check=True)
        atexit.register(subprocess.run, ["bash", str(script), "stop"], capture_output=True)
    return f"127.0.0.1:{port}"


def stream_file(n_events: int, seed: int, tmp: Path) -> tuple[Path, list]:
    pages = max(1000, int(n_events / 1.65))
    events = []
    for ev, _ in generate(GenConfig(seed=seed, sites=max(20, n_events // 2000), pages=pages)):
        events.append(ev)
        if len(events) >= n_events:
            break
    path = tmp / f"stream-{seed}.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        for ev in events:
            f.write(msgspec.json.encode(ev.to_json()) + b"\n")
    return path, events


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU time of a process (this one by default): a rate per CPU second
    holds still when other work shares the cores, where wall-clock rates do not."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def embedded_rate(path: Path, cfg, partitions: int = 1) -> tuple[float, float, int]:
    """`dustonline learn`'s path (read, parse, learn, flush, checkpoint into RocksDB), with
    ``--partitions`` above 1: events per second and per CPU second, and the rules learned."""
    from dustonline.runner import LearnRun

    c0 = cpu_seconds()
    # in this process, as a worker learns its partitions: `learn` alone would run the
    # shards on every core (learner/parallel.py), a speed no single worker is compared to
    run = LearnRun([str(path)], cfg, partitions=partitions if partitions > 1 else None, processes=1)
    run.run(progress=False)
    cpu = cpu_seconds() - c0
    learner, secs = run.learner, run.seconds
    n, rules = learner.summary()["events"], sum(r.status == ACTIVE for r in learner.rules())
    run.close()
    return n / secs, n / cpu, rules


def worker_rate(
    path: Path, n_events: int, host: str, tmp: Path, args, batch: int
) -> tuple[float, float, dict, str, float]:
    """``--workers`` workers learning the stream from a fresh topic, replayed ``batch``
    events per message: events per second, per CPU second of the workers, the partitions'
    learner summaries summed, the first worker's metrics, the largest worker's peak RSS."""
    n = args.workers
    # a partition read to its end derives after idle_flush_seconds of quiet: 0.2 s, not
    # the 1 s default, so the run's end waits less for what is not throughput
    cfg_path = service_config(
        host,
        tmp,
        partitions=n,
        learning=args.learning_settings,
        checkpoint_every=args.checkpoint_every,
        idle_flush_seconds=0.2,
        **_fetch(args),
    )
    cfg = load_config(cfg_path)
    t0 = time.perf_counter()
    r = replay([str(path)], cfg, batch=batch)
    print(
        f"replayed onto {cfg.kafka.pages_topic} in {time.perf_counter() - t0:.1f} s "
        f"({r['messages']:,} messages of up to {batch} events)"
    )
    ws = [WorkerProc(cfg_path, tmp, f"bench-{batch}-{i}").start() for i in range(n)]

    def cpu() -> float:
        return sum(cpu_seconds(w.proc.pid) for w in ws)

    try:
        # the clock starts once the group has formed: every worker owns a partition and
        # every partition is learning. A worker that starts first takes every partition
        # and hands some over when the next joins; a clock started before that hand-over
        # timed a rebalance (2 workers, 100 events per message: 0.16 of embedded)
        started = None

        def progress() -> bool:
            nonlocal started
            if not all(w.alive() for w in ws):
                raise AssertionError("a worker exited:\n" + "\n".join(w.tail() for w in ws if not w.alive()))
            st = partitions_state(ws)
            done = sum(s["events"] for s in st.values())
            if (
                started is None
                and len(st) == n
                and all(s["events"] for s in st.values())
                and all((w.state() or {}).get("assigned") for w in ws)
            ):
                started = (time.perf_counter(), cpu(), done)
            return learned_all(ws, n, n_events)()

        wait_until(progress, 3600, "the workers to learn the stream", ws)
        t_end, c_end = time.perf_counter(), cpu()
        t_start, c_start, first = started
        print(f"  ({batch} per message: timed from the group's forming, at {first:,} events learned)")
        rate, cpu_rate = (n_events - first) / (t_end - t_start), (n_events - first) / (c_end - c_start)
        st = partitions_state(ws)
        total = {k: sum(s[k] for s in st.values()) for k in ("active_rules", "events")}
        peak = max(_status("VmHWM", w.proc.pid) or 0 for w in ws) / 1024  # a live process's peak RSS
        return rate, cpu_rate, total, ws[0].get("/metrics"), peak
    finally:
        for w in ws:
            w.stop()


def _fetch(args) -> dict:
    return {"max_partition_fetch_bytes": args.fetch_bytes} if args.fetch_bytes else {}


def throughput(args, host: str, tmp: Path) -> None:
    path, events = stream_file(args.events, 1, tmp)
    print(
        f"\n== throughput: {len(events):,} events, {len({e.url.split('/')[2] for e in events}):,} hosts, "
        f"{args.workers} worker(s) on as many partitions"
    )
    ratios: dict[int, list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        if args.rounds > 1:
            print(f"-- round {r + 1} of {args.rounds}")
        for batch, ratio, cpu_ratio in _throughput_round(args, host, tmp, path, len(events)):
            ratios.setdefault(batch, []).append((ratio, cpu_ratio))
    if args.rounds > 1:
        for batch, rs in ratios.items():
            wall, cpu = sorted(x for x, _ in rs), sorted(y for _, y in rs)
            print(
                f"median of {args.rounds} rounds, {batch:>3}/message {statistics.median(wall):>6.2f}   "
                f"(rounds {wall[0]:.2f}-{wall[-1]:.2f}; target >= {0.6 if batch == 1 else 0.8}; per CPU second "
                f"{statistics.median(cpu):.2f}, {cpu[0]:.2f}-{cpu[-1]:.2f})"
            )


def _throughput_round(args, host: str, tmp: Path, path: Path, n_events: int) -> list[tuple[int, float, float]]:
    """One reading of each ratio: the embedded learner, then the workers on each message
    size, each followed by the embedded learner again; a worker run is compared with the
    geometric mean of the embedded runs just before and after it, as bench_core times
    w3lib, so that a drift of the machine's speed during the round (the embedded rate
    moved by 1.4x between rounds of one run) biases neither side."""
    cfg = load_config(service_config(host, tmp, partitions=args.workers, learning=args.learning_settings))
    emb = [embedded_rate(path, cfg, args.workers)]
    rows = []
    for batch in dict.fromkeys(((1,) if not args.batched_only else ()) + (args.batch,)):
        rate, cpu_rate, st, metrics, peak = worker_rate(path, n_events, host, tmp, args, batch)
        emb.append(embedded_rate(path, cfg, args.workers))
        ckpt = {
            line.split()[0]: float(line.split()[1])
            for line in metrics.splitlines()
            if line.startswith(
                (
                    "dustonline_checkpoint_seconds_sum",
                    "dustonline_checkpoint_seconds_count",
                    "dustonline_checkpoint_records_total",
                    "dustonline_checkpoint_bytes_sum",
                )
            )
        }
        n_ckpt = ckpt.get("dustonline_checkpoint_seconds_count", 0) or 1
        before, after = emb[-2], emb[-1]
        ref, ref_cpu = (before[0] * after[0]) ** 0.5, (before[1] * after[1]) ** 0.5
        rows.append((batch, rate, cpu_rate, st, n_ckpt, ckpt, peak, ref, ref_cpu))
    for batch, rate, cpu_rate, st, n_ckpt, ckpt, peak, *_ in rows:
        print(
            f"worker, {batch:>3} event(s)/message {rate:>9,.0f} events/s {cpu_rate:>9,.0f} per CPU s   "
            f"({st['active_rules']} active rules of the partitions, worker 1: {n_ckpt:.0f} checkpoints, "
            f"{ckpt.get('dustonline_checkpoint_records_total', 0) / n_ckpt:,.0f} records, "
            f"{ckpt.get('dustonline_checkpoint_bytes_sum', 0) / n_ckpt / 1e6:.1f} MB "
            f"and {1000 * ckpt.get('dustonline_checkpoint_seconds_sum', 0) / n_ckpt:.0f} ms each; "
            f"peak RSS {peak:,.0f} MiB)"
        )
    rates = ", ".join(f"{e[0]:,.0f}" for e in emb)
    when = "before and after" if len(emb) == 2 else "before, between and after"
    print(f"embedded learner           {rates} events/s {when}   ({emb[0][2]} active rules)")
    out = []
    for batch, rate, cpu_rate, *_, ref, ref_cpu in rows:
        target = 0.6 if batch == 1 else 0.8
        print(
            f"ratio worker/embedded, {batch:>3}/message {rate / ref:>6.2f}   (target >= {target}; per CPU second "
            f"{cpu_rate / ref_cpu:.2f})"
        )
        out.append((batch, rate / ref, cpu_rate / ref_cpu))
    return out


class _Watch(threading.Thread):
    """The crawler side: follows the rules topic, notes when each (id, version) arrives."""

    def __init__(self, cfg):
        super().__init__(daemon=True)
        self.cfg, self.seen, self.partial, self.stop = cfg, {}, {}, threading.Event()

    def run(self) -> None:
        from kafka import KafkaConsumer, TopicPartition

        from dustonline_stream.worker import partials_topic_name

        c = KafkaConsumer(
            bootstrap_servers=self.cfg.kafka.bootstrap_servers,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=10,
        )
        rules = TopicPartition(self.cfg.kafka.rules_topic, 0)
        # where the merge step starts
        partials = [TopicPartition(partials_topic_name(self.cfg), p) for p in range(self.cfg.kafka.partitions)]
        c.assign([rules, *partials])
        c.seek_to_beginning(rules, *partials)
        dec = msgspec.json.Decoder()
        while not self.stop.is_set():
            for tp, recs in c.poll(timeout_ms=20).items():
                now = time.perf_counter()
                for r in recs:
                    if r.value:
                        v = dec.decode(r.value)
                        if tp != rules:
                            v = v["rule"]
                        if v["status"] == ACTIVE:
                            (self.seen if tp == rules else self.partial).setdefault((v["id"], v["version"]), now)
        c.close()


def latency(args, host: str, tmp: Path) -> None:
    from kafka import KafkaProducer

    from dustonline_stream.topics import page_key, page_value

    path, events = stream_file(args.latency_events, 2, tmp)
    n = args.workers
    cfg_path = service_config(
        host,
        tmp,
        partitions=n,
        learning=args.learning_settings,
        checkpoint_every=args.checkpoint_every,
        **_fetch(args),
    )
    cfg = load_config(cfg_path)
    # which event publishes each activation (the embedded learner on the same stream)
    learner = PartitionedLearner(cfg, n) if n > 1 or cfg.learning.shards else OnlineLearner(cfg)
    trigger = {}
    for i, ev in enumerate(events):
        for r in learner.learn_one(ev):
            if r.status == ACTIVE:
                trigger[(r.id, r.version)] = i
    how = f"packed every {args.latency_batch_ms:g} ms" if args.latency_batch_ms > 0 else "one per message"
    print(
        f"\n== rule latency: {len(events):,} events at {args.rate:,.0f}/s, {how}, {len(trigger)} activations, "
        f"{n} worker(s) on as many partitions"
    )
    ensure_topics(cfg)
    ws = [WorkerProc(cfg_path, tmp, f"latency-{i}").start() for i in range(n)]
    watch = _Watch(cfg)

    def joined() -> bool:
        states = [w.state() or {} for w in ws]
        return all(s.get("assigned") for s in states) and sorted(p for s in states for p in s["assigned"]) == list(
            range(n)
        )

    try:
        wait_until(joined, 120, "the workers to join", ws)
        watch.start()
        prod = KafkaProducer(bootstrap_servers=host, acks=1, linger_ms=0)
        # with --latency-batch-ms, a crawler that packs with PagePublisher (stream/pages.py):
        # each interval's events go as one JSON-lines message per partition; an event's
        # latency still starts when it is handed over, so the wait in the pack counts
        pub = None
        if args.latency_batch_ms > 0:
            pub = PagePublisher(cfg, batch=1 << 30, linger_ms=args.latency_batch_ms, producer=prod)
        sent = [0.0] * len(events)
        t0 = time.perf_counter()
        for i, ev in enumerate(events):
            ahead = i / args.rate - (time.perf_counter() - t0)
            if ahead > 0:
                time.sleep(ahead)
            sent[i] = time.perf_counter()
            if pub is not None:
                pub.send(ev)
                continue
            prod.send(cfg.kafka.pages_topic, key=page_key(ev.url), value=page_value(ev))
            if i % 200 == 0:
                prod.flush()
        if pub is not None:
            pub.close()
        prod.flush()
        # every predicted activation, or none new for 10 s: a group fed by a producer other
        # than replay pools where its coordinator finds it (stream/pool.py), which the
        # embedded model cannot place, so with several workers a version can differ
        # (counted as not seen below)
        deadline, last = time.monotonic() + 60, (-1, time.monotonic())
        while not all(k in watch.seen for k in trigger) and time.monotonic() < deadline:
            if len(watch.seen) != last[0]:
                last = (len(watch.seen), time.monotonic())
            elif n > 1 and time.monotonic() - last[1] > 10:
                break
            if not all(w.alive() for w in ws):
                raise AssertionError("a worker exited:\n" + "\n".join(w.tail() for w in ws if not w.alive()))
            time.sleep(0.2)
        delay = [
            line
            for w in ws
            for line in w.get("/metrics").splitlines()
            if line.startswith("dustonline_event_delay_seconds_bucket")
        ]
    finally:
        watch.stop.set()
        for w in ws:
            w.stop()

    def pct(values, f):
        values = sorted(values)
        return values[min(len(values) - 1, int(f * len(values)))] * 1000

    lat = [watch.seen[k] - sent[i] for k, i in trigger.items() if k in watch.seen]
    learn = [watch.partial[k] - sent[i] for k, i in trigger.items() if k in watch.partial]
    merge = [watch.seen[k] - watch.partial[k] for k in trigger if k in watch.seen and k in watch.partial]
    print(
        f"publish -> subscriber  p50 {pct(lat, 0.5):,.0f} ms   p99 {pct(lat, 0.99):,.0f} ms   "
        f"(target p99 < 2000 ms; {len(trigger) - len(lat)} not seen)"
    )
    counts: dict[str, float] = {}  # le -> events, over the workers
    for line in delay:
        le = line.split('le="')[1].split('"')[0]
        counts[le] = counts.get(le, 0.0) + float(line.split()[-1])
    total = counts.get("+Inf") or 1
    print(
        "  event delay to learning (share of events within): "
        + ", ".join(f"{le} s {c / total:.0%}" for le, c in counts.items() if le in ("0.05", "0.25", "1.0", "2.0"))
    )
    print(
        f"  of which: event -> partial rule (learn) p50 {pct(learn, 0.5):,.0f} ms p99 {pct(learn, 0.99):,.0f} ms; "
        f"partial -> merged rule (merge) p50 {pct(merge, 0.5):,.0f} ms p99 {pct(merge, 0.99):,.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--latency-events", type=int, default=40_000)
    ap.add_argument("--rate", type=float, default=4000.0, help="events/s published in the latency run")
    ap.add_argument(
        "--latency-batch-ms",
        type=float,
        default=0.0,
        help="in the latency run, pack the events of each interval into one message (0: one per message)",
    )
    ap.add_argument("--checkpoint-every", type=int, default=Kafka().checkpoint_every, help="kafka.checkpoint_every")
    ap.add_argument("--fetch-bytes", type=int, default=0, help="kafka.max_partition_fetch_bytes (0: the default)")
    ap.add_argument(
        "--batch",
        type=int,
        default=100,
        help="events per message in the second throughput run "
        "(replay --batch; the first run sends one event per message)",
    )
    ap.add_argument("--batched-only", action="store_true", help="skip the one-event-per-message run")
    ap.add_argument("--workers", type=int, default=1, help="workers, on as many partitions (default 1)")
    ap.add_argument(
        "--pool-every",
        type=int,
        default=Config().learning.pool_every,
        help="learning.pool_every, both sides (default: the config's; 0: pool when quiet)",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure the throughput this many times, workers and embedded learner in turn, and print the medians",
    )
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument(
        "--learning",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a learning setting for both sides, repeatable (e.g. shards=0 join_after=0: one learner per partition)",
    )
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    import yaml

    args.learning_settings = {"pool_every": args.pool_every}  # both sides' learning section
    for kv in args.learning:
        key, eq, value = kv.partition("=")
        if not eq:
            ap.error(f"--learning {kv!r}: expected KEY=VALUE")
        args.learning_settings[key] = yaml.safe_load(value)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    host = broker()
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as d:
        tmp = Path(d)
        if not args.skip_throughput:
            throughput(args, host, tmp)
        if not args.skip_latency:
            latency(args, host, tmp)


if __name__ == "__main__":
    main()
