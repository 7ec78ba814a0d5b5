"""Safety properties of learned rules: keys stay well-formed URLs."""

import pytest

from dustonline.learner.candidates import CandidateBook
from dustonline.learner.counts import ValidationCounts
from dustonline.learner.hosturls import HostURLs
from dustonline.learner.induce import render
from dustonline.rules import CompiledRule, Rule
from dustonline.state import memory_store


def test_a_dropped_optional_path_segment_takes_its_slash_along():
    parts = [("L", "http://a.com/s/"), ("O", ("latest", "1.4.2")), ("L", "/fonts/"), ("C", False)]
    context, transformation = render(parts, 5)
    rule = CompiledRule(Rule(id="r", hosts=["a.com"], context=context, transformation=transformation))
    keys = {rule.apply(f"http://a.com/s/{v}fonts/x") for v in ("latest/", "1.4.2/", "")}
    assert keys == {"http://a.com/s/fonts/x"}
    assert rule.apply("http://a.com/s/18/fonts/x") is None  # a version never seen


def _counted(context: str, transformation: str, hosts: list[str]):
    """A rule installed in validation counts that count anything (min_freq and min_supp
    1): (its record, a function counting one URL of cluster c1 in (+1) or out (-1), the
    counts)."""
    store = memory_store()
    book = CandidateBook(store)
    counts = ValidationCounts(store, book, HostURLs(store.table("url"), 1000), min_freq=1, min_supp=1, fpr_max=0.0)
    rec = book.new("r", group="g", context=context, transformation=transformation, hosts=hosts, freq=5)
    book.install(rec)
    return rec, lambda url, delta=+1: counts.count_one(book["r"], url, "c1", delta), counts


def test_a_rule_giving_a_key_with_an_empty_segment_is_never_valid():
    rec, count, counts = _counted(r"^http://a\.com/(?:v1|v2)/(.*)$", "http://a.com//$1", ["a.com"])
    for url in ("http://a.com/v1/x", "http://a.com/v2/x"):
        count(url)
    assert rec.nsupp == 1 and rec.nci == 1 and rec.malformed == 2
    assert not counts.valid(rec)
    for url in ("http://a.com/v1/x", "http://a.com/v2/x"):
        count(url, -1)
    assert rec.malformed == 0


def test_a_rule_giving_a_key_with_an_empty_host_label_is_never_valid():
    """Numbered image hosts (i1., img3.) whose label became a class were written as
    nothing: http://.a.com/x is no URL a crawler can fetch."""
    rec, count, counts = _counted(r"^http://(?:[0-9a-z]+)\.a\.com/(.*)$", "http://.a.com/$1", ["i1.a.com", "i3.a.com"])
    for url in ("http://i1.a.com/x.png", "http://i3.a.com/x.png"):
        count(url)
    assert rec.nsupp == 1 and rec.nci == 1 and rec.malformed == 2
    assert not counts.valid(rec)


def test_a_rule_that_would_rewrite_its_own_key_again_is_never_valid():
    """A lazy capture before an optional class of two-word slugs drops two words per
    pass: /t/7-a-b-c-d/ -> /t/7-a-b/ -> /t/7/. Crawlers canonicalize keys again (a key
    is also a URL they may fetch), so a key must be a fixed point of the rule."""
    rec, count, counts = _counted(
        r"^http://a\.com/(?:forum/)?t/([^/?=&#;:.]+?)(?:(?:\-[a-zA-Z]+\-[a-zA-Z]+))?/$",
        "http://a.com/t/$1/",
        ["a.com"],
    )
    for url in ("http://a.com/forum/t/7-a-b/", "http://a.com/t/7-c-d/"):
        count(url)
    assert rec.nsupp == 1 and rec.nci == 1 and rec.malformed == 0  # keys /t/7/: fixed points
    count("http://a.com/t/7-a-b-c-d/")  # key /t/7-a-b/, then /t/7/
    assert rec.malformed == 1 and not counts.valid(rec)


