"""The service's commands, registered into ``dustonline`` through the
``dustonline.commands`` entry point (pyproject.toml), so the core CLI never imports Kafka:
``replay``, ``subscribe``, ``worker`` and ``canonicalize --from-topic``."""

from __future__ import annotations

import argparse
import sys
import time

from dustonline.cli import add_reading_options, progress_bar, tune_gc
from dustonline.config import load_config
from dustonline.rules import write_rules


def register(sub: argparse._SubParsersAction, rule_sources: dict) -> None:
    """Add the service's subcommands to ``sub``, and the rules topic as a rule source of
    the commands in ``rule_sources`` (command -> its mutually exclusive source group)."""
    canon = sub.choices["canonicalize"]
    rule_sources["canonicalize"].add_argument(
        "--from-topic",
        dest="rule_source",
        action="store_const",
        const=rules_from_topic,
        help="the live rule set from the rules topic (Kafka)",
    )
    canon.add_argument("--config", metavar="FILE", help="with --from-topic: broker and topic names")
    canon.add_argument("--timeout", type=float, default=60.0, help="with --from-topic: seconds to wait for the topic")

    s = sub.add_parser("replay", help="publish events from files to the pages topic (Kafka), keyed by site")
    s.add_argument("inputs", nargs="+", metavar="INPUT", help="event files, any format learn reads")
    s.add_argument("--topic", help="default: kafka.pages_topic of the config")
    s.add_argument("--rate", type=float, help="events per second at most (default: as fast as possible)")
    s.add_argument(
        "--batch",
        type=int,
        default=1,
        metavar="N",
        help="up to N events of one partition per message (JSON lines; default 1: one event per "
        "message). A worker learns 100-event messages about 2.6x faster",
    )
    s.add_argument("--config", metavar="FILE", help="YAML config; the kafka section names broker and topics")
    add_reading_options(s)
    s.set_defaults(func=cmd_replay)

    s = sub.add_parser("subscribe", help="the current rule set from the rules topic (Kafka)")
    s.add_argument("--follow", action="store_true", help="keep it current until interrupted")
    s.add_argument("--rules-out", metavar="FILE", help="write the rule set here (rewritten on changes with --follow)")
    s.add_argument("--snapshot", metavar="FILE", help="start from this rules file before the topic is read")
    s.add_argument("--config", metavar="FILE", help="YAML config; the kafka section names broker and topics")
    s.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the topic (default: %(default)s)")
    s.set_defaults(func=cmd_subscribe)

    s = sub.add_parser("worker", help="run a learning worker on the pages topic (Kafka, Faust); several form a group")
    s.add_argument("--config", metavar="FILE", help="YAML config; the kafka section names broker, topics, group")
    s.add_argument("--data-dir", metavar="DIR", help="local state directory (default: kafka.data_dir)")
    s.add_argument(
        "--web-port", type=int, metavar="PORT", help="Prometheus /metrics port (default: kafka.web_port; 0 = off)"
    )
    s.set_defaults(func=cmd_worker)


def _not_read(topic: str, cfg, timeout: float) -> None:
    print(
        f"dustonline: error: rules topic {topic} not read within {timeout:.0f} s "
        f"(broker {cfg.kafka.bootstrap_servers} down, or no such topic?)",
        file=sys.stderr,
    )


def rules_from_topic(args):
    """The live rule set for ``canonicalize --from-topic``; None (after saying why) when
    the topic was not read in time."""
    from .subscriber import RuleSubscriber

    cfg = load_config(args.config)
    with RuleSubscriber(cfg) as live:
        if not live.wait_until_current(args.timeout):
            _not_read(live.topic, cfg, args.timeout)
            return None
        rs = live.rules
    refused = live.refused
    print(
        f"dustonline: {len(rs.rules())} active rules from {cfg.kafka.rules_topic}"
        + (f"; {sum(refused.values())} records refused {refused}" if refused else ""),
        file=sys.stderr,
    )
    return rs


def cmd_replay(args) -> int:
    from .replay import replay

    cfg = load_config(args.config)
    bar = progress_bar(not args.quiet)
    try:
        r = replay(args.inputs, cfg, args.topic, args.rate, args.format, args.dead_letter, bar, batch=args.batch)
    finally:
        if bar is not None:
            bar.close()
    rate = r["sent"] / r["seconds"] if r["seconds"] > 0 else 0.0
    print(
        f"read {r['read']:,} records: sent {r['sent']:,} events to {r['topic']} ({rate:,.0f}/s, "
        f"{r['seconds']:.1f} s); skipped {r['skipped']:,} (not fetches); "
        f"rejected {r['rejected']:,} {r['rejected_by_reason']}".rstrip(),
        file=sys.stderr,
    )
    return 0


def cmd_subscribe(args) -> int:
    from .subscriber import RuleSubscriber

    cfg = load_config(args.config)
    sub = RuleSubscriber(cfg, snapshot=args.snapshot).start()
    try:
        if not sub.wait_until_current(args.timeout):
            _not_read(sub.topic, cfg, args.timeout)
            return 1
        last = None
        while True:
            rs = sub.rules
            if rs is not last:
                if args.rules_out:
                    n = sub.save_snapshot(args.rules_out)
                    print(f"{n} active rules -> {args.rules_out}", file=sys.stderr)
                else:
                    write_rules(sys.stdout.buffer, rs.rules())
                    sys.stdout.flush()
                last = rs
            if not args.follow:
                return 0
            time.sleep(0.5)
    finally:
        sub.stop()


def cmd_worker(args) -> int:
    try:
        from .worker import Worker
    except ImportError as e:
        print(
            f"dustonline: error: the worker needs the stream extra: pip install 'dustonline[stream]' ({e})",
            file=sys.stderr,
        )
        return 2
    cfg = load_config(args.config)
    if args.data_dir:
        cfg.kafka.data_dir = args.data_dir
    if args.web_port is not None:
        cfg.kafka.web_port = args.web_port
    tune_gc()
    Worker(cfg.check()).run()
    return 0
