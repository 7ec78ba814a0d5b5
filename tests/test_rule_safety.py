"""Rules are a trust boundary (issue 17): a rule from a file or the rules topic must not
hang the crawler, nor move its URLs to another site."""

import re

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timing import within

from dustonline.rules.book import RuleBook
from dustonline.rules.pattern import PatternError, check
from dustonline.rules.ruleset import Rule, RuleError, RuleSet, encode_rule, write_rules

CATASTROPHIC = [
    r"^http://a\.com/(a+)+$",
    r"^http://a\.com/(a|a)*b$",
    r"^http://a\.com/(a|aa)+$",
    r"^http://a\.com/(x+x+)+y$",
    r"^http://a\.com/([0-9]+)([0-9a-z]+)$",
    r"^http://a\.com/(.*a){20}$",
    r"^http://a\.com/(a*)*$",
]
NOT_PORTABLE = [r"(a)\1", r"a(?=b)", r"a(?!b)", r"(?<=a)b", r"(?P<n>a)", r"(?i)a", r"a\Z", r"\Aa", r"a++", r"(?>a)"]
NOT_PORTABLE += [r"a[\d-z]"]  # Python refuses the range, Java reads it


def rule(context, transformation="http://a.com/$1", hosts=("a.com",), rid="r-x", version=1):
    return Rule(id=rid, hosts=list(hosts), context=context, transformation=transformation, version=version)


@pytest.mark.parametrize("context", CATASTROPHIC + NOT_PORTABLE)
def test_catastrophic_and_unportable_contexts_are_refused_in_milliseconds(context):
    with within(0.05), pytest.raises(RuleError, match="r-x: context refused") as e:
        rule(context).compile(check=True)
    assert e.value.rule_id == "r-x" and e.value.reason == "unsafe-context"


def test_the_issues_hanging_rule_no_longer_loads_and_good_rules_still_apply(tmp_path):
    good = rule(r"^http://a\.com/x/([0-9]+)$", "http://a.com/$1", rid="r-good")
    path = tmp_path / "rules.jsonl"
    write_rules(path, [rule(CATASTROPHIC[0], "http://a.com/", rid="r-bad"), good])
    rs = RuleSet.load(path)
    assert "r-good" in rs and "r-bad" not in rs and rs.refused == {"unsafe-context": 1}
    assert rs.refused_rules[0][0] == "r-bad" and f"{path}:1:" in rs.refused_rules[0][1]
    with within(0.05):
        assert rs.canonicalize("http://a.com/" + "a" * 26 + "!") == "http://a.com/" + "a" * 26 + "!"
    assert rs.canonicalize("http://a.com/x/7") == "http://a.com/7"


def test_a_rule_that_sends_urls_to_another_site_is_refused():
    evil = rule(r"^(.*)$", "http://evil.example/x")
    assert len(RuleSet([evil])) == 0
    with pytest.raises(RuleError, match="evil.example") as e:
        evil.compile(check=True)
    assert e.value.reason == "foreign-host"
    # a host alias within the rule's sites, as the learner finds them, stays admitted
    alias = rule(r"^http://ichef\-1\.bbci\.co\.uk/(.*)$", "http://ichef.bbci.co.uk/$1", hosts=["ichef-1.bbci.co.uk"])
    assert RuleSet([alias]).canonicalize("http://ichef-1.bbci.co.uk/a") == "http://ichef.bbci.co.uk/a"


def test_rulebook_counts_refused_records_by_reason_and_keeps_the_version_it_had():
    book = RuleBook()
    good = rule(r"^http://a\.com/x/([0-9]+)$", rid="r-1")
    assert book.apply(b"r-1", encode_rule(good))
    for i, ctx in enumerate(CATASTROPHIC[:3], 2):
        with pytest.raises(RuleError):
            book.apply(b"r-1", encode_rule(rule(ctx, rid="r-1", version=i)))
    assert book.refused == {"unsafe-context": 3}
    assert book.ruleset().canonicalize("http://a.com/x/5") == "http://a.com/5"