@pytest.mark.parametrize(
    "key, url, bad",
    [
        ("http://.a.com/x", "http://i1.a.com/x", True),
        ("http://a..com/x", "http://a.b.com/x", True),
        ("http:///x", "http://a.com/x", True),
        ("http://a.com/x/../y", "http://a.com/x/y", False),  # ".." in the path, not the host
        ("http://a.com/x..y", "http://a.com/xy", False),
        ("http://u@a.com:8080/x", "http://a.com/x", False),
        ("http://a.com/x", "http://a.com/x", False),
    ],
)
def test_malformed_keys(key, url, bad):
    from dustonline.learner.counts import _malformed

    assert _malformed(key, url) is bad


def _rule(rid, status, version):
    return Rule(id=rid, hosts=["a.com"], context="^x$", transformation="y", status=status, version=version)


def test_a_step_publishes_each_rule_once_and_never_an_activation_it_takes_back():
    from dustonline.learner.changes import RuleChanges

    ch = RuleChanges()
    ch.add(_rule("flap", "active", 1), fresh=True)
    ch.add(_rule("kept", "active", 4), fresh=True)
    ch.add(_rule("old", "retired", 7))  # active before the step: its retirement goes out
    ch.add(_rule("flap", "retired", 2))
    ch.add(_rule("kept", "active", 5))
    assert [(r.id, r.version) for r in ch.take()] == [("old", 7), ("kept", 5)]
    assert ch.take() == []


def test_no_rule_flaps_within_a_step_on_a_real_crawl(real_data):
    from dustonline import OnlineLearner
    from dustonline.events.readers import Rejected, read_events

    learner = OnlineLearner()
    for ev in read_events([str(real_data / "ukwa-bbc-crawl.log")]):
        if isinstance(ev, Rejected):
            continue
        changes = learner.learn_one(ev)
        ids = [r.id for r in changes]
        assert len(ids) == len(set(ids)), ids


def test_a_key_is_written_as_one_url_of_the_cluster_has_it():
    """/news.php?id=15379 ~ /news/15379: written part by part, the key was /news=15379 (the
    optional part dropped, the other variant kept), a URL neither form is."""
    from dustonline.learner.align import linear_alignment
    from dustonline.learner.induce import parts_of

    for urls in (
        ["http://www.a.com/news.php?id=15379", "http://www.a.com/news/15379"],
        ["http://www.a.com/news.php?id=15379", "http://www.a.com/news.php?id=15379", "http://www.a.com/news/15379"],
    ):
        context, transformation = render(parts_of(linear_alignment(urls)), 5)
        rule = CompiledRule(Rule(id="r", hosts=["www.a.com"], context=context, transformation=transformation))
        keys = {rule.apply(u) for u in urls}
        assert keys == {"http://www.a.com/news/15379"}, (urls, keys)


@pytest.mark.slow
def test_no_key_gets_an_empty_host_label_on_the_tiny_sites_tuning_stream():
    """t6-tiny-sites is where a rule of four sites' numbered image hosts wrote their label
    as nothing (50 URLs keyed http://.host/...): every key the final rules give has a
    well-formed host."""
    from pathlib import Path
    from urllib.parse import urlsplit

    from dustonline import OnlineLearner, RuleSet
    from dustonline.evaluation.longtail import generate_labeled, load_settings

    cfg = load_settings(Path(__file__).resolve().parents[1] / "configs/eval/tuning.yaml")["t6-tiny-sites"]
    urls = []
    learner = OnlineLearner()
    for ev, _page, _family in generate_labeled(cfg):
        learner.learn_one(ev)
        urls.append(ev.url)
    learner.flush()
    rules = RuleSet(learner.rules())
    assert len(rules) > 1000
    bad = [(u, k) for u in urls if (k := rules.canonicalize(u)) != u and _empty_label(urlsplit(k).hostname)]
    assert bad == []


def _empty_label(host: str | None) -> bool:
    return not host or host.startswith(".") or ".." in host
