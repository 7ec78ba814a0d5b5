"""Host rules (``Rule.canonical_host``): a host's URLs are read on another host of its
site before anything else applies, and then that host's rules hold (docs/formats.md,
Order). The learner's side is in tests/test_params.py."""

import pytest

from dustonline.rules.merge import merge
from dustonline.rules.params import to_host
from dustonline.rules.ruleset import RETIRED, Rule, RuleSet


def host_rule(rid="h", hosts=("www.x.com",), target="x.com", **kw):
    return Rule(id=rid, hosts=list(hosts), context="", transformation="", canonical_host=target, support=3, **kw)


RULES = [
    host_rule(),
    Rule(id="p", hosts=["x.com"], context="", transformation="", drop_param="sid", support=3),
    Rule(id="s", hosts=["x.com"], context="", transformation="", canonical_scheme="https", support=3),
    Rule(
        id="r",
        hosts=["x.com"],
        context=r"^https\:\/\/x\.com\/a\/([0-9]+)\/index\.html$",
        transformation="https://www.x.com/a/$1",
        support=3,
    ),
]


@pytest.mark.parametrize(
    "url,host,out",
    [
        ("http://www.x.com/a?b#c", "x.com", "http://x.com/a?b#c"),
        ("http://u:p@www.x.com:8080/a", "x.com", "http://u:p@x.com:8080/a"),
        ("https://WWW.X.COM", "x.com", "https://x.com"),
        ("http://www.x.com?q", "x.com", "http://x.com?q"),
        ("not a url", "x.com", "not a url"),
    ],
)
def test_to_host_replaces_the_host_only(url, host, out):
    assert to_host(url, host) == out


@pytest.mark.parametrize(
    "url,key,decides",
    [
        # moved, then the canonical host's scheme, parameter and rewrite rules, and the
        # rewrite's output (on the aliased host again) moved once more
        ("http://www.x.com/a/5/index.html?sid=3", "https://x.com/a/5", "r"),
        ("https://x.com/a/5/index.html", "https://x.com/a/5", "r"),
        ("http://www.x.com:8080/q", "https://x.com:8080/q", "s"),
        ("https://www.x.com/q", "https://x.com/q", "h"),
        ("http://other.x.com/q", "http://other.x.com/q", None),
    ],
)
def test_a_host_rule_comes_first_and_the_canonical_hosts_rules_follow(url, key, decides):
    rs = RuleSet(RULES)
    assert rs.canonicalize(url) == key
    rule, k = rs.explain(url)
    assert k == key and (rule.id if rule else None) == decides
    assert rs.canonicalize(key) == key  # keys are fixed points
    moved = [r.id for r in rs.applicable(url)]
    assert (moved[:1] == ["h"]) == (url.lower().find("www.x.com") >= 0)


def test_host_rules_apply_once_so_a_cycle_from_outside_cannot_loop():
    rs = RuleSet([host_rule("a", ["a.x.com"], "b.x.com"), host_rule("b", ["b.x.com"], "a.x.com")])
    assert rs.canonicalize("http://a.x.com/p") == "http://b.x.com/p"
    assert rs.canonicalize("http://b.x.com/p") == "http://a.x.com/p"
    assert [r.id for r in rs.applicable("http://a.x.com/p")] == ["a"]
    # the moved URL's host's parameter rules apply; the URL is still not moved again
    rs = RuleSet([*rs.rules(), Rule(id="p", hosts=["b.x.com"], context="", transformation="", drop_param="sid")])
    assert rs.canonicalize("http://a.x.com/p?sid=1") == rs.explain("http://a.x.com/p?sid=1")[1] == "http://b.x.com/p"


@pytest.mark.parametrize(
    "rule,reason",
    [
        (host_rule(target="y.com"), "foreign-host"),  # another site: not an alias
        (host_rule(target="www.x.com"), "foreign-host"),  # itself
        (host_rule(target="X.com"), "bad-host"),
        (host_rule(target="x.com/evil"), "bad-host"),
        (host_rule(target="x.com:80"), "bad-host"),
        (host_rule(target=""), None),  # unset-like: a rewrite rule with an empty context
        (Rule(id="h", hosts=["www.x.com"], context="^a$", transformation="b", canonical_host="x.com"), "bad-host"),
        (host_rule(normalize="trailing-slash"), "bad-host"),  # one action per record
    ],
)
def test_a_host_rule_from_outside_is_checked(rule, reason):
    rs = RuleSet([rule])
    if reason is None:
        assert rs.canonicalize("http://www.x.com/") == "http://www.x.com/"
        return
    assert rs.refused == {reason: 1}
    assert rs.canonicalize("http://www.x.com/a") == "http://www.x.com/a"


def test_re2_engine_gives_the_same_keys():
    pytest.importorskip("re2")
    py, re2 = RuleSet(RULES), RuleSet(RULES, engine="re2")
    for url in ("http://www.x.com/a/5/index.html?sid=3", "http://www.x.com:8080/q", "http://x.com/"):
        assert py.canonicalize(url) == re2.canonicalize(url)


def test_a_subscriber_update_retires_a_host_rule():
    rs = RuleSet(RULES)
    retired = host_rule(status=RETIRED, version=2)
    assert rs.upsert(retired)
    assert rs.canonicalize("https://www.x.com/q") == "https://www.x.com/q"


def test_partitions_merge_host_rules_by_their_target():
    a = host_rule(hosts=["www.x.com"], updated=1.0)
    b = host_rule(hosts=["www.x.com"], target="x.com", updated=2.0)
    m = merge({"0": a, "1": b})
    assert m.canonical_host == "x.com" and m.support == 6 and m.status == "active"
    gone = merge({"0": host_rule(status=RETIRED)})
    assert gone.canonical_host == "x.com" and gone.status == RETIRED
