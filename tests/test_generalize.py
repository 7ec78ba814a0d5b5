"""Cross-cluster generalization: shapes, slots freed past Card_set, state round trips."""

import msgspec
import pytest

from dustonline.learner.align import linear_alignment
from dustonline.learner.generalize import Group, contribution
from dustonline.learner.induce import parts_of
from dustonline.learner.records import Contribution


def contrib(urls, host="a.com", generalize=True):
    return contribution(parts_of(linear_alignment(urls)), [host], generalize)


def test_session_values_merge_into_one_candidate_once_past_card_set():
    g = None
    for i in range(7):
        c = contrib([f"http://a.com/x?id={i}", f"http://a.com/x?id={i}&sid=s{i}q{i * 7}z"])
        g = g or Group(c.shape)
        g.add(c, card_set=5)
        cands = g.candidates(min_freq=1, card_set=5)
        assert len(cands) == 1
        if i < 5:
            assert "sid" in cands[0].context and f"q{i * 7}" in cands[0].context  # alternation of seen values
    assert cands[0].context.endswith(r"(?:\&sid\=[0-9a-zA-Z]+)?$")  # 6+ values: a class, dropped
    assert cands[0].freq == 7


def test_variant_slot_with_few_values_keeps_clusters_apart():
    """http~https clusters and IRS~irs clusters share a shape but must not share a constant."""
    a = contrib(["http://a.com/p/1", "https://a.com/p/1"])
    b = contrib(["http://a.com/p/2", "https://a.com/p/2"])
    assert a.shape == b.shape and a.slots == b.slots
    g = Group(a.shape)
    g.add(a, 5)
    g.add(b, 5)
    (cand,) = g.candidates(1, 5)
    assert "(?:https|http)" in cand.context and cand.freq == 2


def test_state_round_trips_through_the_store_encoding():
    """Shapes and contributions come back from msgpack as lists, or half-converted."""
    c = contrib(["http://www.a.com/n/1", "http://a.com/n/1"])
    g = Group(c.shape)
    g.add(c, 5)
    want = g.candidates(1, 5)
    raw = msgspec.msgpack.decode(msgspec.msgpack.encode({"shape": c.shape, "st": g.to_state()}))
    assert Group(raw["shape"], raw["st"]).candidates(1, 5) == want
    half = Contribution(tuple(list(item) for item in c.shape), c.slots, c.hosts)  # tuple of lists
    assert Group(half.shape, g.to_state()).candidates(1, 5) == want
    g2 = Group(half.shape)
    g2.add(half, 5)
    g2.remove(half)
    g2.add(c, 5)
    assert g2.candidates(1, 5) == want


def test_rev_changes_only_when_a_rendered_rule_can_change():
    c1 = contrib(["http://www.a.com/n/1", "http://a.com/n/1"])
    c2 = contrib(["http://www.a.com/n/2", "http://a.com/n/2"])
    g = Group(c1.shape)
    g.add(c1, 5)
    rev = g.to_state()["rev"]
    g.add(c2, 5)  # same hosts, same values: only freq changes
    assert g.to_state()["rev"] == rev
    g.add(contrib(["http://www.a.com/n/3", "http://a.com/n/3"], host="www.a.com"), 5)
    assert g.to_state()["rev"] > rev  # a new host changes the rule's hosts


def test_thesis_mode_keeps_literal_values_in_the_shape():
    a = contrib(["http://a.com/x?id=1", "http://a.com/x?id=1&sid=q1"], generalize=False)
    b = contrib(["http://a.com/x?id=2", "http://a.com/x?id=2&sid=q2"], generalize=False)
    assert a.shape != b.shape  # identical (context, transformation) only, as in Alg. 5


def _rule(g):
    (cand,) = g.candidates(min_freq=1, card_set=5)
    import re

    return re.compile(cand.context)


def test_one_optional_value_per_site_stays_literal_across_many_sites():
    """Eight sites each with its own mirror directory: the union passes Card_set, but no
    site shows more than one value, so the rule drops only those directories; as a class it
    would also drop /fr/ (a different page) on the same sites."""
    g = None
    for i in range(8):
        host = f"s{i}.com"
        c = contrib([f"http://{host}/news/{i}", f"http://{host}/mirror{i}/news/{i}"], host=host)
        g = g or Group(c.shape)
        g.add(c, card_set=5)
    rx = _rule(g)
    assert rx.fullmatch("http://s3.com/mirror3/news/77") and rx.fullmatch("http://s3.com/news/77")
    assert not rx.fullmatch("http://s3.com/fr/news/77")


