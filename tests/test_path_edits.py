"""Path-edit rules (``Rule.normalize``): a trailing slash, an empty query or a last path
segment such as ``index.html`` that a site ignores, applied after the parameter rules
and before rewrite rules (docs/formats.md, Order). The learner's side is in
tests/test_params.py."""

import msgspec
import pytest

from dustonline.rules.merge import merge
from dustonline.rules.params import applied_edits, apply_edits, check_edit
from dustonline.rules.ruleset import RETIRED, Rule, RuleSet

ALL = {"trailing-slash", "empty-query", "last-segment:index.html"}
CASE = {"lowercase-path", "last-segment:index.html"}


@pytest.mark.parametrize(
    "url,out",
    [
        ("http://x.com/a/", "http://x.com/a"),
        ("http://x.com/", "http://x.com/"),  # the root keeps its slash
        ("http://x.com", "http://x.com"),
        ("http://x.com/a/index.html", "http://x.com/a"),
        ("http://x.com/index.html", "http://x.com/"),
        ("http://x.com/a/xindex.html", "http://x.com/a/xindex.html"),  # whole segments only
        ("http://x.com/index.html/a", "http://x.com/index.html/a"),  # the last one only
        ("http://x.com/a/?", "http://x.com/a"),
        ("http://x.com/a?#f", "http://x.com/a#f"),
        ("http://x.com/a?b", "http://x.com/a?b"),  # a query that is not empty stays
        ("http://x.com/a/index.html?q=1", "http://x.com/a?q=1"),
        ("http://x.com/a#/b/", "http://x.com/a#/b/"),  # the fragment is not the path
        ("http://x.com?", "http://x.com"),
    ],
)
def test_apply_edits(url, out):
    assert apply_edits(url, ALL) == out


@pytest.mark.parametrize(
    "url,out",
    [
        ("http://X.com/A/B%2Fc?Q=A#F", "http://X.com/a/b%2fc?Q=A#F"),  # the path only
        ("http://x.com/A/Index.html", "http://x.com/a/"),  # lowered first, then the segment
        ("http://x.com/ÉtÉ", "http://x.com/ÉtÉ"),  # ASCII letters only
    ],
)
def test_lowercase_path(url, out):
    assert apply_edits(url, CASE) == out


@pytest.mark.parametrize(
    "url,out",
    [
        ("http://X.com/A?ID=B&Sort=Up#F", "http://X.com/A?id=B&sort=Up#F"),  # names only
        ("http://x.com/a?A&B=&=C", "http://x.com/a?a&b=&=C"),  # bare parts and empty names
        ("http://x.com/a?ÉTÉ=1", "http://x.com/a?ÉtÉ=1"),  # ASCII letters only
        ("http://x.com/A?", "http://x.com/A?"),
        ("http://x.com/A#Q=B", "http://x.com/A#Q=B"),  # no query: the fragment is not one
        ("http://x.com/a?X=Y=Z", "http://x.com/a?x=Y=Z"),  # the name ends at the first "="
    ],
)
def test_lowercase_query_names(url, out):
    assert apply_edits(url, {"lowercase-query-names"}) == out


@pytest.mark.parametrize(
    "url,out",
    [
        ("http://x.com/a?b=2&a=1#z=0&y=1", "http://x.com/a?a=1&b=2#z=0&y=1"),  # the query only
        ("http://x.com/a?b=1&a=2&b=0&a=1", "http://x.com/a?a=2&a=1&b=1&b=0"),  # a name's parts keep their order
        ("http://x.com/a?b&a=&=c&&A=1", "http://x.com/a?=c&&A=1&a=&b"),  # by code point; bare and empty names
        ("http://x.com/a?é=1&z=2", "http://x.com/a?z=2&é=1"),
        ("http://x.com/a?x=b=2&x=a", "http://x.com/a?x=b=2&x=a"),  # the name ends at the first "="
        ("http://x.com/a?b=1", "http://x.com/a?b=1"),
        ("http://x.com/a?", "http://x.com/a?"),
    ],
)
def test_sort_query(url, out):
    assert apply_edits(url, {"sort-query"}) == out


