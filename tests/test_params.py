"""Parameter rules: query parameters a site ignores, learned one name at a time, vetoed by
distinct pages, transferred across sites, and dropped before rewrite rules apply."""

from __future__ import annotations

import hashlib
import io
from random import Random

import msgspec
import pytest

from dustonline import FetchEvent, OnlineLearner, rocks_store
from dustonline.config import config_from_dict
from dustonline.rules import RETIRED, Rule, RuleSet, encode_rule, read_rules, write_rules
from dustonline.rules.book import RuleBook
from dustonline.rules.merge import merge
from dustonline.rules.params import drop_params, query_pairs

T0 = 1.7e9
CFG = {"learning": {"min_freq": 3, "min_supp": 3}}


def digest(s: str) -> str:
    return "sha1:" + hashlib.sha1(s.encode()).hexdigest().upper()


def learner(store=None) -> OnlineLearner:
    return OnlineLearner(config_from_dict(CFG), store)


def learn(lrn: OnlineLearner, events) -> list[Rule]:
    out = []
    for ev in events:
        out += lrn.learn_one(ev)
    return out + lrn.flush()


def param_rules(lrn: OnlineLearner) -> dict[str, list[str]]:
    """drop_param -> hosts of the active parameter rules."""
    return {r.drop_param: r.hosts for r in lrn.rules() if r.drop_param}


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self) -> float:
        self.t += 10
        return self.t


def page(host: str, path: str, body: str, t: Clock, alias: str = "") -> FetchEvent:
    url = f"http://{host}{path}" + alias
    return FetchEvent(url=url, ts=t(), digest=digest(host + path + body))


def tracked_site(host: str, pages: int, t: Clock, name: str = "utm_source", rng=None, offset: int = 0):
    """Every page fetched plain and with ``name`` set to a random value (same content)."""
    rng = rng or Random(host)
    evs = []
    for i in range(offset, offset + pages):
        evs.append(page(host, f"/story/{i}", "", t))
        sep = "&" if "?" in f"/story/{i}" else "?"
        evs.append(page(host, f"/story/{i}", "", t, f"{sep}{name}={rng.randrange(10**9):x}"))
    return evs


# ---------------------------------------------------------------- the operation
@pytest.mark.parametrize(
    "url,names,out",
    [
        ("http://a.com/x?sid=1", {"sid"}, "http://a.com/x"),
        ("http://a.com/x?sid=1&id=2", {"sid"}, "http://a.com/x?id=2"),
        ("http://a.com/x?id=2&sid=1", {"sid"}, "http://a.com/x?id=2"),
        ("http://a.com/x?a=1&sid=1&b=2", {"sid"}, "http://a.com/x?a=1&b=2"),
        ("http://a.com/x?sid&id=2", {"sid"}, "http://a.com/x?id=2"),  # a name without a value
        ("http://a.com/x?sid=1&sid=2", {"sid"}, "http://a.com/x"),  # every occurrence
        ("http://a.com/x?sidx=1&xsid=2", {"sid"}, "http://a.com/x?sidx=1&xsid=2"),  # whole names only
        ("http://a.com/x?SID=1", {"sid"}, "http://a.com/x?SID=1"),  # case-sensitive
        ("http://a.com/x?s%69d=1", {"sid"}, "http://a.com/x?s%69d=1"),  # no decoding
        ("http://a.com/x?sid=1#top", {"sid"}, "http://a.com/x#top"),
        ("http://a.com/x?id=1#sid=2", {"sid"}, "http://a.com/x?id=1#sid=2"),  # not the fragment
        ("http://a.com/x?a=1&&sid=1", {"sid"}, "http://a.com/x?a=1&"),  # other parts verbatim
        ("http://a.com/x?", {"sid"}, "http://a.com/x?"),  # nothing dropped: unchanged
        ("http://a.com/x", {"sid"}, "http://a.com/x"),
        ("http://a.com/x?utm_source=a&sid=1&id=3", {"sid", "utm_source"}, "http://a.com/x?id=3"),
    ],
)
def test_drop_params(url, names, out):
    assert drop_params(url, names) == out


def test_query_pairs_tell_a_bare_name_from_an_empty_value():
    assert query_pairs("http://a.com/?a&a=&b=1#c=2") == [("a", "\x00"), ("a", ""), ("b", "1")]
    assert query_pairs("http://a.com/x") == []


# ---------------------------------------------------------------- the rule contract
def prule(name: str, hosts=("a.com",), **kw) -> Rule:
    return Rule(id="p-" + name, hosts=list(hosts), context="", transformation="", drop_param=name, **kw)


def test_parameter_rules_apply_before_the_rewrite_rule():
    https = Rule(id="r1", hosts=["a.com"], context=r"^http://a\.com/(\d+)$", transformation="https://a.com/$1")
    rs = RuleSet([prule("sid"), prule("utm_source"), https])
    assert rs.canonicalize("http://a.com/7?sid=1&utm_source=x") == "https://a.com/7"
    assert rs.canonicalize("http://a.com/7?utm_source=x") == "https://a.com/7"
    assert rs.canonicalize("http://a.com/7?id=2&sid=1") == "http://a.com/7?id=2"
    assert rs.canonicalize("http://b.com/7?sid=1") == "http://b.com/7?sid=1"  # other hosts keep it
    rule, key = rs.explain("http://a.com/7?sid=1")
    assert (rule.id, key) == ("r1", "https://a.com/7")
    rule, key = rs.explain("http://a.com/x?sid=1")
    assert (rule.id, key) == ("p-sid", "http://a.com/x")
    assert [r.id for r in rs.applicable("http://a.com/7?sid=1")] == ["p-sid", "r1"]


def test_rewrite_rules_encode_as_before_and_parameter_rules_round_trip(tmp_path):
    r = Rule(id="r1", hosts=["a.com"], context="^a$", transformation="b")
    assert b"drop_param" not in encode_rule(r)
    path = tmp_path / "rules.jsonl"
    write_rules(path, [r, prule("sid", version=3)])
    back = list(read_rules(path))
    assert back[1].drop_param == "sid" and back[1].version == 3
    book = RuleBook()
    assert book.apply(b"p-sid", encode_rule(prule("sid")))
    assert book.ruleset().canonicalize("http://a.com/x?sid=1&a=2") == "http://a.com/x?a=2"