def test_a_session_segment_class_keeps_its_punctuation():
    """ASP.NET cookieless sessions /(S(id))/: many values on one site make a class, which
    must still need the "(S(...))" around the id, so /fr/ stays a different page."""
    g = None
    for i in range(8):
        sid = f"{i:04x}ab{i * 7919:08x}"
        c = contrib([f"http://a.com/news/{i}", f"http://a.com/(S({sid}))/news/{i}"])
        g = g or Group(c.shape)
        g.add(c, card_set=5)
    rx = _rule(g)
    assert rx.fullmatch("http://a.com/(S(00ffab99))/news/5") and rx.fullmatch("http://a.com/news/5")
    assert not rx.fullmatch("http://a.com/fr/news/5")


def test_a_session_segment_seen_beside_a_mirror_directory_keeps_its_punctuation():
    """The same site also reaches a page through /v1/: the values of that segment are of
    two kinds. The session ids make the class, /v1/ stays a literal beside it, and /fr/
    (another page) matches neither; a plain class of both kinds lost such pages on the
    committed 100-site stream."""
    g = None
    for i in range(8):
        sid = f"{i:04x}ab{i * 7919:08x}"
        urls = [f"http://a.com/news/{i}", f"http://a.com/(S({sid}))/news/{i}"]
        if i % 3 == 0:
            urls.append(f"http://a.com/v1/news/{i}")
        c = contrib(urls)
        g = g or Group(c.shape)
        g.add(c, card_set=5)
    rx = _rule(g)
    for ok in ("http://a.com/(S(00ffab99))/news/5", "http://a.com/v1/news/5", "http://a.com/news/5"):
        assert rx.fullmatch(ok), (rx.pattern, ok)
    assert not rx.fullmatch("http://a.com/fr/news/5"), rx.pattern


def test_a_segment_of_several_kinds_none_many_stays_literal():
    from dustonline.learner.generalize import fine_class

    vals = ["(S(ab12))", "(S(cd34))", "v1", "v2", "print", "mirror-2"]
    assert fine_class(vals, 5) == (None, sorted(vals))  # no kind past card_set
    many = [f"(S({i:02d}ab))" for i in range(6)]
    assert fine_class(many + ["v1"], 5) == (("(", "*", "(", "*", ")", ")"), ["v1"])
    assert fine_class([f"mirror{i}" for i in range(6)] + ["(S(ab))"], 5) == (None, [])  # many words
    assert fine_class(many, 5) == (("(", "*", "(", "*", ")", ")"), [])


def test_variant_tokens_between_delimiters_are_one_part_of_the_observed_values():
    """Version directories 2.83.4 ~ 3.8.0 (seen on a real crawl): as three variant parts the
    rule accepted 2.8.0 and 3.83.4 too, combinations never seen as duplicates."""
    from dustonline.learner.induce import render
    from dustonline.rules import CompiledRule, Rule

    parts = parts_of(linear_alignment(["http://s.com/fw/2.83.4/orb.css", "http://s.com/fw/3.8.0/orb.css"]))
    variants = [p for p in parts if p[0] == "V"]
    assert len(variants) == 1 and variants[0][1] == ("2.83.4", "3.8.0")
    context, transformation = render(parts, 5)
    rule = CompiledRule(Rule(id="r", hosts=["s.com"], context=context, transformation=transformation))
    assert rule.apply("http://s.com/fw/3.8.0/orb.css") == rule.apply("http://s.com/fw/2.83.4/orb.css")
    assert rule.apply("http://s.com/fw/2.8.0/orb.css") is None
    assert rule.apply("http://s.com/fw/3.83.4/orb.css") is None


@pytest.mark.pure_python
def test_the_render_cache_never_serves_a_stale_rule(monkeypatch):
    """Rendering is cached by the group's revision: every change a rendered rule depends
    on must bump it. A new value of a fixed segment in a free optional slot did not, so an
    uninterrupted run kept a rule's old context where a run resumed from a checkpoint
    (empty cache) rendered the new one: their rules differed."""
    from dustonline.config import Config
    from dustonline.evaluation.generator import GenConfig, generate
    from dustonline.learner.online import OnlineLearner

    original = Group.candidates
    checked = []

    def both(self, min_freq, card_set, cache=None, extra=None, view=None):
        got = original(self, min_freq, card_set, cache, extra, view)
        assert got == original(self, min_freq, card_set, None, extra, view)
        checked.append(len(got))
        return got

    monkeypatch.setattr(Group, "candidates", both)
    learner = OnlineLearner(Config().check())
    for ev, _ in generate(GenConfig(seed=11, sites=12, pages=8000)):
        learner.learn_one(ev)
    learner.flush()
    assert sum(checked) > 100


