"""Re-targeting parts: a rule adopting another's target (adopt.py), the rule-set check
and incumbent keys (keycheck.py). The rules are the two goumai.com rules of the re-targeting
trace in docs/history.md: each valid, with different targets."""

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
    a = incumbent_keys("r-alias", ["www.g.com"], rules, lambda h: urls, older)
    b = incumbent_keys("r-alias", ["www.g.com"], rules, lambda h: dict(reversed(urls.items())), older)
    assert sorted(a[0]) == sorted(b[0]) and a[1] == b[1]
    # the keys the older rule alone gives the clusters' URLs, those ALIAS decides included
    assert a[1] == {
        "c5": {"https://www.g.com/story=5&page=1": ("r-print", main(5))},
        "c6": {"https://www.g.com/story=6&page=1": ("r-print", main(6))},
    }