def test_a_reader_without_the_field_holds_a_parameter_rule_that_matches_nothing():
    class OldRule(msgspec.Struct, kw_only=True):
        id: str
        hosts: list[str]
        context: str
        transformation: str

    old = msgspec.json.decode(encode_rule(prule("sid")), type=OldRule)
    as_old = Rule(id=old.id, hosts=old.hosts, context=old.context, transformation=old.transformation)
    assert as_old.compile().apply("http://a.com/x?sid=1") is None
    assert RuleSet([as_old]).canonicalize("http://a.com/x?sid=1") == "http://a.com/x?sid=1"


def test_merge_keeps_the_parameter_of_a_partial():
    m = merge({"0": prule("sid", support=3), "1": prule("sid", hosts=["www.a.com"], support=2)})
    assert m.drop_param == "sid" and m.hosts == ["a.com", "www.a.com"] and m.support == 5
    gone = merge({"0": prule("sid", status=RETIRED)})
    assert gone.drop_param == "sid" and gone.status == RETIRED


# ---------------------------------------------------------------- learning
def test_a_tracking_parameter_is_learned_from_min_freq_clusters():
    t = Clock()
    lrn = learner()
    learn(lrn, tracked_site("a.com", 2, t))
    assert param_rules(lrn) == {}  # two clusters: not yet
    out = learn(lrn, tracked_site("a.com", 1, t, offset=2))
    assert param_rules(lrn) == {"utm_source": ["a.com"]}
    assert any(r.drop_param == "utm_source" for r in out)  # published as a change
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/story/99?utm_source=zz") == rs.canonicalize("http://a.com/story/99")


def test_evidence_is_per_parameter_not_per_combination():
    """Each page has a different mix of aliases: no two clusters share a URL shape, yet
    each parameter varies in three clusters."""
    t, rng = Clock(), Random(1)
    mixes = [("sid",), ("utm_source", "sid"), ("fbclid", "utm_source"), ("sid", "fbclid"), ("utm_source",), ("fbclid",)]
    evs = []
    for i, mix in enumerate(mixes):
        evs.append(page("a.com", f"/n/{i}", "", t))
        q = "&".join(f"{n}={rng.randrange(10**9):x}" for n in mix)
        evs.append(page("a.com", f"/n/{i}", "", t, "?" + q))
    lrn = learner()
    learn(lrn, evs)
    assert set(param_rules(lrn)) == {"sid", "utm_source", "fbclid"}
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/n/9?fbclid=1&sid=2&utm_source=3") == rs.canonicalize("http://a.com/n/9")


def test_a_parameter_that_selects_pages_is_vetoed():
    """``page`` varies within a cluster (/list = /list?page=1) but /list?page=2 is another
    page: dropping it would merge them, so no rule, ever."""
    t = Clock()
    evs = []
    for i in range(5):
        evs.append(page("a.com", f"/list{i}", "p1", t))
        evs.append(page("a.com", f"/list{i}", "p1", t, "?page=1"))
        evs.append(page("a.com", f"/list{i}", "p2", t, "?page=2"))
    lrn = learner()
    learn(lrn, evs)
    assert "page" not in param_rules(lrn)
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/list1?page=2") != rs.canonicalize("http://a.com/list1")


def test_a_parameter_seen_with_one_value_only_is_a_default_not_an_ignored_name():
    """``/list = /list?page=1`` on three pages says 1 is page's default, not that the
    pages ignore ``page``: no rule, so ``?page=2``, first fetched later, keeps its own
    key instead of being merged before its counter-evidence comes. A bare ``?print``
    (there or not: both its states seen) and a name seen with two values are dropped."""
    t = Clock()
    evs = []
    for i in range(3):
        evs.append(page("a.com", f"/list{i}", f"l{i}", t))
        evs.append(page("a.com", f"/list{i}", f"l{i}", t, "?page=1"))
        evs.append(page("a.com", f"/doc{i}", f"d{i}", t))
        evs.append(page("a.com", f"/doc{i}", f"d{i}", t, "?print"))
        evs.append(page("a.com", f"/item{i}", f"i{i}", t, f"?ref=r{i % 2}"))
        evs.append(page("a.com", f"/item{i}", f"i{i}", t))
    lrn = learner()
    learn(lrn, evs)
    assert set(param_rules(lrn)) == {"print", "ref"}
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/list7?page=2") != rs.canonicalize("http://a.com/list7")
    assert lrn.params.ev.get("a.com\x00page").values == ["1"]  # and it waits for a second value
    learn(lrn, [page("a.com", "/list9", "l9", t), page("a.com", "/list9", "l9", t, "?page=0")])
    assert "page" in param_rules(lrn)


def test_a_collision_after_activation_retires_the_rule():
    t = Clock()
    lrn = learner()
    learn(lrn, tracked_site("a.com", 3, t, name="v"))
    assert "v" in param_rules(lrn)
    # two distinct contents that differ only in v: the rule would merge them
    a = page("a.com", "/doc", "one", t)
    b = page("a.com", "/doc", "two", t, "?v=2")
    out = learn(lrn, [a, b])
    assert "v" not in param_rules(lrn)
    assert any(r.drop_param == "v" and r.status == RETIRED for r in out)
    # more evidence does not bring it back: the veto is evidence of distinct pages
    learn(lrn, tracked_site("a.com", 5, t, name="v", offset=10))
    assert "v" not in param_rules(lrn)


def test_a_name_proven_on_other_sites_is_adopted_on_one_cluster_but_still_vetoed():
    t = Clock()
    lrn = learner()
    for host in ("a.com", "b.org", "c.net"):
        learn(lrn, tracked_site(host, 3, t, name="fbclid"))
    assert lrn.params.need("fbclid") == 1 and lrn.params.need("utm_source") == 3
    # a new site with one cluster of its own evidence
    learn(lrn, tracked_site("d.com", 1, t, name="fbclid"))
    d_hosts = {h for r in lrn.rules() if r.drop_param == "fbclid" for h in r.hosts}
    assert "d.com" in d_hosts
    # another new site whose own URLs say fbclid selects content there
    evs = [page("e.com", "/x", "one", t), page("e.com", "/x", "two", t, "?fbclid=2")]
    evs += tracked_site("e.com", 1, t, name="fbclid")
    learn(lrn, evs)
    e_hosts = {h for r in lrn.rules() if r.drop_param == "fbclid" for h in r.hosts}
    assert "e.com" not in e_hosts


