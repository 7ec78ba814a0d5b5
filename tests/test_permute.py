"""Parameter-order rules (permute.py, kvrules.py): evidence, rendering, and the learner end to end."""

import hashlib
import random
import re

import pytest

from dustonline import FetchEvent, OnlineLearner, rocks_store
from dustonline.config import config_from_dict
from dustonline.learner.align import Consensus, add_url
from dustonline.learner.induce import parts_of
from dustonline.learner.kvrules import evidence, variant
from dustonline.learner.paramorder import one_order, order_rule
from dustonline.rules.ruleset import Rule

CFG = {"learning": {"min_freq": 5, "min_supp": 5}}
CATS = ["office", "tools", "audio"]


def digest(s: str) -> str:
    return "sha1:" + hashlib.sha1(s.encode()).hexdigest().upper()


def catalog_stream(host="s.com", pages=150, order_matters=False, seed=1, start=1.7e9):
    """Catalog pages ``?cat=..&item=..``; every other page also linked with the
    parameters reversed, every third under a cookieless session path. With
    ``order_matters`` half of the reversed URLs are another page (other content)."""
    rnd = random.Random(seed)
    evs, t = [], start
    for i in range(pages):
        c = CATS[i % 3]
        urls = [f"http://{host}/catalog.asp?cat={c}&item={i}"]
        if i % 2 == 0:
            urls.append(f"http://{host}/catalog.asp?item={i}&cat={c}")
        if i % 3 == 0:
            urls.append(f"http://{host}/(S({rnd.getrandbits(48):x}))/catalog.asp?cat={c}&item={i}")
        for u in urls:
            t += 60
            other = order_matters and "?item" in u and i % 4 == 0
            evs.append(FetchEvent(url=u, ts=t, digest=digest(f"{host}{i}{'rev' if other else ''}")))
    return evs


def learned(events, cfg=CFG, store=None):
    learner = OnlineLearner(config_from_dict(cfg), store)
    learner.learn_many(events)
    return learner


def _rule(context, transformation):
    return Rule(id="r", hosts=["s.com"], context=context, transformation=transformation).compile()


# ---------------------------------------------------------------- units
def test_evidence_is_a_key_set_listed_in_two_orders_with_equal_values():
    h = ["s.com"]
    ev = evidence(["http://s.com/c?item=7&cat=a", "http://s.com/(S(x))/c?cat=a&item=7&sid=9"], h)
    assert ev == [["o\x1ecat\x1fitem", h, [["item", "cat"]], [2, 1]]]  # bits: letters, digits
    assert evidence(["http://s.com/c?cat=a&item=7", "http://s.com/c?cat=a&item=7&sid=9"], h) is None  # same order
    assert evidence(["http://s.com/c?item=7&cat=a", "http://s.com/c?cat=b&item=7"], h) is None  # values differ
    assert evidence(["http://s.com/c?a=1&a=2", "http://s.com/c?a=2&a=1"], h) is None  # a list: order may matter


def test_standalone_rule_writes_every_seen_order_sorted():
    ctx, tr = order_rule(["cat", "item"], [["item", "cat"]], [2, 1])
    r = _rule(ctx, tr)
    assert r.apply("http://s.com/c?item=7&cat=a") == "http://s.com/c?cat=a&item=7"
    assert r.apply("http://s.com/c?cat=a&item=7") == "http://s.com/c?cat=a&item=7"
    assert r.apply("http://s.com/c?item=x&cat=a") is None  # outside the values' classes
    assert r.apply("http://s.com/c?item=7&cat=a&page=2") is None  # another key set


