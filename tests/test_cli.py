"""The command forms other tools depend on, run as a user runs them."""

import argparse
import json
import subprocess
import sys
from importlib.metadata import version

import pytest

import dustonline
from dustonline.cli import _parser
from dustonline.config import Config
from dustonline.evaluation.generator import GenConfig, write_stream
from dustonline.rules.ruleset import read_rules

CMD = [sys.executable, "-m", "dustonline"]


def run(*args, input=None, check=True):
    p = subprocess.run(CMD + [str(a) for a in args], input=input, capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}")
    return p


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    events, truth = d / "events.jsonl", d / "truth.jsonl"
    write_stream(GenConfig(seed=5, sites=20, pages=6000), events, truth)
    # bad records among good ones: they must be dead-lettered with a reason, not stop the run
    with open(events, "ab") as fh:
        fh.write(b'{"url": "ftp://x.org/a", "ts": 1700000000}\n')
        fh.write(b"this is not json\n")
        fh.write(b'{"ts": 1700000000}\n')
        fh.write(b"\xff\xfe binary garbage\n")
        fh.write(b'{"url": "http://a.com/' + b"x" * 5000 + b'", "ts": 1700000000}\n')
    rules, dlq = d / "rules.jsonl", d / "dead.jsonl"
    p = run(
        "learn",
        events,
        "--rules-out",
        rules,
        "--state",
        d / "state",
        "--dead-letter",
        dlq,
        "--config",
        "configs/default.yaml",
    )
    return d, rules, dlq, p


def test_learn_writes_rules_and_summary(learned):
    d, rules, dlq, p = learned
    rs = list(read_rules(rules))
    assert rs and all(r.status == "active" for r in rs)
    # rewrite rules merge min_supp pairs; a parameter rule may stand on one cluster of its
    # site's evidence where other sites proved the name (learner/params.py)
    assert all(r.support >= 3 for r in rs if not r.drop_param)
    assert any(r.drop_param for r in rs) and all(r.support >= 1 for r in rs if r.drop_param)
    assert [(-r.support, r.id) for r in rs] == sorted((-r.support, r.id) for r in rs)
    for word in ("read", "learned", "ignored", "rejected", "clusters", "candidates", "active rules"):
        assert word in p.stderr
    assert (d / "state").is_dir()


def test_learn_dead_letters_bad_records_with_reasons(learned):
    _, _, dlq, p = learned
    rows = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert sorted(r["reason"] for r in rows) == sorted(
        ["not-http", "bad-json", "missing-url", "undecodable", "url-too-long"]
    )
    assert all(r["line"] > 0 and r["source"].endswith("events.jsonl") for r in rows)
    assert "5 rejected" in p.stderr


def test_canonicalize_one_key_per_line_in_order(learned):
    _, rules, _, _ = learned
    lines = ["http://www.example.com/a", "not a url at all", "", "HTTP://Example.COM:80/b#frag", "http://example.com/c"]
    p = run("canonicalize", "--rules", rules, input="\n".join(lines) + "\n")
    out = p.stdout.split("\n")[:-1]
    assert len(out) == len(lines)
    assert out[1] == "not a url at all" and out[2] == ""
    assert out[3] == "http://example.com/b"
    assert "not a URL" in p.stderr


def test_canonicalize_merges_aliases_of_a_learned_site(learned):
    d, rules, _, _ = learned
    rs = list(read_rules(rules))
    truth = [json.loads(line) for line in (d / "truth.jsonl").read_text().splitlines()]
    urls = [t["url"] for t in truth[:3000]]
    p = run("canonicalize", "--rules", rules, input="\n".join(urls) + "\n")
    keys = p.stdout.splitlines()
    assert len(keys) == len(urls)
    by_truth = {}
    for t, k in zip(truth[:3000], keys):
        by_truth.setdefault(t["truth"], set()).add(k)
    assert sum(1 for ks in by_truth.values() if len(ks) == 1) > 0.6 * len(by_truth)
    assert rs


def test_rules_show_and_explain(learned):
    _, rules, _, _ = learned
    first = next(read_rules(rules))
    p = run("rules", "show", rules)
    assert first.id in p.stdout and "rule(s)" in p.stdout
    host = first.hosts[0]
    url = f"http://{host}/definitely/not/seen"
    p = run("explain", "--rules", rules, url)
    assert "key" in p.stdout and url.split("//")[1].split("/")[0] in p.stdout


