"""RuleSet.canonicalize: deterministic, total, idempotent where the rule set says so."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dustonline import FetchEvent, Rule, RuleSet, learn
from dustonline.config import config_from_dict
from dustonline.rules.urls import light_normalize

WWW = Rule(
    id="r-www",
    hosts=["a.com", "www.a.com"],
    support=50,
    context=r"^([^/?=&#;:.]+)\:\/\/(?:www\.)?([^/?=&#;:.]+)\.([^/?=&#;:.]+)\/([^/?=&#;:.]+)\/([^/?=&#;:.]+)$",
    transformation="$1://$2.$3/$4/$5",
)
SID = Rule(
    id="r-sid",
    hosts=["a.com"],
    support=40,
    context=r"^([^/?=&#;:.]+)\:\/\/([^/?=&#;:.]+)\.([^/?=&#;:.]+)\/([^/?=&#;:.]+)\?([^/?=&#;:.]+)\=([^/?=&#;:.]+?)(?:\&sid\=[0-9a-zA-Z]+)?$",
    transformation="$1://$2.$3/$4?$5=$6",
)
RULES = [WWW, SID]

url_parts = st.text(alphabet="abcXYZ019/._-?=&%#:;~ ", max_size=30)
any_text = st.text(max_size=200)


@given(any_text)
@settings(max_examples=500)
def test_total_on_arbitrary_text(text):
    rs = RuleSet(RULES)
    out = rs.canonicalize(text)
    assert isinstance(out, str)
    rule, key = rs.explain(text)
    assert key == out


@given(
    st.sampled_from(["http://", "https://", "HTTP://", "http://www."]),
    st.sampled_from(["a.com", "A.com", "b.org"]),
    url_parts,
)
@settings(max_examples=500)
def test_deterministic_and_order_independent(scheme, host, rest):
    url = scheme + host + "/" + rest
    a, b = RuleSet(RULES), RuleSet(list(reversed(RULES)))
    assert a.canonicalize(url) == a.canonicalize(url) == b.canonicalize(url)


@given(
    st.sampled_from(["http://", "https://", "HTTP://"]),
    st.text(alphabet="abcXYZ019.-:[]@", min_size=1, max_size=20),
    url_parts,
)
@settings(max_examples=500)
def test_light_normalization_is_idempotent(scheme, auth, rest):
    url = scheme + auth + "/" + rest
    once = light_normalize(url)
    assert light_normalize(once) == once


@given(
    st.sampled_from(["http://www.a.com", "http://a.com", "http://A.com", "http://www.a.com:80"]),
    st.text(alphabet="abc019-", min_size=1, max_size=8),
    st.text(alphabet="abc019", min_size=1, max_size=8),
    st.sampled_from(["", "&sid=9f3a", "&sid=ZZ1"]),
)
@settings(max_examples=500)
def test_idempotent_where_the_same_rule_decides_the_key(base, seg, val, tail):
    rs = RuleSet(RULES)
    for url in (f"{base}/{seg}/{val}", f"{base}/{seg}?id={val}{tail}"):
        rule, key = rs.explain(url)
        again_rule, again = rs.explain(key)
        if rule is None or (again_rule is not None and again_rule.id == rule.id):
            assert again == key, (url, key, again)


def test_rule_output_is_a_fixed_point_for_learned_rules():
    """Rules learned from a www + session-id site: every key is a fixed point."""
    rnd = random.Random(3)
    events, t = [], 1.7e9
    for i in range(60):
        d = f"sha1:PAGE{i}"
        for u in (
            f"http://www.s.com/news/{i}",
            f"http://s.com/news/{i}",
            f"http://s.com/item?id={i}",
            f"http://s.com/item?id={i}&sid={rnd.getrandbits(40):x}",
        ):
            t += 1
            events.append(FetchEvent(url=u, ts=t, digest=d + u.split("/")[3][:4]))
    cfg = config_from_dict({"learning": {"min_freq": 5, "min_supp": 5}})
    rs = RuleSet(learn(events, cfg))
    assert len(rs) >= 2
    for ev in events:
        key = rs.canonicalize(ev.url)
        assert rs.canonicalize(key) == key


def test_rules_apply_only_to_their_hosts_and_first_by_support():
    rs = RuleSet(RULES)
    assert rs.canonicalize("http://www.a.com/news/7") == "http://a.com/news/7"
    assert rs.canonicalize("http://www.b.com/news/7") == "http://www.b.com/news/7"  # host not taught
    assert rs.canonicalize("http://a.com/item?id=7&sid=9f3a") == "http://a.com/item?id=7"
    both = Rule(id="r-0", hosts=["a.com"], support=10, context=r"^http://a\.com/(.*)$", transformation="http://a.com/X")
    assert RuleSet(RULES + [both]).canonicalize("http://a.com/news/7") == "http://a.com/news/7"  # support 50 first
    assert [r.id for r in RuleSet(RULES + [both]).rules()] == ["r-www", "r-sid", "r-0"]


def test_upsert_respects_versions_and_retirement():
    rs = RuleSet([WWW])
    stale = Rule(**{**{f: getattr(WWW, f) for f in WWW.__struct_fields__}, "version": 1, "status": "retired"})
    assert not rs.upsert(stale)  # same version: ignored
    newer = Rule(**{**{f: getattr(WWW, f) for f in WWW.__struct_fields__}, "version": 2, "status": "retired"})
    assert rs.upsert(newer) and len(rs) == 0
    assert rs.canonicalize("http://www.a.com/news/7") == "http://www.a.com/news/7"


def test_context_must_match_the_whole_url_with_backtracking():
    """Full-match semantics (Java's matches(), RE2's FullMatch): an alternative that stops
    short is backtracked into, and a context that only matches a prefix does not apply."""
    alt = Rule(
        id="r-alt",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/(?:p|pa)ge\/([0-9]+)",
        transformation="http://a.com/page/$1",
    )
    rs = RuleSet([alt])
    assert rs.explain("http://a.com/page/7")[0] is alt
    assert rs.explain("http://a.com/pge/7")[0] is alt
    assert rs.explain("http://a.com/page/7/more")[0] is None
    ext = Rule(
        id="r-ext",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/([0-9]+)(?:\.htm|\.html)",
        transformation="http://a.com/$1",
    )
    assert RuleSet([ext]).canonicalize("http://a.com/7.html") == "http://a.com/7"
    pct = Rule(
        id="r-pct",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/x\%20([0-9]+)(y)?",
        transformation="http://a.com/%$1$2$$",
    )
    assert RuleSet([pct]).canonicalize("http://a.com/x%2012") == "http://a.com/%12$"