def test_a_site_that_saw_a_name_before_it_was_proven_adopts_it_when_it_is():
    """Crawl order says nothing about a name: a site's one cluster of evidence counts as
    much when other sites prove the name later as when they proved it earlier; and its own
    counter-evidence still vetoes it then."""
    t = Clock()
    lrn = learner()
    learn(lrn, tracked_site("d.com", 1, t, name="fbclid"))
    evs = [page("e.com", "/x", "one", t), page("e.com", "/x", "two", t, "?fbclid=2")]
    learn(lrn, evs + tracked_site("e.com", 1, t, name="fbclid"))
    assert param_rules(lrn) == {}
    for host in ("a.com", "b.org", "c.net"):
        learn(lrn, tracked_site(host, 3, t, name="fbclid"))
    hosts = set(param_rules(lrn)["fbclid"]) if "fbclid" in param_rules(lrn) else set()
    by_site = {h for r in lrn.rules() if r.drop_param == "fbclid" for h in r.hosts}
    assert {"a.com", "b.org", "c.net", "d.com"} <= by_site and "e.com" not in by_site, (hosts, by_site)


def test_unknown_names_need_the_full_evidence_on_a_new_site():
    t = Clock()
    lrn = learner()
    learn(lrn, tracked_site("d.com", 1, t, name="fbclid"))
    assert param_rules(lrn) == {}


def test_evidence_leaving_the_window_retires_the_rule():
    cfg = {**CFG, "window": {"seconds": 3600, "sweep_every": 600}}
    lrn = OnlineLearner(config_from_dict(cfg))
    t = Clock()
    learn(lrn, tracked_site("a.com", 3, t))
    assert "utm_source" in param_rules(lrn)
    t.t += 7200
    out = learn(lrn, [page("z.com", "/later", "", t)])
    out += lrn.sweep()
    assert "utm_source" not in param_rules(lrn)
    assert any(r.drop_param == "utm_source" and r.status == RETIRED for r in out)


def test_restart_from_the_store_continues_exactly(tmp_path):
    t, rng = Clock(), Random(3)
    evs = []
    for host in ("a.com", "b.org", "c.net", "d.com"):
        evs += tracked_site(host, 4, t, name=rng.choice(["sid", "fbclid"]), rng=rng)
    evs += [page("a.com", "/doc", "one", t), page("a.com", "/doc", "two", t, "?sid=2")]
    evs += tracked_site("e.com", 2, t, name="sid", rng=rng)
    whole = learner()
    learn(whole, evs)
    expected = io.BytesIO()
    write_rules(expected, whole.rules())

    cut = len(evs) // 2
    first = learner(rocks_store(tmp_path / "st"))
    for ev in evs[:cut]:
        first.learn_one(ev)
    first.checkpoint()
    first.close()
    second = learner(rocks_store(tmp_path / "st"))
    for ev in evs[cut:]:
        second.learn_one(ev)
    second.flush()
    got = io.BytesIO()
    write_rules(got, second.rules())
    second.close()
    assert got.getvalue() == expected.getvalue()
    assert any(r.drop_param for r in whole.rules())


# ---------------------------------------------------------------- scheme rules
def srule(hosts=("a.com",), **kw) -> Rule:
    return Rule(id="s-1", hosts=list(hosts), context="", transformation="", canonical_scheme="https", **kw)


def test_a_scheme_rule_reads_http_as_https_before_and_after_the_rewrite_rule():
    www = Rule(
        id="r-www",
        hosts=["www.a.com"],
        context=r"^(https?)://www\.a\.com/(\d+)$",
        transformation="$1://a.com/$2",
    )
    rs = RuleSet([srule(), www])
    assert rs.canonicalize("http://a.com/7") == rs.canonicalize("https://a.com/7") == "https://a.com/7"
    # www.a.com has no scheme rule, but the key's host a.com has: the key is read as https
    assert rs.canonicalize("http://www.a.com/7") == "https://a.com/7"
    assert rs.canonicalize("HTTP://a.com/x") == "https://a.com/x"
    assert rs.canonicalize("http://b.com/7") == "http://b.com/7"
    rule, key = rs.explain("http://a.com/x")
    assert (rule.id, key) == ("s-1", "https://a.com/x")
    assert b"canonical_scheme" in encode_rule(srule()) and b"canonical_scheme" not in encode_rule(www)
    m = merge({"0": srule(support=2), "1": srule(hosts=["www.a.com"], support=1)})
    assert m.canonical_scheme == "https" and m.hosts == ["a.com", "www.a.com"]


def both_schemes(host: str, pages: int, t: Clock, offset: int = 0, path: str = "/doc/"):
    evs = []
    for i in range(offset, offset + pages):
        evs.append(page(host, f"{path}{i}", "", t))
        evs.append(FetchEvent(url=f"https://{host}{path}{i}", ts=t(), digest=digest(host + f"{path}{i}")))
    return evs


def scheme_rules(lrn: OnlineLearner) -> list[list[str]]:
    return [r.hosts for r in lrn.rules() if r.canonical_scheme]


def test_a_site_serving_one_page_over_both_schemes_gets_a_scheme_rule_on_all_its_hosts():
    t = Clock()
    lrn = learner()
    learn(lrn, [page("www.a.com", "/about", "w", t)])  # another host of the site, seen in no pair yet
    learn(lrn, [page("www.a.com", "/about", "w", t, "?x=1")])
    learn(lrn, both_schemes("a.com", 3, t))
    assert scheme_rules(lrn) == [["a.com", "www.a.com"]]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/doc/99") == rs.canonicalize("https://a.com/doc/99")


def test_distinct_pages_under_the_two_schemes_veto_the_scheme_rule():
    t = Clock()
    lrn = learner()
    evs = [
        page("a.com", "/robots.txt", "http robots", t),
        FetchEvent(url="https://a.com/robots.txt", ts=t(), digest=digest("https robots")),
    ]
    learn(lrn, evs + both_schemes("a.com", 5, t))
    assert scheme_rules(lrn) == []
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/robots.txt") != rs.canonicalize("https://a.com/robots.txt")


