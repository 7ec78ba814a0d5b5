"""The transformation contract (rules.py): ``$N``/``$$`` as before, plus ``${N:lower}`` and
``${N:upper}`` value conversions (Koppula et al. 2010, Definition 2), ASCII-only."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dustonline.rules.params import lower_ascii, upper_ascii
from dustonline.rules.ruleset import Rule, RuleError, parse_transformation


def _rule(ctx, trans):
    return Rule(id="t", hosts=["x.com"], context=ctx, transformation=trans).compile()


@pytest.mark.parametrize(
    "trans, ngroups, parts",
    [
        ("http://x.com/$1", 1, ["http://x.com/", 1]),
        ("$$1", 1, ["$1"]),
        ("a$$$1b", 1, ["a$", 1, "b"]),
        ("$320", 4, [3, "20"]),  # longest valid group number, as Java's Matcher
        ("$12", 12, [12]),
        ("100%", 0, ["100%"]),
        ("{1:lower}", 0, ["{1:lower}"]),  # braces without '$' are literals
    ],
)
def test_old_transformations_parse_as_before(trans, ngroups, parts):
    assert parse_transformation(trans, ngroups) == parts


def test_old_transformations_apply_as_before():
    r = _rule(r"http://x\.com/([a-z]+)/(\d+)/index\.html", "http://x.com/$1/$2/?p=100%&c=$$")
    assert r.apply("http://x.com/abc/7/index.html") == "http://x.com/abc/7/?p=100%&c=$"
    assert r.apply("http://x.com/abc/7/") is None


def test_lower_and_upper_conversions():
    r = _rule(r"http://x\.com/([^/]+)/([^/]+)/(.*)", "http://x.com/${1:lower}/${2:upper}/$3")
    assert r.apply("http://x.com/RECIPE/Smoers/default.aspx") == "http://x.com/recipe/SMOERS/default.aspx"
    assert parse_transformation("a${1:lower}$1${12:upper}", 12) == ["a", (1, "lower"), 1, (12, "upper")]


def test_conversions_are_ascii_only():
    # U+0130 (İ) and U+00DF (ß) are changed by str.lower/upper and Java's toLowerCase
    # (differently); the contract leaves every non-ASCII character as it is
    r = _rule(r"http://x\.com/(.*)", "http://x.com/${1:lower}")
    assert r.apply("http://x.com/AbİZ") == "http://x.com/abİz"
    r = _rule(r"http://x\.com/(.*)", "http://x.com/${1:upper}")
    assert r.apply("http://x.com/aßz") == "http://x.com/AßZ"


@given(st.text(alphabet="aZz@[`{ßİ\u212a\x7f\x80é", max_size=12))
def test_case_mapping_is_the_ascii_table_on_any_text(text):
    # str.lower/upper on ASCII text (the fast path) must be exactly the A-Z table; the
    # Kelvin sign U+212A lowers to an ASCII "k" under str.lower
    assert lower_ascii(text) == "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)
    assert upper_ascii(text) == "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)


@pytest.mark.parametrize(
    "trans, msg",
    [
        ("x${1:bogus}", "unknown conversion 'bogus'"),
        ("x${1:LOWER}", "unknown conversion"),
        ("x${1:lower", "not closed"),
        ("x${", "not closed"),
        ("x${1}", "not ${N:conversion}"),
        ("x${:lower}", "not ${N:conversion}"),
        ("x${a:lower}", "not ${N:conversion}"),
        ("x${2:lower}", "context has 1 groups"),
        ("x${0:lower}", "context has 1 groups"),
        ("x$a", "neither"),
        ("x$", "neither"),
    ],
)
def test_bad_transformations_are_clear_rule_errors(trans, msg):
    with pytest.raises(RuleError, match="rule t: .*" + msg.replace("$", r"\$").replace("{", r"\{").replace("(", r"\(")):
        _rule(r"http://x\.com/(.*)", trans)