def test_sort_query_compares_names_as_lowercase_query_names_leaves_them():
    edits = {"lowercase-query-names", "sort-query", "empty-query"}
    assert apply_edits("http://x.com/a?b=1&A=2", edits) == "http://x.com/a?a=2&b=1"
    assert applied_edits("http://x.com/a?b=1&A=2", edits) == ["lowercase-query-names", "sort-query"]
    assert apply_edits("http://x.com/a?b=1&A=2", {"sort-query"}) == "http://x.com/a?A=2&b=1"


def test_lowercase_path_and_names_together():
    both = {"lowercase-path", "lowercase-query-names", "empty-query", "last-segment:default.aspx"}
    assert apply_edits("http://x.com/A/Default.aspx?ArticleId=9", both) == "http://x.com/a/?articleid=9"
    assert applied_edits("http://x.com/A/?Q=1", both) == ["lowercase-path", "lowercase-query-names"]


def test_edits_apply_in_one_documented_order():
    assert applied_edits("http://x.com/a/index.html?", ALL) == [
        "empty-query",
        "last-segment:index.html",
        "trailing-slash",
    ]
    assert apply_edits("http://x.com/a/index.html", {"last-segment:index.html"}) == "http://x.com/a/"
    assert apply_edits("http://x.com/a/index.html", {"trailing-slash"}) == "http://x.com/a/index.html"


@pytest.mark.parametrize(
    "url,out",
    [
        ("http://x.com/app.js?o4jxx5", "http://x.com/app.js"),  # a cache buster
        ("http://x.com/app.js?3.5.12#f", "http://x.com/app.js#f"),
        ("http://x.com/a?amp", "http://x.com/a?amp"),  # a word: it may select content
        ("http://x.com/a?amp&o4jxx5", "http://x.com/a?amp"),
        ("http://x.com/a?id=7&o4jxx5&x=1", "http://x.com/a?id=7&x=1"),  # a part with = stays
        ("http://x.com/a?x=1&&2", "http://x.com/a?x=1&"),  # empty parts stay, as drop_params keeps them
        ("http://x.com/a?\u0661", "http://x.com/a?\u0661"),  # ASCII digits only
        ("http://x.com/a?", "http://x.com/a?"),
    ],
)
def test_bare_tokens(url, out):
    assert apply_edits(url, {"bare-tokens"}) == out


def test_bare_tokens_go_before_the_empty_query_edit():
    assert apply_edits("http://x.com/a?o4jxx5", {"bare-tokens", "empty-query", "sort-query"}) == "http://x.com/a"
    assert applied_edits("http://x.com/a?b=1&o4jxx5", {"bare-tokens", "sort-query"}) == ["bare-tokens"]


@pytest.mark.parametrize(
    "edit,ok",
    [
        ("trailing-slash", True),
        ("lowercase-path", True),
        ("lowercase-query-names", True),
        ("empty-query", True),
        ("sort-query", True),
        ("bare-tokens", True),
        ("bare-token", False),
        ("last-segment:default.aspx", True),
        ("last-segment:", False),
        ("last-segment:a/b", False),
        ("last-segment:a?b", False),
        ("lowercase", False),
    ],
)
def test_check_edit(edit, ok):
    assert check_edit(edit) is ok


def edit_rule(rid, edit, hosts=("x.com",), **kw):
    return Rule(id=rid, hosts=list(hosts), context="", transformation="", normalize=edit, support=3, **kw)


RULES = [
    edit_rule("e-slash", "trailing-slash"),
    edit_rule("e-index", "last-segment:index.html"),
    Rule(id="p", hosts=["x.com"], context="", transformation="", drop_param="sid", support=3),
    Rule(id="h", hosts=["www.x.com"], context="", transformation="", canonical_host="x.com", support=3),
    Rule(
        id="r",
        hosts=["x.com"],
        context=r"^http\:\/\/x\.com\/news\/([0-9]+)\/$",
        transformation="http://x.com/n/$1",
        support=9,
    ),
]