def test_one_body_on_many_sites_teaches_no_site_about_another():
    """A shared image under both schemes on three sites is one cluster; it is not evidence
    that any of them serves its pages under both schemes (nor a scope for the others)."""
    t = Clock()
    lrn = learner()
    evs = []
    for i in range(4):
        for host in ("a.com", "b.org", "c.net"):
            for scheme in ("http", "https"):
                evs.append(FetchEvent(url=f"{scheme}://{host}/img/logo{i}.png", ts=t(), digest=digest(f"logo{i}")))
    learn(lrn, evs)
    assert all(len({h.split(".")[-2] for h in hosts}) == 1 for hosts in scheme_rules(lrn))


def test_canonicalize_and_explain_give_the_same_key():
    """canonicalize has a fast path of its own; explain names the rules. Same keys."""
    www = Rule(
        id="r-www", hosts=["www.a.com"], context=r"^(https?)://www\.a\.com/(\d+)$", transformation="$1://a.com/$2"
    )
    http = Rule(id="r-http", hosts=["a.com"], context=r"^https://a\.com/x/(\d+)$", transformation="http://a.com/$1")
    tracked = Rule(id="r-t", hosts=["a.com"], context=r"^http://a\.com/t\?utm=[a-z]+$", transformation="http://a.com/t")
    rs = RuleSet([srule(), prule("sid"), prule("utm"), www, http, tracked])
    urls = [
        f"{scheme}://{host}{path}{query}"
        for scheme in ("http", "https", "HTTP")
        for host in ("a.com", "www.a.com", "b.com")
        for path in ("/7", "/x/7", "/t", "/")
        for query in ("", "?sid=1", "?utm=ab", "?id=2&sid=3", "?utm=ab&id=1", "#f")
    ]
    assert len(urls) == 216
    for u in urls:
        assert rs.canonicalize(u) == rs.explain(u)[1], u
    # the www rule moves the URL to a.com, whose scheme rule then holds for the key
    assert rs.canonicalize("http://www.a.com/7") == "https://a.com/7"
    # sid is dropped on a.com, not on www.a.com: no www rule fits, the URL is its own key
    assert rs.canonicalize("http://www.a.com/7?sid=1") == "http://www.a.com/7?sid=1"
    # nothing fits the prepared URL; the rule learned with utm in its context does, and
    # its output is prepared in turn
    assert rs.explain("http://a.com/t?utm=ab") == (tracked, "https://a.com/t")


# ---------------------------------------------------------------- host pairs
def host_rules(lrn: OnlineLearner) -> dict[str, str]:
    """moved host -> the host it moves to, of the active host rules."""
    return {h: r.canonical_host for r in lrn.rules() if r.canonical_host for h in r.hosts}


def two_hosts(a: str, b: str, pages: int, t: Clock, offset: int = 0, extra: int = 0):
    """Pages fetched on both hosts (same content); ``extra`` more pages on ``a`` only, so
    ``a`` has more URLs."""
    evs = []
    for i in range(offset, offset + pages):
        evs += [page(a, f"/p/{i}", "", t), page(b, f"/p/{i}", "", t)]
        evs[-1] = FetchEvent(url=evs[-1].url, ts=evs[-1].ts, digest=evs[-2].digest)
    evs += [page(a, f"/only/{i}", "", t) for i in range(offset, offset + extra)]
    return evs


def test_two_hosts_serving_one_page_get_a_host_rule_to_the_larger():
    t = Clock()
    lrn = learner()
    learn(lrn, two_hosts("img.a.com", "img1.a.com", 2, t, extra=3))
    assert host_rules(lrn) == {}  # not a www toggle: min_freq clusters of its own
    learn(lrn, two_hosts("img.a.com", "img1.a.com", 1, t, offset=5))
    assert host_rules(lrn) == {"img1.a.com": "img.a.com"}
    rs = lrn.ruleset()
    assert rs.canonicalize("http://img1.a.com/new/7?x") == "http://img.a.com/new/7?x"


def test_a_pair_that_serves_distinct_pages_under_one_path_is_vetoed():
    t = Clock()
    lrn = learner()
    evs = [page("a.com", "/", "home a", t), page("www.a.com", "/", "home www", t)]
    learn(lrn, evs + two_hosts("a.com", "www.a.com", 5, t))
    assert host_rules(lrn) == {}
    rs = lrn.ruleset()
    assert rs.canonicalize("http://www.a.com/") != rs.canonicalize("http://a.com/")


def test_a_collision_after_activation_retires_the_host_rule_for_good():
    t = Clock()
    lrn = learner()
    learn(lrn, two_hosts("a.com", "www.a.com", 3, t, extra=1))
    assert host_rules(lrn) == {"www.a.com": "a.com"}
    out = learn(lrn, [page("a.com", "/about", "a", t), page("www.a.com", "/about", "b", t)])
    assert host_rules(lrn) == {}
    assert any(r.canonical_host == "a.com" and r.status == RETIRED for r in out)
    learn(lrn, two_hosts("a.com", "www.a.com", 5, t, offset=10))
    assert host_rules(lrn) == {}


def test_the_www_toggle_transfers_but_other_pairs_do_not():
    t = Clock()
    lrn = learner()
    for s in ("a.com", "b.org", "c.net"):
        learn(lrn, two_hosts(s, "www." + s, 3, t, extra=1))
    assert len(host_rules(lrn)) == 3
    learn(lrn, two_hosts("d.com", "www.d.com", 1, t, extra=1))  # one cluster of its own
    assert host_rules(lrn)["www.d.com"] == "d.com"
    learn(lrn, two_hosts("m.e.com", "e.com", 1, t))
    assert "m.e.com" not in host_rules(lrn) and "e.com" not in host_rules(lrn)
    # adopted on one cluster, still vetoed by the site's own counter-evidence
    evs = [page("f.com", "/", "one", t), page("www.f.com", "/", "two", t)]
    learn(lrn, evs + two_hosts("f.com", "www.f.com", 1, t, extra=1))
    assert "www.f.com" not in host_rules(lrn)


