"""Re-targeting parts: a rule adopting another's target (adopt.py), the rule-set check
and incumbent keys (keycheck.py), and the URLs re-targeting and redundancy read. The rules
are the two goumai.com rules of the re-targeting trace in docs/history.md: each valid,
with different targets."""

from dustonline.learner.adopt import adopt, group_spans, pin_groups
from dustonline.learner.keycheck import incumbent_keys, set_gain
from dustonline.rules.ruleset import Rule

HEAD = r"^([^/?=&#;:.]+)\:\/\/([^/?=&#;:.]+)\.([^/?=&#;:.]+)\.([^/?=&#;:.]+)\/([^/?=&#;:.]+?)(?:\?id)?(?:\=|_)([0-9]+)"
# the print forms (and the main URL) -> story=N&page=<page or print value>
PRINT = Rule(
    id="r-print",
    hosts=["www.g.com"],
    transformation="$1://$2.$3.$4/$5=$6&page=$7",
    context=HEAD + r"(?:\&page\=1|\.html)?(?:\&print|\?print|\&page)\=([^/?=&#;:.]+)$",
).compile()
# the main URL and its alias path -> story_N
ALIAS = Rule(
    id="r-alias",
    hosts=["www.g.com"],
    transformation="$1://$2.$3.$4/$5_$6",
    context=HEAD + r"(?:\.html\?print\=1|\&page\=1|\.html)?$",
).compile()


def main(n):
    return f"https://www.g.com/story?id={n}&page=1"


def test_adopt_copies_the_groups_that_hold_the_same_text():
    made = adopt(ALIAS, [(f"https://www.g.com/story_{n}.html", PRINT, main(n) + "&print=1") for n in (5, 77, 1234)])
    assert made == (ALIAS.rule.context, "$1://$2.$3.$4/$5=$6&page=1")  # page=1: the same text every time
    r = Rule(id="x", hosts=["www.g.com"], context=made[0], transformation=made[1]).compile()
    assert r.apply("https://www.g.com/story_99.html") == PRINT.apply(main(99) + "&print=1")


def test_adopt_pins_the_groups_it_no_longer_copies():
    """ALIAS drops the page value: PRINT adopting ALIAS's target keeps only page=1 URLs,
    so it never keys page 2 with page 1, and never keys together what it kept apart."""
    made = adopt(PRINT, [(main(n) + "&print=1", ALIAS, main(n)) for n in (5, 77, 1234)])
    assert made is not None and made[1] == "$1://$2.$3.$4/$5_$6"
    assert made[0].endswith(r"\=(1)$") and made[0].count("(") == PRINT.rule.context.count("(")
    r = Rule(id="x", hosts=["www.g.com"], context=made[0], transformation=made[1]).compile()
    assert r.apply(main(9) + "&print=1") == ALIAS.apply(main(9))
    assert r.apply("https://www.g.com/story?id=9&page=2") is None


def test_adopt_refuses_what_no_single_transformation_explains():
    other = [(main(5) + "&print=1", ALIAS, main(5)), (main(6) + "&print=1", ALIAS, main(7))]  # a wrong partner
    assert adopt(PRINT, other) is None
    assert adopt(PRINT, [("https://www.g.com/nothing", ALIAS, main(5))]) is None


def test_pin_groups_keeps_the_numbering():
    ctx = r"^(a|b)(?:x(y))?([^/?]+)\.(?:z)$"
    assert group_spans(ctx) == {1: (2, 5), 2: (11, 12), 3: (16, 22)}
    assert pin_groups(ctx, {3: "q.1"}) == r"^(a|b)(?:x(y))?(q\.1)\.(?:z)$"


def _set(*rules):
    return lambda host: [(r.rule.id, r) for r in rules]


def test_set_gain_counts_new_same_cluster_pairs_and_refuses_splits_and_wrong_merges():
    urls = [(main(5), "c5"), (main(5) + "&print=1", "c5"), ("https://www.g.com/story_5.html", "c5")]
    adopted = Rule(
        id="r-alias", hosts=["www.g.com"], context=ALIAS.rule.context, transformation="$1://$2.$3.$4/$5=$6&page=1"
    ).compile()
    old, new = _set(PRINT, ALIAS), _set(PRINT, adopted)
    assert set_gain(urls, old, new) == 2  # story_5.html joins the two others
    assert set_gain(urls, new, old) == -1  # the other way round splits them
    wrong = urls + [("https://www.g.com/story=5&page=1", "other")]  # a URL of another page with that key
    assert set_gain(wrong, old, new) == -1