@pytest.mark.parametrize(
    "url,key,decides",
    [
        ("http://www.x.com/a/index.html?sid=1", "http://x.com/a", "p"),
        ("http://x.com/a/", "http://x.com/a", "e-slash"),
        ("http://x.com/a/index.html", "http://x.com/a", "e-index"),
        # a rewrite rule learned with the slash in its context still decides: tried on the
        # URL as given when none applies to the edited one
        ("http://x.com/news/7/", "http://x.com/n/7", "r"),
        ("http://other.com/a/", "http://other.com/a/", None),
    ],
)
def test_path_edits_come_after_parameters_and_before_rewrites(url, key, decides):
    rs = RuleSet(RULES)
    assert rs.canonicalize(url) == key
    rule, k = rs.explain(url)
    assert k == key and (rule.id if rule else None) == decides
    assert rs.canonicalize(key) == key


def test_a_bad_edit_from_outside_is_refused_and_a_retired_one_stops():
    rs = RuleSet([edit_rule("e", "last-segment:../x"), *RULES])
    assert rs.refused == {"bad-edit": 1}
    assert rs.upsert(edit_rule("e-slash", "trailing-slash", status=RETIRED, version=2))
    assert rs.canonicalize("http://x.com/a/") == "http://x.com/a/"


def test_partitions_merge_edit_rules_by_their_edit():
    m = merge({"0": edit_rule("e", "trailing-slash"), "1": edit_rule("e", "trailing-slash", hosts=["www.x.com"])})
    assert m.normalize == "trailing-slash" and m.hosts == ["www.x.com", "x.com"] and m.support == 6


# a parameter-order rule, as the learner writes one: both orders of id and page, written sorted
ORDER_RULE = Rule(
    id="o",
    hosts=["x.com", "y.com"],
    context=r"^([^?#]*)\?(?:(id)\=([0-9]+)\&(page)\=([0-9]+)|(page)\=([0-9]+)\&(id)\=([0-9]+))$",
    transformation="$1?$2$8=$3$9&$4$6=$5$7",
    support=20,
    subsumed_by="sort-query",
)
MIRROR_RULE = Rule(
    id="m",
    hosts=["x.com", "y.com"],
    context=r"^http\:\/\/([a-z]+)\.com(?:\/mirror1)?\/story\?id\=([0-9]+)\&page\=1$",
    transformation="http://$1.com/story?id=$2&page=1",
    support=5,
)


def test_a_rule_a_path_edit_subsumes_is_not_tried_where_the_host_has_the_edit():
    """On x.com the query is sorted, so the order rule would leave every URL as it is yet,
    ranked first, decide it: the mirror rule behind it would never be tried. On y.com,
    without the edit, the order rule is what orders the query."""
    rs = RuleSet([ORDER_RULE, MIRROR_RULE, edit_rule("s", "sort-query")])
    assert rs.canonicalize("http://x.com/mirror1/story?page=1&id=7") == "http://x.com/story?id=7&page=1"
    rule, _key = rs.explain("http://x.com/mirror1/story?id=7&page=1")
    assert rule is not None and rule.id == "m"
    assert rs.canonicalize("http://y.com/story?page=1&id=7") == "http://y.com/story?id=7&page=1"
    assert rs.explain("http://y.com/mirror1/story?id=7&page=1")[0].id == "o"  # decided (as itself) first
    # without the field, as a reader that predates it: the order rule decides on x.com too
    plain = RuleSet(
        [msgspec.structs.replace(ORDER_RULE, subsumed_by=msgspec.UNSET), MIRROR_RULE, edit_rule("s", "sort-query")]
    )
    assert plain.canonicalize("http://x.com/mirror1/story?id=7&page=1") == "http://x.com/mirror1/story?id=7&page=1"


@pytest.mark.parametrize(
    "fields",
    [
        {"subsumed_by": "trailing-slash"},  # an edit that subsumes no rewrite rule
        {"subsumed_by": "sort-query", "context": "", "transformation": "", "drop_param": "sid"},
    ],
)
def test_subsumed_by_is_refused_outside_a_rewrite_rule_or_naming_another_edit(fields):
    rs = RuleSet([msgspec.structs.replace(ORDER_RULE, **fields)])
    assert rs.refused == {"bad-edit": 1} and len(rs) == 0


def test_partitions_merge_keeps_subsumed_by():
    m = merge({"0": ORDER_RULE, "1": msgspec.structs.replace(ORDER_RULE, hosts=["z.com"])})
    assert m.subsumed_by == "sort-query" and m.hosts == ["x.com", "y.com", "z.com"]