def test_numbered_hosts_transfer_as_one_shape():
    """Pairs of hosts that differ in numbers only (a CDN's img1, img3; ichef, ichef-1)
    are one transfer class: proven on three sites, a fourth moves on one cluster of its
    own, still vetoed by its own counter-evidence; other pairs still need their own."""
    t = Clock()
    lrn = learner()
    for s, (a, b) in {"a.com": ("img1", "img3"), "b.org": ("s2", "s10"), "c.net": ("cdn", "cdn-4")}.items():
        learn(lrn, two_hosts(f"{a}.{s}", f"{b}.{s}", 3, t, extra=1))
    assert len(host_rules(lrn)) == 3
    learn(lrn, two_hosts("img2.d.com", "img7.d.com", 1, t, extra=1))
    assert host_rules(lrn)["img7.d.com"] == "img2.d.com"
    learn(lrn, two_hosts("static.e.com", "img1.e.com", 1, t, extra=1))
    assert not {"static.e.com", "img1.e.com"} & set(host_rules(lrn))
    evs = [page("img1.f.com", "/", "one", t), page("img2.f.com", "/", "two", t)]
    learn(lrn, evs + two_hosts("img1.f.com", "img2.f.com", 1, t, extra=1))
    assert not {"img1.f.com", "img2.f.com"} & set(host_rules(lrn))


def test_a_host_that_others_move_to_is_never_moved():
    t = Clock()
    lrn = learner()
    learn(lrn, two_hosts("a.com", "www.a.com", 3, t, extra=3))
    learn(lrn, two_hosts("www.a.com", "w3.a.com", 3, t, offset=20))
    moves = host_rules(lrn)
    assert moves == {"www.a.com": "a.com"}, moves  # w3 -> www would be a chain: it waits
    assert not set(moves.values()) & set(moves)


def test_dropped_parameters_and_moved_hosts_are_checked_together():
    """A parameter the larger host ignores, and a moved host whose URLs with it are
    another page: the moved URLs key on the larger host under its names, so the host
    rule is vetoed rather than merging them."""
    t = Clock()
    lrn = learner()
    learn(lrn, tracked_site("a.com", 3, t, name="v"))
    assert "v" in param_rules(lrn)
    evs = two_hosts("a.com", "www.a.com", 3, t, offset=50, extra=2)
    evs += [page("www.a.com", "/q", "one", t), page("www.a.com", "/q", "two", t, "?v=1")]
    learn(lrn, evs)
    rs = lrn.ruleset()
    assert rs.canonicalize("http://www.a.com/q") != rs.canonicalize("http://www.a.com/q?v=1")


def test_host_rules_survive_a_restart_from_the_store(tmp_path):
    t = Clock()
    evs = two_hosts("a.com", "www.a.com", 3, t, extra=1)
    later = [page("a.com", "/about", "a", t), page("www.a.com", "/about", "b", t)]
    whole = learner()
    learn(whole, evs)  # flushed where the first process flushes before it stops
    learn(whole, later)
    first = learner(rocks_store(str(tmp_path / "s")))
    learn(first, evs)
    first.checkpoint()
    first.close()
    second = learner(rocks_store(str(tmp_path / "s")))
    learn(second, later)
    assert [encode_rule(r) for r in second.rules()] == [encode_rule(r) for r in whole.rules()]
    assert host_rules(second) == {}


@pytest.mark.parametrize(
    "values,shape",
    [
        (["e0a4727a5c9421107fcc92d18ba8117b", "8c6141401547e649cb24ba3558ea5f19"], "=token:hex:32"),
        (["XMbOyyf7CMW5SQRh"], "=token:alnum:16"),
        (["Cj0KCQxJHWjkXz43wQ-W3vw_EKJ2", "Cj0KCQPouJFTCB_wDFAv"], "=token:b64:var"),
        (["newsletter", "google"], ""),  # words may select content
        (["123456789", "987654321"], ""),  # so may numbers
        (["a1b2c3"], ""),  # too short to be random
        (["abc%20def123"], ""),
        ([], ""),
    ],
)
def test_token_shapes(values, shape):
    from dustonline.learner.names import token_shape

    assert token_shape(values) == shape


def test_a_new_name_whose_values_are_shaped_like_proven_ones_is_adopted_on_one_cluster():
    """Session ids called differently on every site: the shape of their values transfers
    (three sites prove "=token:hex:32"), a word-valued name does not."""
    t = Clock()
    lrn = learner()
    for i, host in enumerate(("a.com", "b.org", "c.net")):
        learn(lrn, session_site(host, f"sess{i}", 3, t))
    assert lrn.params.need("zzsid", "=token:hex:32") == 1 and lrn.params.need("zzsid") == 3
    learn(lrn, session_site("d.com", "zzsid", 1, t))
    assert "d.com" in {h for r in lrn.rules() if r.drop_param == "zzsid" for h in r.hosts}
    learn(lrn, tracked_site("e.com", 1, t, name="campaign"))  # shorter hex values: a shape proven nowhere
    assert "campaign" not in param_rules(lrn)


def session_site(host: str, name: str, pages: int, t: Clock):
    rng = Random(host + name)
    evs = []
    for i in range(pages):
        evs.append(page(host, f"/s/{i}", "", t))
        evs.append(page(host, f"/s/{i}", "", t, f"?{name}={rng.randrange(16**32):032x}"))
    return evs


# ---------------------------------------------------------------- path edits
def edit_rules(lrn: OnlineLearner) -> dict[str, list[str]]:
    """path edit -> hosts of the active path-edit rules."""
    return {r.normalize: r.hosts for r in lrn.rules() if r.normalize}


def two_forms(host: str, a: str, b: str, pages: int, t: Clock, offset: int = 0):
    """Each page fetched under two paths, ``a`` and ``b`` formatted with its number."""
    evs = []
    for i in range(offset, offset + pages):
        evs += [page(host, a.format(i), "", t), page(host, a.format(i), "", t)]
        evs[-1] = FetchEvent(url=f"http://{host}" + b.format(i), ts=evs[-1].ts, digest=evs[-2].digest)
    return evs


@pytest.mark.parametrize(
    "a,b,edit",
    [
        ("/p/{}/", "/p/{}", "trailing-slash"),
        ("/p/{}/", "/p/{}/index.html", "last-segment:index.html"),
        ("/p/{}", "/p/{}?", "empty-query"),
        ("/Docs/P{}.aspx", "/docs/p{}.aspx", "lowercase-path"),
        ("/docs/p.aspx?ID={}", "/docs/p.aspx?id={}", "lowercase-query-names"),
        ("/c.php?cat=a&item={}&s=2", "/c.php?item={}&s=2&cat=a", "sort-query"),
    ],
)
def test_a_path_edit_is_learned_from_min_freq_clusters_and_applies_to_new_paths(a, b, edit):
    t = Clock()
    lrn = learner()
    learn(lrn, two_forms("a.com", a, b, 2, t))
    assert edit not in edit_rules(lrn)
    learn(lrn, two_forms("a.com", a, b, 1, t, offset=2))
    assert edit_rules(lrn)[edit] == ["a.com"]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com" + a.format(99)) == rs.canonicalize("http://a.com" + b.format(99))