def test_incumbent_keys_do_not_depend_on_url_order():
    urls = {
        main(5): "c5",
        main(5) + "&print=1": "c5",
        "https://www.g.com/story_5.html": "c5",
        main(6): "c6",
        "https://www.g.com/story_6.html": "c6",
    }
    rules = _set(ALIAS, PRINT)  # ALIAS first: it decides the main URLs and the alias paths
    older = {"r-print"}.__contains__
    a = incumbent_keys("r-alias", ["www.g.com"], rules, lambda h: list(urls.items()), older)
    b = incumbent_keys("r-alias", ["www.g.com"], rules, lambda h: list(reversed(urls.items())), older)
    assert sorted(a[0]) == sorted(b[0]) and a[1] == b[1]
    # the keys the older rule alone gives the clusters' URLs, those ALIAS decides included
    assert a[1] == {
        "c5": {"https://www.g.com/story=5&page=1": ("r-print", main(5))},
        "c6": {"https://www.g.com/story=6&page=1": ("r-print", main(6))},
    }


def test_a_rule_of_two_sites_takes_the_keys_it_can_where_others_it_cannot():
    """A younger rule of two sites meets older rules' keys on both: on a.com keys it cannot
    give (the legacy numbers are not in its URLs), on b.com keys it can. It takes b.com's,
    though a.com shows it more examples, and keeps its own form on a.com."""
    from dustonline import OnlineLearner
    from dustonline.learner.clusters import url_key
    from dustonline.rules.urls import site_of_host

    lrn = OnlineLearner()
    book = lrn.book

    def active(rid, hosts, context, transformation, support, since):
        rec = book.new(rid, group="g", context=context, transformation=transformation, hosts=hosts, freq=5)
        rec.status, rec.since, rec.pub = "active", since, [support, 0.0, 5]
        book.install(rec)

    seg = "([^/?=&#;:.]+)"
    active(
        "r-young",
        ["www.a.com", "www.b.com"],
        rf"^(http)\:\/\/(www)\.{seg}\.(com)\/{seg}\.(php)\?(id)\=([0-9]+)$",
        "$1://$2.$3.$4/$5.$6?$7=$8",
        50,
        10,
    )
    active("r-a", ["www.a.com"], r"^http\:\/\/www\.a\.com\/legacy\/([0-9]+)$", "http://www.a.com/legacy/$1", 10, 1)
    active("r-b", ["www.b.com"], r"^http\:\/\/www\.b\.com\/items\/([0-9]+)\/$", "http://www.b.com/items/$1", 10, 2)
    pages = [
        ("www.a.com", f"a{i}", f"/x.php?id={n}", f"/legacy/{900 + 7 * i}") for i, n in enumerate((5, 77, 1234, 8, 9))
    ]
    pages += [("www.b.com", f"b{n}", f"/item.php?id={n}", f"/items/{n}/") for n in (5, 77, 1234)]
    for host, cid, *paths in pages:
        for path in paths:
            url = f"http://{host}{path}"
            lrn.window.add(url_key(host, url), site_of_host(host), cid, 1.7e9, True)
    lrn.marks.rules.add("r-young")
    lrn.retargeter.run()
    target = book["r-young"].rec.target
    assert target is not None and target.by == ["r-b"] and target.hosts == ["www.b.com"]
    rs = lrn.ruleset()
    assert rs.canonicalize("http://www.b.com/item.php?id=42") == "http://www.b.com/items/42"
    assert rs.canonicalize("http://www.a.com/x.php?id=42") == "http://www.a.com/x.php?id=42"