def test_one_knob_sets_every_evidence_count(tmp_path):
    from dustonline.config import config_from_dict

    assert (Config().check().learning.min_freq, Config().check().learning.min_supp) == (3, 3)
    L = config_from_dict({"learning": {"confidence": 0.97}}).learning
    assert (L.min_freq, L.min_supp) == (6, 6)
    L = config_from_dict({"learning": {"confidence": 0.97, "min_supp": 2}}).learning
    assert (L.min_freq, L.min_supp) == (6, 2)  # an explicit count still wins
    cfg = tmp_path / "c.yaml"
    cfg.write_text("learning:\n  confidence: 1.0\n")
    p = run("learn", "-", "--rules-out", tmp_path / "r.jsonl", "--config", cfg, input="", check=False)
    assert p.returncode == 2 and "learning.confidence must be in [0.5, 1)" in p.stderr
    assert "min_freq" not in p.stderr  # derived from it: one thing to fix


def test_bad_config_fails_fast_with_what_to_fix(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("learning:\n  min_supp: -3\n  k: 1\n")
    p = run("learn", "-", "--rules-out", tmp_path / "r.jsonl", "--config", cfg, input="", check=False)
    assert p.returncode == 2
    assert "learning.min_supp must be >= 1" in p.stderr and "learning.k must be >= 2" in p.stderr


def test_missing_rules_file_is_a_clear_error(tmp_path):
    p = run("canonicalize", "--rules", tmp_path / "nope.jsonl", input="http://a.com/\n", check=False)
    assert p.returncode == 2 and "cannot read rules file" in p.stderr


def test_demo_runs_on_the_bundled_sample():
    p = run("demo")
    assert "active rules" in p.stdout and "duplicates merged" in p.stdout
    assert "contents lost      0 " in p.stdout


def test_learn_derives_rules_from_the_tail_of_a_short_stream(tmp_path):
    """Fewer events than learning.refresh_every: the rules must still be derived."""
    lines = []
    for i in range(30):
        for host in ("www.s.com", "s.com"):
            lines.append(json.dumps({"url": f"http://{host}/news/{i}", "ts": 1.7e9 + i, "digest": f"sha1:P{i}"}))
    events = tmp_path / "ev.jsonl"
    events.write_text("\n".join(lines) + "\n")
    cfg = tmp_path / "c.yaml"
    # raw alignment: after the host rule (www.s.com), the clusters teach no rewrite rule
    cfg.write_text("learning:\n  min_freq: 3\n  min_supp: 3\n  holdout: 0\n  prepared: false\n")
    rules = tmp_path / "r.jsonl"
    run("learn", events, "--rules-out", rules, "--config", cfg)
    rewrite = [r for r in read_rules(rules) if r.context]  # the host rule (www.s.com) needs no derivation
    assert len(rewrite) == 1


def test_version():
    p = run("--version")
    from dustonline import _compiled

    assert p.stdout == f"dustonline {dustonline.__version__} ({_compiled.status})\n"  # compiled or why not
    assert version("dustonline") == dustonline.__version__, (
        "the installed metadata is of another version: reinstall (pip install -e .)"
    )


def test_learn_rules_out_dash_writes_the_rules_to_stdout(learned, tmp_path):
    d, rules, _, _ = learned
    p = run(
        "learn",
        d / "events.jsonl",
        "--rules-out",
        "-",
        "--state",
        tmp_path / "state",
        "--dead-letter",
        tmp_path / "dead.jsonl",
        "--config",
        "configs/default.yaml",
    )
    assert p.stdout.encode() == rules.read_bytes()  # the same bytes a file gets
    out = tmp_path / "stdout.jsonl"
    out.write_text(p.stdout)
    assert list(read_rules(out)) == list(read_rules(rules))
    assert "active rules" in p.stderr and "-> stdout" in p.stderr  # the summary stays on stderr


def test_demo_rules_out_dash_writes_the_rules_to_stdout_and_the_report_to_stderr(tmp_path):
    to_file = tmp_path / "rules.jsonl"
    run("demo", "--rules-out", to_file)
    p = run("demo", "--rules-out", "-")
    assert p.stdout.encode() == to_file.read_bytes()
    assert list(read_rules(to_file))
    assert "duplicates merged" in p.stderr and "rules written to stdout" in p.stderr


def _options_without_help(parser, path):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not helps.get(name):
                    yield f"{' '.join(path)} {name} (the command)"
                yield from _options_without_help(sub, path + [name])
        elif not action.help or action.help == argparse.SUPPRESS:
            yield f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_of_every_command_has_help():
    """Plugin commands included (dustonline_stream registers replay, subscribe, worker and
    canonicalize --from-topic through the dustonline.commands entry point)."""
    parser = _parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"learn", "canonicalize", "rules", "explain", "demo", "generate", "sketch", "eval"} <= set(commands)
    assert {"replay", "subscribe", "worker"} <= set(commands), "the dustonline_stream commands are not registered"
    assert "--from-topic" in commands["canonicalize"]._option_string_actions
    assert list(_options_without_help(parser, ["dustonline"])) == []