def test_a_long_session_token_is_one_varying_set_not_noise():
    """Tokenization splits a hex session id into digit and letter runs: counted one column
    at a time, ``;jsessionid=06381D3C...`` outweighed the page's path and the cluster was
    dropped as noise (0% of Java session paths on the long-tail tuning stream). Counted as
    token sets (a delimiter, or a run of words between two), it is a minority; URLs that
    share nothing but the host still are noise."""
    from dustonline.learner.induce import render
    from dustonline.rules import CompiledRule, Rule

    page = "https://www.example.org/jobs/36426.html"
    parts = parts_of(linear_alignment([page, page + ";jsessionid=06381D3C67F85A834360A6C05F1E36BA.worker1"]), 0.5)
    assert parts is not None
    context, transformation = render(parts, 5)
    rule = CompiledRule(Rule(id="r", hosts=["www.example.org"], context=context, transformation=transformation))
    assert rule.apply(page + ";jsessionid=06381D3C67F85A834360A6C05F1E36BA.worker1") == rule.apply(page)
    unrelated = ["https://www.example.org/a/b/c.html", "https://www.example.org/x1y2/zz9q.php?k=v&w=3"]
    assert parts_of(linear_alignment(unrelated), 0.5) is None


def _pooled(other):
    """Another partition's ``view`` as Induction.pool hands it to ``candidates``."""
    from dustonline.learner.induction import pooled_views

    (view,) = pooled_views({}, {"s\x00" + name: v for name, v in other.view().items()}).values()
    return {**view, "rev": 1}


def test_a_slot_freed_on_another_partition_renders_there_as_one_learner_renders_it():
    """Site a.com shows many cookieless session ids (and /v1/ beside them), b.com two: one
    learner of both frees the segment into a class that keeps the punctuation. Split over
    two partitions, b.com's group alone never frees it; it took a.com's values, none once
    a.com freed them, and kept an alternation of its own two ids, so a third id on b.com
    was another page. Pooled, both partitions render the one learner's rule."""

    def sessions(host, n, seed):
        out = []
        for i in range(n):
            sid = f"{i + seed:04x}ab{(i + seed) * 7919:08x}"
            urls = [f"http://{host}/news/{i}", f"http://{host}/(S({sid}))/news/{i}"]
            if host == "a.com" and i % 3 == 0:
                urls.append(f"http://{host}/v1/news/{i}")
            out.append(contrib(urls, host=host))
        return out

    a_side, b_side = sessions("a.com", 8, 0), sessions("b.com", 2, 100)
    one = Group(a_side[0].shape)
    for c in a_side + b_side:
        one.add(c, card_set=5)
    pa, pb = Group(a_side[0].shape), Group(b_side[0].shape)
    for c in a_side:
        pa.add(c, card_set=5)
    for c in b_side:
        pb.add(c, card_set=5)
    (want,) = one.candidates(min_freq=1, card_set=5)
    (got_a,) = pa.candidates(min_freq=1, card_set=5, view=_pooled(pb))
    (got_b,) = pb.candidates(min_freq=1, card_set=5, view=_pooled(pa))
    assert got_a.context == got_b.context == want.context, (want.context, got_a.context, got_b.context)
    import re

    rx = re.compile(got_b.context)
    assert rx.fullmatch("http://b.com/(S(0777ab00ff00))/news/9")  # an id b.com had not shown
    assert rx.fullmatch("http://b.com/v1/news/9") and not rx.fullmatch("http://b.com/fr/news/9")


def test_a_freed_segment_renders_alike_on_every_partition():
    """a.com's many session ids free the segment on its partition; b.com, elsewhere,
    also reaches a page through /v2/, a word beside the ids. Both partitions render one
    rule, with /v2/ a literal beside the class: one rule id, one context."""
    a_side, b_side = [], []
    for i in range(8):
        sid = f"{i:04x}ab{i * 7919:08x}"
        a_side.append(contrib([f"http://a.com/news/{i}", f"http://a.com/(S({sid}))/news/{i}"], host="a.com"))
    b_side.append(contrib(["http://b.com/news/1", "http://b.com/(S(0abcab00ff0a))/news/1"], host="b.com"))
    b_side.append(contrib(["http://b.com/news/2", "http://b.com/v2/news/2"], host="b.com"))
    pa, pb = Group(a_side[0].shape), Group(a_side[0].shape)
    for c in a_side:
        pa.add(c, card_set=5)
    for c in b_side:
        pb.add(c, card_set=5)
    (got_a,) = pa.candidates(min_freq=1, card_set=5, view=_pooled(pb))
    (got_b,) = pb.candidates(min_freq=1, card_set=5, view=_pooled(pa))
    assert got_a.context == got_b.context, (got_a.context, got_b.context)
    import re

    rx = re.compile(got_a.context)
    assert rx.fullmatch("http://b.com/v2/news/9") and rx.fullmatch("http://a.com/(S(0777ab00ff00))/news/9")
    assert not rx.fullmatch("http://b.com/fr/news/9")