def test_a_rule_reads_the_urls_of_a_page_as_the_rule_set_hands_them_over():
    """A page fetched over http and https, on a site with a scheme rule: the older rule
    keys both forms alike once RuleSet has read http as https, and the younger rule takes
    that key. Read as fetched, the older rule gave the page an http and an https key, a
    page fetched over https alone gave only the latter, and no target gave every page its
    key: the two rules kept splitting the site's pages."""
    from dustonline import FetchEvent, OnlineLearner
    from dustonline.learner.clusters import url_key
    from dustonline.rules.urls import site_of_host

    lrn = OnlineLearner()
    host = "www.s.com"
    t = [1.7e9]
    for i in range(4):  # one page per path over both schemes: the site's scheme rule
        for scheme in ("http", "https"):
            t[0] += 60
            lrn.learn_one(FetchEvent(url=f"{scheme}://{host}/doc/{i}", ts=t[0], digest=f"sha1:doc{i}"))
    lrn.flush()
    assert [r.hosts for r in lrn.rules() if r.canonical_scheme] == [[host]]
    book = lrn.book

    def active(rid, context, transformation, support, since):
        rec = book.new(rid, group="g", context=context, transformation=transformation, hosts=[host], freq=5)
        rec.status, rec.since, rec.pub = "active", since, [support, 0.0, 5]
        book.install(rec)

    head = r"^(https?)\:\/\/(www)\.(s)\.(com)\/"
    active("r-old", head + r"(?:article\.php\?id\=|a\/)([0-9]+)$", "$1://$2.$3.$4/a/$5", 10, 1)
    active("r-young", head + r"([a-z]+)\.(php)\?(id)\=([0-9]+)$", "$1://$2.$3.$4/$5.$6?$7=$8", 50, 10)
    pages = {n: ["http", "https"] for n in (5, 77)} | {1234: ["https"]}
    for n, schemes in pages.items():
        urls = [f"{s}://{host}/article.php?id={n}" for s in schemes] + [f"https://{host}/a/{n}"]
        for url in urls:
            lrn.window.add(url_key(host, url), site_of_host(host), f"c{n}", t[0], True)
            lrn.host_urls.add(host, url, f"c{n}")  # loaded while the site learned its scheme
    lrn.marks.rules.add("r-young")
    lrn.retargeter.run()
    target = book["r-young"].rec.target
    assert target is not None and target.by == ["r-old"]
    rs = lrn.ruleset()
    for url in ("http://www.s.com/article.php?id=42", "https://www.s.com/article.php?id=42", "https://www.s.com/a/42"):
        assert rs.canonicalize(url) == "https://www.s.com/a/42", url


def test_redundancy_reads_the_urls_as_the_rule_set_hands_them_over():
    """Every URL of the site carries a click id that its parameter rule drops, so its
    rewrite rules are learned on URLs without it. A new rule that matches no URL as
    fetched was "refined" by any rule that does (vacuously) and left out as redundant;
    read as RuleSet hands them over, its URLs show it is not."""
    from streams import tracked_pages

    from dustonline import OnlineLearner
    from dustonline.config import config_from_dict
    from dustonline.learner.clusters import url_key
    from dustonline.rules.urls import site_of_host

    lrn = OnlineLearner(config_from_dict({"learning": {"min_freq": 3, "min_supp": 3}}))
    host, ts = "www.s.com", [1.7e9]
    for ev in tracked_pages(host, 3, ts, "clkid"):
        lrn.learn_one(ev)
    lrn.flush()
    assert [r.hosts for r in lrn.rules() if r.drop_param == "clkid"] == [[host]]
    book = lrn.book
    for rid, status, context, transformation in (
        ("r-strip", "active", r"^(http\:\/\/www\.s\.com\/[^?]*)\?clkid\=[a-z]+$", "$1"),
        (
            "r-new",
            "candidate",
            r"^(http)\:\/\/(www)\.(s)\.(com)\/story_([0-9]+)\.html$",
            "$1://$2.$3.$4/story?id=$5&page=1",
        ),
    ):
        rec = book.new(rid, group="g", context=context, transformation=transformation, hosts=[host], freq=5)
        rec.status, rec.since, rec.pub = status, 1, [10, 0.0, 5]
        book.install(rec)
    for n in (5, 6):
        for url in (f"/story_{n}.html?clkid=aaa", f"/story_{n}.html?clkid=bbb", f"/story?id={n}&page=1&clkid=ccc"):
            url = f"http://{host}{url}"
            lrn.window.add(url_key(host, url), site_of_host(host), f"c{n}", ts[0], True)
            lrn.host_urls.add(host, url, f"c{n}")
    assert not lrn.lifecycle._redundant("r-new")