def test_generate_longtail_profile_writes_a_fixed_setting(tmp_path):
    """generate --profile longtail --setting FILE:NAME writes exactly that setting's stream;
    a long-tail knob without the profile is refused."""
    from dustonline.evaluation import longtail

    ev, tr = tmp_path / "ev.jsonl", tmp_path / "tr.jsonl"
    run("generate", ev, tr, "--profile", "longtail", "--setting", "configs/eval/tuning.yaml:t6-tiny-sites")
    want_ev, want_tr = tmp_path / "want.jsonl", tmp_path / "want_tr.jsonl"
    longtail.write_stream(longtail.load_settings("configs/eval/tuning.yaml")["t6-tiny-sites"], want_ev, want_tr)
    assert ev.read_bytes() == want_ev.read_bytes() and tr.read_bytes() == want_tr.read_bytes()
    p = run("generate", ev, tr, "--median-pages", "5", check=False)
    assert p.returncode == 2 and "--median-pages needs --profile longtail" in p.stderr


def test_explain_and_show_name_parameter_rules(tmp_path):
    from dustonline.rules import Rule, write_rules

    path = tmp_path / "rules.jsonl"
    write_rules(
        path,
        [
            Rule(id="p-1", hosts=["a.com"], context="", transformation="", drop_param="sid", support=4),
            Rule(id="r-1", hosts=["a.com"], context=r"^http://a\.com/(\d+)$", transformation="https://a.com/$1"),
        ],
    )
    out = run("explain", "--rules", path, "http://a.com/7?sid=9").stdout
    assert "rule       r-1" in out and "first      drops query parameters sid" in out
    assert out.rstrip().endswith("key        https://a.com/7")
    out = run("explain", "--rules", path, "http://a.com/x?sid=9&b=1").stdout
    assert "rule       p-1" in out and "drops      query parameter 'sid'" in out
    assert out.rstrip().endswith("key        http://a.com/x?b=1")
    assert "drop query parameter 'sid'" in run("rules", "show", path).stdout


def test_eval_names_the_missing_extra_before_it_runs(monkeypatch, capsys):
    """With only the demo's install, eval used to run for minutes and end in a numpy
    traceback (DustBuster) or ask for matplotlib (--report) at the end."""
    import importlib.util

    from dustonline.cli import main, sample_paths

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("numpy", "matplotlib") else real(name, *a)
    )
    events, truth = sample_paths()
    rc = main(["eval", str(events), "--truth", str(truth), "--learner", "online,dustbuster", "--report", "r"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "numpy (for dustbuster)" in err and "matplotlib (for --report)" in err and "dustonline[eval]" in err


def test_learn_that_finds_no_rule_says_why(tmp_path):
    events = tmp_path / "small.jsonl"
    rows = [{"url": f"http://a.com/p/{i}", "ts": 1700000000 + i, "digest": f"sha1:D{i % 5}"} for i in range(10)]
    events.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    p = run("learn", events, "--rules-out", tmp_path / "r.jsonl", "--quiet", "--dead-letter", tmp_path / "d.jsonl")
    assert "no rules: 5 URLs shared their content with another URL" in p.stderr
    assert "learning.confidence" in p.stderr