def test_variant_folds_the_order_into_an_aligned_rule():
    cons = add_url(
        Consensus.of_url("http://s.com/catalog.asp?cat=a&item=7"), "http://s.com/(S(abc))/catalog.asp?cat=a&item=7"
    )
    parts = parts_of(cons)
    ctx, tr = variant(parts, [[["cat", "item"], [["item", "cat"]], [2, 1]]], lower=False, card_set=5)
    r = _rule(ctx, tr)
    want = "http://s.com/catalog.asp?cat=tools&item=99"
    for url in (
        "http://s.com/catalog.asp?item=99&cat=tools",
        "http://s.com/(S(abc))/catalog.asp?item=99&cat=tools",
        "http://s.com/(S(abc))/catalog.asp?cat=tools&item=99",
        want,
    ):
        assert r.apply(url) == want, url
    # other keys keep their order, as the aligned rule did
    assert r.apply("http://s.com/x.asp?b=1&a=2") == "http://s.com/x.asp?b=1&a=2"
    assert (
        variant(parts, [[["a", "b", "c"], [["c", "b", "a"]], [1, 1, 1]]], lower=False, card_set=5) is None
    )  # 3 keys, 2 pairs


def test_no_variant_whose_references_would_read_differently():
    """ "$1" then a literal "0a" is group 1 while the rule has 1 group, group 10 once the
    branches make 13 (Java's reading, and ours): such a variant is not made."""
    query = [
        ("L", "?"),
        ("C", False),
        ("L", "="),
        ("C", False),
        ("L", "&"),
        ("C", False),
        ("L", "="),
        ("C", False),
        ("L", "&"),
        ("C", False),
        ("L", "="),
        ("C", False),
    ]
    perm = [[["a", "b", "c"], [["c", "b", "a"]], [1, 1, 1]]]
    assert variant([("C", False), ("V", ("0a", "0b"), "0a")] + query, perm, lower=False, card_set=5) is None
    assert variant([("C", False), ("V", ("xa", "xb"), "xa")] + query, perm, lower=False, card_set=5) is not None


# ---------------------------------------------------------------- the learner
def test_learner_merges_parameter_orders_of_unseen_pages():
    learner = learned(catalog_stream())
    rs = learner.ruleset()
    key = rs.canonicalize("http://s.com/catalog.asp?cat=tools&item=999")
    assert rs.canonicalize("http://s.com/catalog.asp?item=999&cat=tools") == key
    assert rs.canonicalize("http://s.com/(S(f00d))/catalog.asp?item=999&cat=tools") == key  # composed
    assert rs.canonicalize("http://s.com/catalog.asp?item=998&cat=tools") != key
    assert rs.canonicalize("http://s.com/catalog.asp?item=999&cat=audio") != key
    assert all(r.fpr == 0.0 for r in rs.rules())


def test_no_rule_when_parameter_order_matters():
    """Some reversed URLs are duplicates (evidence), but validation shows others are
    distinct pages: the permutation rule stays a candidate and nothing is derived."""
    learner = learned(catalog_stream(order_matters=True))
    perm = [c for c in learner.candidates() if c["group"].startswith("kv:")]
    assert perm and all(c["status"] != "active" for c in perm)
    assert perm[0]["nci"] < perm[0]["nsupp"]
    rs = learner.ruleset()
    assert not any("(item)" in r.context for r in rs.rules())
    assert rs.canonicalize("http://s.com/catalog.asp?item=999&cat=tools") != rs.canonicalize(
        "http://s.com/catalog.asp?cat=tools&item=999"
    )


def test_permutation_rules_retire_when_their_evidence_leaves_the_window():
    cfg = {"learning": {"min_freq": 5, "min_supp": 5}, "window": {"seconds": 86400.0, "sweep_every": 3600.0}}
    old = catalog_stream()
    later = [
        FetchEvent(url=f"http://t.org/p/{i}", ts=old[-1].ts + 2 * 86400 + i, digest=digest(f"t{i}")) for i in range(50)
    ]
    learner = learned(old, cfg)
    assert any("(item)" in r.context for r in learner.rules())
    learner.learn_many(later)
    assert not any(c["group"].startswith("kv:") for c in learner.candidates())
    assert not any("(item)" in r.context for r in learner.rules())