def test_every_context_the_learner_writes_on_the_sample_is_admitted(tmp_path):
    from dustonline.config import Config
    from dustonline.evaluation.prequential import load_stream
    from dustonline.learner.online import OnlineLearner

    lr = OnlineLearner(Config().check())
    events = load_stream(["dustonline/data/sample-stream.jsonl.gz"], Config().check()).events
    lr.learn_many(events[:8000])
    rules = [r for r in lr.rules() if r.context]
    assert rules
    for r in rules:
        r.compile(check=True)


# ------------------------------------------------------------ generated patterns
_atoms = st.sampled_from(["a", "b", "/", r"\.", "[a-z]", "[^/]", "[0-9]", ".", "[ab]"])


def _pattern(depth=2, atoms=_atoms):
    leaf = st.builds(lambda a, q: a + q, atoms, st.sampled_from(["", "", "?", "*", "+", "+?", "{1,3}"]))
    if depth == 0:
        return leaf
    inner = st.lists(_pattern(depth - 1, atoms), min_size=1, max_size=3).map("".join)
    group = st.builds(
        lambda bs, cap, q: ("(" if cap else "(?:") + "|".join(bs) + ")" + q,
        st.lists(inner, min_size=1, max_size=3),
        st.booleans(),
        st.sampled_from(["", "?", "*", "+"]),
    )
    return st.one_of(leaf, group)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_pattern(), min_size=1, max_size=5).map("".join), st.sampled_from("ab/.0x"))
def test_admitted_generated_patterns_match_the_longest_urls_fast(body, tail):
    """The linear-time argument of rules/pattern.py, tried: whatever the generator makes
    and the checker admits matches adversarial URLs of input.max_url_length quickly."""
    ctx = r"^http://a\.com/" + body + "$"
    try:
        check(ctx)
    except PatternError:
        return
    rx = re.compile(ctx, re.ASCII)
    for unit in ("a", "ab", "a/", "0", "a.", "b"):
        url = "http://a.com/" + unit * ((2048 - 14) // len(unit)) + tail
        with within(0.05, (ctx, unit)):
            rx.fullmatch(url)


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=60),
    st.text(max_size=40),
    st.lists(st.text(max_size=12), max_size=3),
    st.integers(-3, 5),
)
def test_no_rule_record_makes_the_rulebook_raise_anything_but_a_rule_error(ctx, trans, hosts, version):
    book = RuleBook()
    value = msgspec.json.encode(
        {"id": "r-f", "hosts": hosts, "context": ctx, "transformation": trans, "version": version}
    )
    try:
        book.apply(b"r-f", value)
    except RuleError:
        assert sum(book.refused.values()) == 1
    rs = book.ruleset()
    for h in hosts[:1] or ["a.com"]:
        assert isinstance(rs.canonicalize(f"http://{h}/{ctx[:20]}"), str)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_canonicalize_never_raises(url):
    rs = RuleSet([rule(r"^http://a\.com/x/([0-9]+)$"), rule(r"^https?://a\.com/(.*?)\?ref=[a-z]+$", "http://a.com/$1")])
    assert isinstance(rs.canonicalize(url), str)
    assert isinstance(rs.canonicalize("http://a.com/" + url), str)


_re2_atoms = st.sampled_from(["a", "b", "/", r"\.", "[a-z]", "[^/]", ".", r"\s", r"\S", r"\w", r"[^a\s]", "\u00e9"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_pattern(atoms=_re2_atoms), min_size=1, max_size=5).map("".join),
    st.lists(st.text(alphabet="ab/.0x\x0b\n\u00e9", max_size=16), min_size=1, max_size=8),
)
def test_re2_takes_the_groups_python_takes_on_generated_patterns(body, tails):
    """engine="re2" must not change a key: whatever admitted context the generator makes
    (alternatives, lazy and counted repeats, optional groups), RE2 matches the same URLs
    and picks the same text for every group as Python's backtracking re."""
    ctx = r"^http://a\.com/" + body + "$"
    try:
        groups = check(ctx).groups
    except PatternError:
        return
    r = rule(ctx, "http://a.com/" + "|".join(f"${i}" for i in range(1, groups + 1)))
    py, re2 = r.compile(check=True), r.compile(check=True, engine="re2")
    for tail in tails:
        url = "http://a.com/" + tail
        assert re2.apply(url) == py.apply(url), (ctx, url)
