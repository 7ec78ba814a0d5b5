"""The ``dustonline`` command: a thin layer over the library.

Other tools depend on these forms; change them only compatibly:
  dustonline --version
  dustonline learn INPUT... --rules-out RULES.jsonl|- [--state DIR] [--config FILE] [--format F] [--partitions N]
                   [--processes N]
  dustonline canonicalize --rules RULES.jsonl [--engine python|re2] [INPUT]
  dustonline rules show RULES.jsonl
  dustonline rules export --format nutch|stormcrawler|heritrix|dud [--rules RULES.jsonl] [-o FILE]
  dustonline explain --rules RULES.jsonl URL
  dustonline demo [--rules-out RULES.jsonl|-]
  dustonline generate --events OUT.jsonl[.gz] --truth TRUTH.jsonl[.gz] [--sites N --pages N --seed S]
  dustonline replay INPUT... [--topic T] [--rate N] [--config FILE]
  dustonline subscribe [--follow] [--rules-out FILE] [--config FILE]
  dustonline worker [--config FILE]
  dustonline canonicalize --from-topic [--config FILE] [INPUT]
  dustonline sketch [FILE...|-] [--content-type T] [--url URL [--ts TS] [--status N]]
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

from . import __version__, _compiled
from .config import ConfigError, load_config
from .console import progress_bar, tune_gc  # noqa: F401  (stream/cli.py uses both)
from .learner.parallel import ShardProcessError
from .rules.export import FORMATS as EXPORT_FORMATS
from .rules.ruleset import ENGINES, RuleError, RuleSet, read_rules, write_rules


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except (ConfigError, RuleError, ValueError, OSError) as e:
        print(f"dustonline: error: {e}", file=sys.stderr)
        return 2
    except ShardProcessError as e:  # a shard's process failed or was killed (learn)
        print(f"dustonline: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dustonline: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _parser() -> argparse.ArgumentParser:
    from .events.readers import FORMATS

    p = argparse.ArgumentParser(prog="dustonline", description="Online learner of URL canonicalization (DUST) rules.")
    p.add_argument(
        "--version",
        action="version",
        version=f"dustonline {__version__} ({_compiled.status})",
        help="print the version, and whether the learner runs compiled (setup.py), and exit",
    )
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    s = sub.add_parser("learn", help="learn rules from fetch events, in order, and write the active rule set")
    s.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="event files (JSON lines, crawl.log, CDX, CDXJ, WARC; .gz ok; - = stdin)",
    )
    s.add_argument(
        "--rules-out",
        required=True,
        metavar="RULES.jsonl",
        help="write the active rule set here (JSON lines; - = stdout, the summary stays on stderr)",
    )
    s.add_argument("--state", metavar="DIR", help="RocksDB state directory (default: a temporary one)")
    s.add_argument("--config", metavar="FILE", help="YAML config (default: built-in defaults = configs/default.yaml)")
    add_reading_options(s)
    s.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help=(
            "learn as a worker group on a pages topic of N partitions does: learning.shards learners "
            "(the same rules for every N dividing it), or one per partition when it is 0"
        ),
    )
    s.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help=(
            "learn the shards in up to N processes (default: one per usable core; 1 = this process); "
            "the same rules for every N. A --state directory keeps the number it was started with"
        ),
    )
    s.set_defaults(func=cmd_learn)

    s = sub.add_parser("canonicalize", help="one canonical key per input URL line")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--rules", metavar="RULES.jsonl", help="a rules file (dustonline learn --rules-out)")
    s.add_argument("input", nargs="?", default="-", metavar="INPUT", help="URLs, one per line (default: stdin)")
    s.add_argument(
        "--engine",
        choices=ENGINES,
        default="python",
        help="what applies the rules' contexts: Python's re (default) or RE2 (the re2 extra); the same keys",
    )
    s.set_defaults(func=cmd_canonicalize, rule_source=None)
    rule_sources = {"canonicalize": src}

    s = sub.add_parser("rules", help="inspect a rules file")
    rs = s.add_subparsers(dest="rules_cmd", required=True, metavar="SUBCOMMAND")
    s2 = rs.add_parser("show", help="readable table of the rules")
    s2.add_argument("path", metavar="RULES.jsonl", help="a rules file (dustonline learn --rules-out)")
    s2.add_argument("--all", action="store_true", help="also retired records")
    s2.set_defaults(func=cmd_rules_show)
    s2 = rs.add_parser("export", help="the rules in a crawler's own format (docs/crawlers.md)")
    s2.add_argument("--format", required=True, choices=sorted(EXPORT_FORMATS), help="the crawler's format")
    s2.add_argument("--rules", default="rules.jsonl", metavar="RULES.jsonl", help="a rules file (default: rules.jsonl)")
    s2.add_argument("-o", "--output", default="-", metavar="FILE", help="where to write it (default: standard output)")
    s2.set_defaults(func=cmd_rules_export)

    s = sub.add_parser("explain", help="which rule decides a URL, and its key")
    s.add_argument("--rules", required=True, metavar="RULES.jsonl", help="a rules file (dustonline learn --rules-out)")
    s.add_argument("url", metavar="URL", help="the URL to explain")
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser("demo", help="learn on the bundled sample stream and show what it saves")
    s.add_argument(
        "--rules-out",
        default=None,
        metavar="RULES.jsonl",
        help="also write the learned rules here (- = stdout; the report then goes to stderr)",
    )
    s.set_defaults(func=cmd_demo)

    s = sub.add_parser("generate", help="write a synthetic multi-site fetch stream with ground truth")
    s.add_argument("events", nargs="?", metavar="EVENTS", help="event file to write (JSON lines; .gz ok)")
    s.add_argument("truth", nargs="?", metavar="TRUTH", help="ground-truth file to write ({url, truth} lines)")
    s.add_argument("--events", dest="events_opt", metavar="OUT.jsonl", help="same as EVENTS (older form)")
    s.add_argument("--truth", dest="truth_opt", metavar="TRUTH.jsonl", help="same as TRUTH (older form)")
    s.add_argument("--sites", type=int, default=50, metavar="N", help="number of sites (default: %(default)s)")
    s.add_argument(
        "--pages",
        type=int,
        default=20000,
        metavar="N",
        help="distinct page contents over all sites; traps add more (default: %(default)s)",
    )
    s.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="random seed; the same seed writes the same stream (default: %(default)s)",
    )
    s.add_argument(
        "--dup-rate", type=float, metavar="F", help="share of pages also fetched under alias URLs (default 0.35)"
    )
    s.add_argument("--noise", type=float, metavar="F", help="share of trap events (default 0.02)")
    s.add_argument(
        "--families", metavar="a,b,c", help="alias families sites may use (names as in generate.FAMILIES, or all)"
    )
    s.add_argument("--drift-sites", type=int, metavar="N", help="sites whose URL scheme changes mid-stream (default 0)")
    s.add_argument("--drift-at", type=float, metavar="F", help="when, as a share of the stream's span (default 0.5)")
    s.add_argument("--layout", metavar="FILE", help="also write the sites and drift ground truth here (JSON)")
    s.add_argument(
        "--profile",
        choices=("default", "longtail"),
        default="default",
        help="workload: default, or longtail (many small sites, each with its own names and DUST mix; "
        "evaluation/longtail.py; --sites, --seed, --dup-rate, --noise apply, --pages does not)",
    )
    s.add_argument(
        "--setting", metavar="FILE:NAME", help="longtail: a named fixed setting, e.g. configs/eval/tuning.yaml:t1-base"
    )
    s.add_argument("--median-pages", type=float, metavar="N", help="longtail: median pages per site (default 60)")
    s.add_argument("--size-sigma", type=float, metavar="F", help="longtail: spread of log(site size) (default 1.3)")
    s.add_argument("--max-pages", type=int, metavar="N", help="longtail: pages of the largest site (default 20000)")
    s.add_argument("--compose", type=float, metavar="F", help="longtail: P(one more family per URL) (0.35)")
    s.add_argument("--clean-share", type=float, metavar="F", help="longtail: sites without aliases (default 0.15)")
    s.add_argument("--redirect-share", type=float, metavar="F", help="longtail: sites that redirect (default 0.3)")
    s.add_argument(
        "--case-sensitive-share", type=float, metavar="F", help="longtail: case-sensitive media sites (default 0.1)"
    )
    s.add_argument("--error-rate", type=float, metavar="F", help="longtail: mean share of non-2xx (default 0.02)")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("sketch", help="digest, simhash and length of a page body: the content fields of a fetch event")
    s.add_argument("files", nargs="*", metavar="FILE", help="page bodies, one JSON line each (default or -: stdin)")
    s.add_argument("--content-type", metavar="T", help="the response's Content-Type (default: sniffed)")
    s.add_argument("--url", help="print a complete fetch event for this URL (one body only)")
    s.add_argument("--ts", help="with --url: fetch time, epoch seconds or ISO-8601 (default: now)")
    s.add_argument("--status", type=int, default=200, help="with --url: HTTP status (default: %(default)s)")
    s.set_defaults(func=cmd_sketch)

    s = sub.add_parser("eval", help="replay a stream prequentially and measure what each method's rules save and lose")
    s.add_argument("inputs", nargs="+", metavar="INPUT", help="event files, any format learn reads")
    s.add_argument(
        "--truth",
        metavar="TRUTH.jsonl",
        help="ground truth from dustonline generate (default: the content digest, i.e. exact duplicates)",
    )
    s.add_argument("--layout", metavar="LAYOUT.json", help="a generated stream's site layout (marks concept drift)")
    from .evaluation.methods import METHODS

    s.add_argument(
        "--learner",
        default="all",
        metavar="NAME[,NAME]",
        help=f"methods to compare: {', '.join(METHODS)}, or all (default)",
    )
    s.add_argument("--config", metavar="FILE", help="YAML config (default: built-in defaults = configs/default.yaml)")
    s.add_argument("--format", choices=FORMATS, help="input format (default: auto per file)")
    s.add_argument(
        "--tail", type=float, default=0.2, help="held-out share of the events, at the end (default: %(default)s)"
    )
    s.add_argument("--report", metavar="DIR", help="write DIR/index.html (plots) and DIR/report.json")
    s.add_argument("--json", metavar="FILE", help="write the figures as JSON here (no plots)")
    s.add_argument("--quiet", action="store_true", help="no progress")
    s.set_defaults(func=cmd_eval)
    for register in _plugins():
        register(sub, rule_sources)
    return p


def add_reading_options(s: argparse.ArgumentParser) -> None:
    """The options of every command that reads event files (learn, replay)."""
    from .events.readers import FORMATS

    s.add_argument("--format", choices=FORMATS, help="input format (default: auto per file)")
    s.add_argument(
        "--dead-letter",
        default="dead-letter.jsonl",
        metavar="FILE",
        help="rejected records with reasons; each run rewrites it, a resumed run continues it (default: %(default)s)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar")


def _plugins():
    """Command sets other distributions register under the ``dustonline.commands`` entry
    point group (the Kafka service, dustonline_stream, registers replay, subscribe, worker
    and ``canonicalize --from-topic``): the core never imports them."""
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group="dustonline.commands"), key=lambda e: e.name):
        yield ep.load()


# ------------------------------------------------------------------ eval
def cmd_eval(args) -> int:
    import json

    from .evaluation import prequential as evaluation
    from .evaluation.methods import missing, resolve
    from .evaluation.report import markdown_table, write_report

    cfg = load_config(args.config)
    methods = resolve(args.learner)
    absent = missing(methods, report=bool(args.report))
    if absent:
        what = "; ".join(f"{mod} (for {', '.join(by)})" for mod, by in absent.items())
        raise ValueError(
            f"eval needs packages that are not installed: {what}. Install them with "
            "pip install 'dustonline[eval]', or leave those methods out (--learner online,dustlin,none)"
        )
    layout = json.loads(Path(args.layout).read_text()) if args.layout else None
    if isinstance(layout, dict):
        layout = layout.get("sites", [])
    tune_gc()
    stream = evaluation.load_stream(args.inputs, cfg, args.truth, args.format)
    res = evaluation.run(stream, cfg, methods, tail=args.tail, layout=layout, progress=not args.quiet)
    print(markdown_table(res))
    tg = res.get("targets") or {}
    if tg.get("coverage_vs_dustlin") is not None:
        print(
            f"\nonline / dustlin coverage on the tail: {tg['coverage_vs_dustlin']:.1%} "
            f"(lost {tg['lost_online']} vs {tg['lost_dustlin']})"
        )
    if tg.get("merges_vs_best_static") is not None:
        print(f"online / best static ({tg['best_static']}) merges: {tg['merges_vs_best_static']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, sort_keys=True))
    if args.report:
        page = write_report(res, args.report)
        print(f"report: {page}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------ learn
def cmd_learn(args) -> int:
    from .runner import LearnRun

    cfg = load_config(args.config)
    check_inputs(args.inputs)
    for dest, what in ((args.rules_out, "--rules-out"), (args.dead_letter, "--dead-letter")):
        if dest and dest != "-":
            check_writable(dest, what)
    run = LearnRun(args.inputs, cfg, args.state, args.format, args.dead_letter, args.partitions, args.processes)
    try:
        run.run(progress=not args.quiet)
        n = write_rules_out(args.rules_out, run.learner.rules())
        run.finish()
        print("\n".join(run.summary_lines(n, args.rules_out, args.dead_letter)), file=sys.stderr)
    finally:
        run.close()
    return 0


def check_inputs(inputs) -> None:
    """Every input readable before learning starts, not a traceback an hour in."""
    for p in inputs:
        if p == "-":
            continue
        path = Path(p)
        if not path.exists():
            raise ValueError(f"input {p}: no such file")
        if not path.is_file() or not os.access(path, os.R_OK):
            raise ValueError(f"input {p}: not a readable file")


def check_writable(dest: str, what: str) -> None:
    """An output that cannot be written is found before learning, not after."""
    path = Path(dest)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"{what} {dest}: is a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{what} {dest}: not writable")
    if not path.exists() and not (parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)):
        raise ValueError(f"{what} {dest}: cannot create a file in {parent} (missing or not writable)")


def write_rules_out(dest: str, rules) -> int:
    """``write_rules`` to the file ``dest``, or to standard output for ``-`` (as an input
    of ``-`` is standard input)."""
    if dest != "-":
        return write_rules(dest, rules)
    sys.stdout.flush()  # whatever was printed before comes first
    n = write_rules(sys.stdout.buffer, rules)
    sys.stdout.buffer.flush()
    return n


# ------------------------------------------------------------------ canonicalize / explain / show
def cmd_canonicalize(args) -> int:
    from .events.event import BadEvent, check_url

    try:
        RuleSet(engine=args.engine)  # a missing engine is said before any rule is read
    except ImportError as e:
        print(f"dustonline: {e}", file=sys.stderr)
        return 2
    if args.rule_source is not None:  # registered by a plugin (canonicalize --from-topic)
        rs = args.rule_source(args)
        if rs is None:
            return 1
        if args.engine != rs.engine:
            rs = RuleSet(rs.rules(), engine=args.engine)
    else:
        rs = RuleSet.load(args.rules, engine=args.engine)
    src = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8", errors="replace")
    out = sys.stdout
    warned = 0
    with src:
        for n, line in enumerate(src, 1):
            url = line.rstrip("\r\n")
            try:
                check_url(url.strip(), 1 << 20)
                key = rs.canonicalize(url.strip())
            except BadEvent as e:
                key = url
                warned += 1
                if warned <= 20:
                    print(f"dustonline: line {n}: not a URL ({e.reason}), key is the line itself", file=sys.stderr)
            out.write(key + "\n")
    if warned > 20:
        print(f"dustonline: {warned} lines were not URLs", file=sys.stderr)
    return 0


def cmd_rules_show(args) -> int:
    rules = list(read_rules(args.path))
    if not args.all:
        rules = [r for r in rules if r.status == "active"]
    print(format_rules(rules))
    return 0


def cmd_rules_export(args) -> int:
    """The export on stdout or in a file; each rule the format cannot express named on
    stderr with the reason (the crawler gives those URLs other keys than RuleSet)."""
    from .rules.export import load

    out = load(args.format)(list(read_rules(args.rules)))
    if args.output == "-":
        sys.stdout.write(out.text)
    else:
        Path(args.output).write_text(out.text, encoding="utf-8")
    for s in out.skipped:
        print(f"rule {s.rule_id}: not expressible in {args.format}: {s.reason}", file=sys.stderr)
    return 0


def format_rules(rules, width: int = 160) -> str:
    head = f"{'id':<16} {'status':<7} {'support':>8} {'fpr':>6} {'freq':>6}  {'hosts':<28} context -> transformation"
    rows = [head, "-" * min(width, len(head) + 40)]
    for r in rules:
        hosts = ", ".join(r.hosts[:2]) + (f" +{len(r.hosts) - 2}" if len(r.hosts) > 2 else "")
        rows.append(
            f"{r.id:<16} {r.status:<7} {r.support:>8,} {r.fpr:>6.3f} {r.freq:>6,}  {hosts[:28]:<28} "
            + (
                f"drop query parameter {r.drop_param!r}"
                if r.drop_param
                else f"read http as {r.canonical_scheme}"
                if r.canonical_scheme
                else f"read the hosts' URLs on {r.canonical_host}"
                if r.canonical_host
                else f"path edit {r.normalize}"
                if r.normalize
                else f"{r.context}  ->  {r.transformation}"
            )
        )
    rows.append(f"{len(rules)} rule(s)")
    return "\n".join(rows)


def cmd_explain(args) -> int:
    rs = RuleSet.load(args.rules)
    rule, key = rs.explain(args.url)
    print(f"url        {args.url}")
    if rule is None:
        print("rule       none applies (light normalization only)")
    else:
        print(
            f"rule       {rule.id}  (support {rule.support:,}, fpr {rule.fpr:.3f}, freq {rule.freq:,}, "
            f"version {rule.version})"
        )
        if rule.drop_param:
            print(f"drops      query parameter {rule.drop_param!r} (no rewrite rule applies to the rest)")
        elif rule.canonical_scheme:
            print(f"reads      http as {rule.canonical_scheme} (no rewrite rule applies to the rest)")
        elif rule.canonical_host:
            print(f"moves      the URL to host {rule.canonical_host} (no other rule applies to the rest)")
        elif rule.normalize:
            print(f"edits      the path: {rule.normalize} (no rewrite rule applies to the rest)")
        else:
            print(f"context    {rule.context}")
            print(f"transform  {rule.transformation}")
        dropped = [r.drop_param for r in rs.applicable(args.url) if r.drop_param]
        if dropped and not rule.drop_param:
            print(f"first      drops query parameters {', '.join(dropped)}")
    print(f"key        {key}")
    return 0


# ------------------------------------------------------------------ demo / generate
def sample_paths() -> tuple[Path, Path]:
    base = resources.files("dustonline") / "data"
    return Path(str(base / "sample-stream.jsonl.gz")), Path(str(base / "sample-truth.jsonl.gz"))


def cmd_demo(args) -> int:
    from .config import Config
    from .runner import LearnRun

    # with --rules-out -, standard output carries the rules only and the report goes to stderr
    out = sys.stderr if args.rules_out == "-" else sys.stdout
    events, truth_path = sample_paths()
    print(f"Learning on the bundled sample stream {events.name} (embedded mode, RocksDB in a temp dir) ...", file=out)
    cfg = Config().check()
    run = LearnRun([str(events)], cfg)
    run.run(progress=True)
    rules, s, secs = run.learner.rules(), run.learner.summary(), run.seconds
    run.close()
    print(
        f"{s['events']:,} events in {secs:.1f} s ({s['events'] / secs:,.0f}/s): {s['urls']:,} URLs, "
        f"{s['clusters']:,} clusters, {s['candidates']:,} candidates, {len(rules)} active rules\n",
        file=out,
    )
    print(format_rules(rules[:15]), file=out)
    if len(rules) > 15:
        print(f"... and {len(rules) - 15} more", file=out)
    from .evaluation.metrics import evaluate
    from .evaluation.prequential import load_truth

    truth, _ = load_truth(truth_path)

    rs = RuleSet(rules)
    m = evaluate(truth, rs.canonicalize)
    base = evaluate(truth, RuleSet().canonicalize)
    print(
        f"\nWhat the rules would save on these {m.urls:,} distinct URLs ({m.contents:,} distinct contents):", file=out
    )
    print(
        f"  fetches needed   {m.keys:,} instead of {base.keys:,}  (compression {m.compression:.1%}; "
        f"light normalization alone: {base.compression:.1%})",
        file=out,
    )
    print(f"  duplicates merged  {m.coverage:.1%} of all duplicate URLs (coverage)", file=out)
    print(f"  contents lost      {m.lost} ({m.lost_rate:.2%}): distinct pages merged away, never fetched", file=out)
    by_key: dict[str, list[str]] = {}
    rule_of: dict[str, str] = {}
    for u in truth:
        rule, key = rs.explain(u)
        by_key.setdefault(key, []).append(u)
        if rule is not None:
            rule_of.setdefault(key, rule.id)
    print("\nOne example per rule (the key, and URLs a crawler now fetches once):", file=out)
    shown: set[str] = set()
    for key, urls in sorted(by_key.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rid = rule_of.get(key)
        if len(urls) > 1 and rid and rid not in shown and len(shown) < 8:
            shown.add(rid)
            print(f"  {rid}  {key}", file=out)
            for u in urls[:3]:
                print(f"      <- {u}", file=out)
    if args.rules_out:
        write_rules_out(args.rules_out, rules)
        print(f"\nrules written to {'stdout' if args.rules_out == '-' else args.rules_out}", file=out)
    return 0


def cmd_generate(args) -> int:
    from .evaluation.generator import GenConfig, parse_families, write_layout, write_stream

    paths = []
    for name, pos, opt in (("EVENTS", args.events, args.events_opt), ("TRUTH", args.truth, args.truth_opt)):
        if pos and opt and pos != opt:
            raise ValueError(f"generate: {name} given twice ({pos} and --{name.lower()} {opt})")
        if not (pos or opt):
            raise ValueError("generate: EVENTS and TRUTH files are required")
        paths.append(pos or opt)
    from .evaluation import longtail

    if args.profile == "longtail":
        return longtail.generate_command(args, *paths)
    given = [k for k in longtail.LONGTAIL_ONLY if getattr(args, k) is not None]
    if given:
        raise ValueError(f"generate: --{given[0].replace('_', '-')} needs --profile longtail")
    knobs = {
        "dup_rate": args.dup_rate,
        "noise": args.noise,
        "families": parse_families(args.families),
        "drift_sites": args.drift_sites,
        "drift_at": args.drift_at,
    }
    cfg = GenConfig(
        seed=args.seed, sites=args.sites, pages=args.pages, **{k: v for k, v in knobs.items() if v is not None}
    )
    if args.layout:  # first: a bad config fails before any file is written
        write_layout(cfg, args.layout)
    n = write_stream(cfg, *paths)
    print(
        f"wrote {n} events to {paths[0]} and {paths[1]}" + (f", layout to {args.layout}" if args.layout else ""),
        file=sys.stderr,
    )
    return 0


def cmd_sketch(args) -> int:
    import json

    from .events.sketch import event, sketch

    files = args.files or ["-"]
    if args.url and len(files) > 1:
        raise ValueError("--url takes one body, got several files")
    for f in files:
        body = sys.stdin.buffer.read() if f == "-" else Path(f).read_bytes()
        if args.url:
            out = event(body, args.url, args.ts, args.status, args.content_type)
        else:
            out = {k: v for k, v in sketch(body, args.content_type).items() if v is not None}
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