def test_bare_tokens_are_one_edit_that_takes_tokens_never_seen():
    """Cache busters that rotate (``app.js?o4jxx5``, then ``?o4kiup``): each token is a name
    of its own, learned too late for the next one; the edit drops any bare part with a
    digit once three files showed it, and leaves words (``?amp``) alone."""
    t = Clock()
    lrn = learner()
    evs = []
    for i in range(3):
        evs += two_forms("a.com", f"/s/f{i}.js?{i}k{7 * i}q", f"/s/f{i}.js", 1, t)
    evs += [page("a.com", "/news/1", "a story", t), page("a.com", "/news/1?amp", "its AMP page", t)]
    learn(lrn, evs)
    assert edit_rules(lrn)["bare-tokens"] == ["a.com"]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/s/new.js?o4jxx5") == "http://a.com/s/new.js"
    assert rs.canonicalize("http://a.com/s/new.js?v=2&o4jxx5") == "http://a.com/s/new.js?v=2"
    assert rs.canonicalize("http://a.com/news/1?amp") != rs.canonicalize("http://a.com/news/1")


def test_bare_tokens_that_select_pages_veto_the_edit():
    """An old CMS whose pages are ``/view?123``: two of them are two contents, so the
    edit that would key them together is vetoed, however many cache busters the site has."""
    t = Clock()
    lrn = learner()
    evs = [page("a.com", "/view?123", "one article", t), page("a.com", "/view?456", "another", t)]
    for i in range(5):
        evs += two_forms("a.com", f"/s/f{i}.js?{i}k{7 * i}q", f"/s/f{i}.js", 1, t)
    learn(lrn, evs)
    assert "bare-tokens" not in edit_rules(lrn)
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/view?123") != rs.canonicalize("http://a.com/view?456")


def test_a_path_edit_that_would_merge_two_pages_is_vetoed():
    t = Clock()
    lrn = learner()
    evs = [page("a.com", "/doc/", "listing", t), page("a.com", "/doc", "a document", t)]
    learn(lrn, evs + two_forms("a.com", "/p/{}/", "/p/{}", 5, t))
    assert "trailing-slash" not in edit_rules(lrn)
    evs = [page("b.com", "/x/", "dir", t), page("b.com", "/x/home", "another page", t)]
    learn(lrn, evs + two_forms("b.com", "/p/{}/", "/p/{}/home", 5, t))
    assert "last-segment:home" not in edit_rules(lrn)


def test_query_order_that_selects_another_page_is_vetoed():
    """Two orders of one query that are two pages (an application that reads its query
    as a list) veto the sort where they were seen; a site of the same shape without
    them sorts."""
    t = Clock()
    lrn = learner()
    evs = [page("a.com", "/r?to=x&to=y", "route x-y", t), page("a.com", "/r?from=x&to=y", "x to y", t)]
    evs += [page("a.com", "/r?to=y&from=x", "y from x", t)]
    learn(lrn, evs + two_forms("a.com", "/c?cat=a&item={}", "/c?item={}&cat=a", 5, t))
    learn(lrn, two_forms("b.com", "/c?cat=a&item={}", "/c?item={}&cat=a", 5, t))
    assert edit_rules(lrn).get("sort-query") == ["b.com"]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/r?from=x&to=y") != rs.canonicalize("http://a.com/r?to=y&from=x")
    assert rs.canonicalize("http://b.com/c?item=9&cat=b") == rs.canonicalize("http://b.com/c?cat=b&item=9")


def test_a_case_sensitive_site_never_gets_its_path_lowered():
    t = Clock()
    lrn = learner()
    evs = [page("a.com", "/v/AbC", "one video", t), page("a.com", "/v/abc", "another", t)]
    learn(lrn, evs + two_forms("a.com", "/Docs/P{}.aspx", "/docs/p{}.aspx", 5, t))
    assert "lowercase-path" not in edit_rules(lrn)
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/v/AbC") != rs.canonicalize("http://a.com/v/abc")


def test_query_names_are_lowered_on_less_evidence_where_path_case_is_proven():
    """Letter case is one transfer class: sites that ignore it in paths let a new site
    lower its query names on one cluster of its own, unless a case twin vetoes it."""
    t = Clock()
    lrn = learner()
    for host in ("a.com", "b.org", "c.net"):
        learn(lrn, two_forms(host, "/Docs/P{}.aspx", "/docs/p{}.aspx", 3, t))
    learn(lrn, two_forms("d.com", "/p.aspx?ArticleId={}", "/p.aspx?articleid={}", 1, t))
    learn(lrn, two_forms("f.com", "/p.aspx?ArticleId={}", "/p.aspx?articleId={}", 1, t))
    twins = [page("e.com", "/v?Id=1", "one video", t), page("e.com", "/v?id=1", "another", t)]
    learn(lrn, twins + two_forms("e.com", "/p.aspx?ArticleId={}", "/p.aspx?articleid={}", 1, t))
    lowered = sorted(h for r in lrn.rules() if r.normalize == "lowercase-query-names" for h in r.hosts)
    assert lowered == ["d.com", "f.com"]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://d.com/p.aspx?ArticleId=77") == rs.canonicalize("http://d.com/p.aspx?articleid=77")
    assert rs.canonicalize("http://e.com/v?Id=1") != rs.canonicalize("http://e.com/v?id=1")


def test_query_names_need_their_own_evidence_without_proven_path_case():
    t = Clock()
    lrn = learner()
    learn(lrn, two_forms("d.com", "/p.aspx?ArticleId={}", "/p.aspx?articleid={}", 1, t))
    assert "lowercase-query-names" not in edit_rules(lrn)