@pytest.mark.parametrize("cut", [250, 700])
def test_recovery_derives_the_same_kv_rules(tmp_path, cut):
    events = (
        catalog_stream(pages=200)
        + catalog_stream("u.net", pages=200, seed=2, start=1.7e9 + 30)
        + caps_stream("c.org", pages=200, start=1.7e9 + 20)
    )
    events.sort(key=lambda e: e.ts)
    whole = learned(events)
    path = tmp_path / "state"
    first = OnlineLearner(config_from_dict(CFG), rocks_store(path, cache_entries=64))
    for ev in events[:cut]:
        first.learn_one(ev)
    first.checkpoint()
    first.store.close()
    second = OnlineLearner(config_from_dict(CFG), rocks_store(path, cache_entries=64))
    second.learn_many(events[cut:])
    got = [(r.id, r.version, r.support, r.context) for r in second.rules()]
    assert got == [(r.id, r.version, r.support, r.context) for r in whole.rules()]
    assert any("(item)" in c for *_, c in got)
    assert any(":lower}" in r.transformation for r in second.rules())
    second.store.close()


# ---------------------------------------------------------------- letter case
SECTIONS = ["News", "Sports", "World", "Local"]


def caps_stream(host="a.com", pages=160, lower_aliases=True, case_matters=False, seed=3, start=1.7e9):
    """Capitalized sections, session-id aliases on every page; with ``lower_aliases``
    every other page also linked in lower case (a case-insensitive server). With
    ``case_matters`` a quarter of those lower-case URLs are other pages."""
    rnd = random.Random(seed)
    evs, t = [], start
    for i in range(pages):
        path = f"/{SECTIONS[i % 4]}/story-{i}"
        urls = [f"http://{host}{path}", f"http://{host}{path}?sid={rnd.getrandbits(48):x}"]
        if lower_aliases and i % 2 == 0:
            urls.append(f"http://{host}{path.lower()}")
        for u in urls:
            t += 60
            other = case_matters and u.islower() and "sid" not in u and i % 8 == 0
            evs.append(FetchEvent(url=u, ts=t, digest=digest(f"{host}{i}{'low' if other else ''}")))
    return evs


JOOMLA = ["option=com_content", "view=article", "id={i}", "catid={c}", "Itemid={m}"]
ORDERS = [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0), (2, 3, 4, 0, 1), (1, 2, 3, 4, 0)]


def joomla_stream(pages=160, host="j.org", start=1.7e9):
    """Articles of a CMS whose links list five parameters in one of four orders."""
    evs, t = [], start
    for i in range(pages):
        pairs = [p.format(i=1000 + i, c=10 + i % 7, m=100 + i % 5) for p in JOOMLA]
        orders = [ORDERS[0]] + ([ORDERS[1 + i % 3]] if i % 2 == 0 else [])
        for order in orders:
            t += 60
            url = f"http://{host}/index.php?" + "&".join(pairs[j] for j in order)
            evs.append(FetchEvent(url=url, ts=t, digest=digest(f"{host}{i}")))
    return evs


def test_one_order_leaves_out_urls_that_list_parameters_in_another_order():
    a = "http://s.com/index.php?option=com_content&view=article&id=7&Itemid=12"
    b = "http://s.com/index.php?Itemid=12&id=7&view=article&option=com_content"
    c = "http://s.com/(S(x))/index.php?option=com_content&view=article&id=7&Itemid=12"
    assert one_order([a, b, c]) == [a, c]
    assert one_order([a, c]) == [a, c]
    assert one_order(["http://s.com/?p=1&q=2", "http://s.com/?p=1"]) == ["http://s.com/?p=1&q=2", "http://s.com/?p=1"]


def test_no_aligned_rule_keeps_a_name_and_drops_the_value_its_target_has():
    """Whatever the alignment, a rule does not write ``name=`` where the URL it keys to
    has a value (``?Itemid=&option=``); a value that is empty in the target stays."""
    a = "http://s.com/index.php?option=com_content&view=article&id=7&catid=3&Itemid=12"
    b = "http://s.com/index.php?Itemid=12&catid=3&id=7&view=article&option=com_content"
    assert parts_of(add_url(Consensus.of_url(a), b)) is None
    parts = parts_of(add_url(Consensus.of_url("http://s.com/a?q=&x=1"), "http://s.com/a?q=abc&x=1"))
    assert parts is not None and ("O", ("abc",)) in parts