def test_path_edits_transfer_by_their_literal():
    t = Clock()
    lrn = learner()
    for host in ("a.com", "b.org", "c.net"):
        learn(lrn, two_forms(host, "/p/{}/", "/p/{}/default.aspx", 3, t))
    learn(lrn, two_forms("d.com", "/q/{}/", "/q/{}/default.aspx", 1, t))
    learn(lrn, two_forms("e.com", "/q/{}/", "/q/{}/home.php", 1, t))
    hosts = {e: set(h) for e, h in edit_rules(lrn).items()}
    by_edit = {r.normalize: set() for r in lrn.rules() if r.normalize}
    for r in lrn.rules():
        if r.normalize:
            by_edit[r.normalize] |= set(r.hosts)
    assert "d.com" in by_edit["last-segment:default.aspx"], hosts
    assert "last-segment:home.php" not in by_edit


def test_a_last_segment_with_escapes_is_learned_as_path_edits_compare_it():
    """``/p/1/d%c3%a9faut.html`` ~ ``/p/1/``: the literal is written as light normalization
    writes escapes, or no URL would ever match it."""
    t = Clock()
    lrn = learner()
    learn(lrn, two_forms("a.com", "/p/{}/", "/p/{}/d%c3%a9faut.html", 3, t))
    assert "last-segment:d%C3%A9faut.html" in edit_rules(lrn)
    rs = lrn.ruleset()
    assert rs.canonicalize("http://a.com/q/d%c3%a9faut.html") == rs.canonicalize("http://a.com/q/")


def test_a_moved_hosts_path_edit_holds_on_the_host_it_moves_to():
    """RuleSet applies the target's rules to moved URLs: an edit learned on the moved
    host must hold on its target too, or its URLs keep what the edit removes."""
    t = Clock()
    lrn = learner()
    learn(lrn, two_forms("x.com", "/p/{}/", "/p/{}/index.html", 3, t))
    learn(lrn, [page("www.x.com", f"/other/{i}", "", t) for i in range(20)])  # the larger host
    pairs = []
    for i in range(3):
        a = page("x.com", f"/q/{i}", "", t)
        pairs += [a, FetchEvent(url=f"http://www.x.com/q/{i}", ts=t(), digest=a.digest)]
    learn(lrn, pairs)
    moves = {h: r.canonical_host for r in lrn.rules() if r.canonical_host for h in r.hosts}
    assert moves == {"x.com": "www.x.com"}
    assert "www.x.com" in {h for r in lrn.rules() if r.normalize == "last-segment:index.html" for h in r.hosts}
    rs = lrn.ruleset()
    assert rs.canonicalize("http://x.com/s/9/index.html") == rs.canonicalize("http://www.x.com/s/9/")


def test_a_urls_key_follows_its_hosts_names_and_moves():
    """ParamRules.prepared remembers keys; a name added (even to the stored list in place)
    or a move of the host gives the URL its new key, as RuleSet would."""
    p = OnlineLearner(config_from_dict({})).params
    url = "http://a.example/x?s=1&id=2"
    assert p.prepared(url) == url
    p.drops["a.example"] = ["s"]
    assert p.prepared(url) == "http://a.example/x?id=2"
    names = p.drops.get("a.example")
    names.append("id")
    p.drops["a.example"] = names
    assert p.prepared(url) == "http://a.example/x"
    p.moves["a.example"] = "b.example"
    assert p.prepared(url) == url.replace("a.example", "b.example")
    p.drops["b.example"] = ["id"]
    assert p.prepared(url) == "http://b.example/x?s=1"


def test_keys_are_remembered_per_host_within_a_cap():
    """The memo of keys holds at most ``keys_cap`` URLs over every host, forgetting the
    hosts remembered first, and gives each URL the key its host's names give it now."""
    p = OnlineLearner(config_from_dict({})).params
    p.keys_cap = 8
    hosts = [f"h{i}.example" for i in range(5)]
    for h in hosts:
        p.drops[h] = ["s"]
    urls = [(h, f"http://{h}/p{j}?s={j}&id={j}") for h in hosts for j in range(4)]
    for _ in range(2):
        for h, u in urls:
            assert p.prepared(u, h) == u.replace(f"s={u[-1]}&", "")
            assert p._nkeys <= 8
            assert p._nkeys == sum(len(k.keys) for k in p._keys.values())
    assert list(p._keys) == ["h3.example", "h4.example"]  # the last keyed, in order
    p.drops["h4.example"] = ["s", "id"]
    assert p.prepared("http://h4.example/p3?s=3&id=3", "h4.example") == "http://h4.example/p3"
    assert p._nkeys == 5  # h4's keys under its old names are gone


def every_host_rules(lrn: OnlineLearner) -> dict[str, list[str]]:
    """drop_param -> except_hosts of the active rules of every host."""
    return {r.drop_param: r.except_hosts for r in lrn.rules() if r.hosts == ["*"]}


def test_a_name_dropped_on_many_sites_is_dropped_on_every_host_until_a_site_vetoes_it():
    """Sixteen sites drop ``utm_source`` and none vetoes it: one rule of every host, so a
    crawler keys a host's first ``?utm_source=`` URL without it, before the learner has
    seen that host at all. A site whose pages depend on it adopts it at first sight and
    vetoes it at its first collision: it is excepted, and keeps its own keys."""
    t = Clock()
    evs = []
    for i in range(15):
        evs += tracked_site(f"s{i}.com", 3, t)
    lrn = learner()
    learn(lrn, evs)
    assert every_host_rules(lrn) == {}  # fifteen sites: the bound is not met yet
    out = learn(lrn, tracked_site("s15.com", 3, t))
    assert every_host_rules(lrn) == {"utm_source": []}
    g = next(r for r in out if r.hosts == ["*"])
    assert g.id.startswith("g-") and g.support == 16
    rs = lrn.ruleset()
    assert rs.canonicalize("http://never.seen.org/x?a=1&utm_source=mail") == "http://never.seen.org/x?a=1"
    # a shop whose listings differ by utm_source (a badly named parameter): its first URL
    # with the name is adopted, the second collides, the site vetoes it and is excepted;
    # one veto in 28 sites still meets the bound
    for i in range(16, 27):
        learn(lrn, tracked_site(f"s{i}.com", 3, t))
    shop = [
        page("shop.com", "/list", "all", t),
        page("shop.com", "/list", "red", t, "?utm_source=red"),
        page("shop.com", "/list", "blue", t, "?utm_source=blue"),
    ]
    learn(lrn, shop)
    assert every_host_rules(lrn) == {"utm_source": ["shop.com"]}
    assert lrn.params.ev.get("shop.com\x00utm_source").status == "vetoed"
    rs = lrn.ruleset()
    assert rs.canonicalize("http://shop.com/list?utm_source=green") == "http://shop.com/list?utm_source=green"
    assert rs.canonicalize("http://never.seen.org/x?utm_source=mail") == "http://never.seen.org/x"
    # the rule is what a subscriber applies: same keys from the published records alone
    sub = RuleSet(lrn.rules())
    for url in ("http://shop.com/list?utm_source=x", "http://n.org/?utm_source=x", "http://s3.com/p0?utm_source=q"):
        assert sub.canonicalize(url) == rs.canonicalize(url)
    # a second such site: the bound fails, the rule retires
    learn(lrn, [page("b.com", "/l", "x", t, "?utm_source=1"), page("b.com", "/l", "y", t, "?utm_source=2")])
    assert every_host_rules(lrn) == {}