def test_a_permuted_query_teaches_no_rule_that_drops_values_and_keeps_names():
    """Aligned token by token, five parameters in two orders put one parameter's value
    under another's name: the rule wrote ``?Itemid=&catid=&id=$N&view=&option=`` (a URL
    no site serves) and merged an article with any other component of the same id. The
    order is a kv rule's to learn, for up to six parameters."""
    learner = learned(joomla_stream())
    rs = learner.ruleset()
    for r in rs.rules():
        assert not re.search(r"[?&][^=&$]*=(&|$)", r.transformation), r
    page = "http://j.org/index.php?option=com_content&view=article&id=5000&catid=11&Itemid=101"
    permuted = "http://j.org/index.php?Itemid=101&catid=11&id=5000&view=article&option=com_content"
    other = "http://j.org/index.php?Itemid=101&catid=11&id=5000&view=login&option=com_users"
    assert rs.canonicalize(permuted) == rs.canonicalize(page)  # sorted: kv rules write it so
    assert rs.canonicalize(other) != rs.canonicalize(page)


def test_case_evidence_and_lowered_paths():
    from dustonline.learner.casefold import case_evidence, path_span, transformation

    assert case_evidence(["http://a.com/News/1?q=A", "http://a.com/news/1?q=A"])
    assert not case_evidence(["http://a.com/News/1?q=A", "http://a.com/News/1?q=a"])  # the query is not the path
    parts = parts_of(add_url(Consensus.of_url("http://a.com/News/s-1"), "http://a.com/News/s-1?sid=9f"))
    assert path_span(parts) == (5, len(parts))
    out, changed = transformation(parts, 5, lower=True)
    assert changed and out == "$1://$2.$3/${4:lower}/${5:lower}"
    assert transformation(parts, 5, lower=False) == ("$1://$2.$3/$4/$5", False)


def test_learner_lowers_paths_on_case_insensitive_sites_only():
    """a.com serves lower-case aliases; b.com has capitals too but none of that
    evidence. One aligned rule (drop the session id) covers both hosts: on a.com it
    lowers the path, on b.com it keeps it, since lowering there could split a page
    between this rule and one that keeps case."""
    events = caps_stream("a.com") + caps_stream("b.com", lower_aliases=False, seed=4, start=1.7e9 + 30)
    events.sort(key=lambda e: e.ts)
    learner = learned(events)
    rs = learner.ruleset()
    key = rs.canonicalize("http://a.com/World/story-999")
    assert key == "http://a.com/world/story-999"
    assert rs.canonicalize("http://a.com/world/story-999") == key
    assert rs.canonicalize("http://a.com/world/story-999?sid=f00d") == key
    assert rs.canonicalize("http://a.com/World/story-998") != key
    assert rs.canonicalize("http://b.com/World/story-999?sid=f00d") == "http://b.com/World/story-999"
    assert all(r.fpr == 0.0 for r in rs.rules())


def test_no_case_rule_when_case_matters():
    learner = learned(caps_stream(case_matters=True))
    case = [c for c in learner.candidates() if c["group"].startswith("kv:c")]
    assert case and all(c["status"] != "active" for c in case)
    assert not any(":lower}" in r.transformation for r in learner.rules())
    rs = learner.ruleset()
    # News is where lower-case URLs are other pages: seen ones and new ones stay apart
    # (a section whose lower-case URLs were all duplicates may keep its own alternation)
    for i in (8, 992):
        assert rs.canonicalize(f"http://a.com/news/story-{i}") != rs.canonicalize(f"http://a.com/News/story-{i}")


def test_kv_rules_name_the_path_edit_that_does_what_they_do():
    """A parameter-order rule is subsumed by sort-query, a path-case rule by
    lowercase-path (RuleSet does not try them where the host has the edit); rules that
    fold an order or a case into an aligned rule do more, and are subsumed by nothing."""
    for learner, group, edit in (
        (learned(catalog_stream()), "kv:o", "sort-query"),
        (learned(caps_stream("a.com")), "kv:c", "lowercase-path"),
    ):
        ids = {c["id"] for c in learner.candidates() if c["group"].startswith(group) and c["status"] == "active"}
        rules = learner.rules()
        assert ids and {r.id for r in rules if r.subsumed_by == edit} == ids
        assert all(not r.subsumed_by for r in rules if r.id not in ids)