def test_a_name_vetoed_on_many_sites_is_no_longer_dropped_on_every_host():
    """Vetoes count against the every-host rule: once the bound fails it retires, and the
    sites that adopted the name on no evidence of their own drop it again."""
    t = Clock()
    evs = []
    for i in range(16):
        evs += tracked_site(f"s{i}.com", 3, t)
    lrn = learner()
    learn(lrn, evs)
    learn(lrn, [page("first.com", "/a", "a", t), page("first.com", "/b", "b", t, "?utm_source=x")])
    assert lrn.params.drops.get("first.com") == ["utm_source"]  # adopted at first sight
    out = []
    for i in range(4):  # four sites whose pages depend on it
        out += learn(
            lrn,
            [page(f"bad{i}.com", "/l", "x", t, "?utm_source=1"), page(f"bad{i}.com", "/l", "y", t, "?utm_source=2")],
        )
    assert every_host_rules(lrn) == {}
    assert any(r.hosts == ["*"] and r.status == RETIRED for r in out)
    assert not lrn.params.drops.get("first.com")  # adopted on no evidence: dropped with the rule


def test_merged_every_host_rules_are_excepted_wherever_a_partition_vetoed():
    a = Rule(
        id="g-1",
        hosts=["*"],
        context="",
        transformation="",
        drop_param="utm_source",
        except_hosts=["a.com"],
        support=20,
    )
    b = msgspec.structs.replace(a, except_hosts=["b.com"], support=18)
    m = merge({"0": a, "1": b})
    assert m.hosts == ["*"] and m.except_hosts == ["a.com", "b.com"]
    rs = RuleSet([m])
    assert rs.canonicalize("http://b.com/?utm_source=1") == "http://b.com/?utm_source=1"
    assert rs.canonicalize("http://c.com/?utm_source=1") == "http://c.com/"


def test_the_every_host_bound_is_clopper_pearson_and_takes_many_sites():
    from dustonline.learner.scope import veto_bound

    for n in (1, 16, 40, 500):  # no veto: the bound has the closed form 1 - alpha^(1/n)
        assert veto_bound(0, n, 0.125) == pytest.approx(1 - 0.125 ** (1 / n), abs=1e-9)
    assert veto_bound(1, 28, 0.125) < 0.125 < veto_bound(1, 27, 0.125)  # one veto: 28 sites
    assert 0.06 < veto_bound(300, 5000, 0.125) < 0.07  # thousands of sites: no overflow
    assert veto_bound(3, 3, 0.125) == 1.0


def test_a_name_vetoed_on_very_many_hosts_keeps_no_except_list():
    """State stays bounded: past MAX_EXCEPT vetoing hosts a name's list is dropped, and
    the name is never a rule of every host again."""
    from dustonline.learner import scope

    lrn = learner()
    every = lrn.params.every
    every.vetoed("id", [f"h{i}.com" for i in range(scope.MAX_EXCEPT)])
    assert len(every.recs.get("id").except_hosts) == scope.MAX_EXCEPT
    every.vetoed("id", ["one-more.com"])
    rec = every.recs.get("id")
    assert rec.full and rec.except_hosts == []
    assert every.judge("id", 100_000, 0) is None and "id" not in every.active


def test_the_key_index_of_dropped_names_is_built_once_a_change_not_once_a_url():
    """The keys of each host's validation URLs under its dropped names are checked for
    every URL that comes, so they live in the store (keyindex.py). Kept in memory under
    the host URLs' cap, a window holding more URLs than the cap dropped a host's index and
    built it again from all its URLs on nearly every URL (85% of a 1M-event run). Here the
    hosts hold several times the cap: each index is built once, then counted."""
    cap = 40
    lrn = OnlineLearner(config_from_dict({**CFG, "storage": {"cache_entries": cap}}))
    t = Clock()
    hosts = ("a.com", "b.com", "c.com", "d.com")
    for host in hosts:
        learn(lrn, tracked_site(host, 4, t))
    assert set(param_rules(lrn)) == {"utm_source"}
    built = lrn.params.keys.builds
    for i in range(4, 28, 4):
        for host in hosts:
            learn(lrn, tracked_site(host, 4, t, offset=i))
    held = sum(1 for _, rec in lrn.window.urls.items() if rec.validates)
    assert held > 2 * cap  # more than the cap holds
    assert lrn.params.keys.builds - built <= len(hosts)
    assert set(param_rules(lrn)) == {"utm_source"}  # no collision invented on the way


def test_the_key_index_still_vetoes_a_collision_on_a_host_past_the_cap():
    """The index in the store keeps its job past the cap: a URL whose key under the
    dropped names is another cluster's vetoes the name."""
    cap = 40
    lrn = OnlineLearner(config_from_dict({**CFG, "storage": {"cache_entries": cap}}))
    t = Clock()
    for host in ("a.com", "b.com", "c.com", "d.com"):
        learn(lrn, tracked_site(host, 24, t))

    def dropping() -> set[str]:
        return {h for r in lrn.rules() if r.drop_param == "utm_source" for h in r.hosts}

    assert dropping() == {"a.com", "b.com", "c.com", "d.com"}
    learn(lrn, [page("a.com", f"/story/{i}", "other text", t, "?utm_source=zz") for i in range(3)])
    assert dropping() == {"b.com", "c.com", "d.com"}
