"""RuleBook: the rules topic's three cases (record, retirement, tombstone) without a broker."""

import pytest

from dustonline.rules.book import RuleBook
from dustonline.rules.ruleset import RETIRED, Rule, RuleError, encode_rule

R = Rule(
    id="r-1",
    hosts=["s.com", "www.s.com"],
    context=r"^http://(?:www\.)?s\.com/(\w+)$",
    transformation="http://s.com/$1",
    support=12,
    version=2,
)


def with_(rule, **kw):
    return Rule(**{**{f: getattr(rule, f) for f in rule.__struct_fields__}, **kw})


def test_versions_decide_and_replays_are_harmless():
    book = RuleBook()
    assert book.apply(b"r-1", encode_rule(R)) is True
    assert book.apply(b"r-1", encode_rule(R)) is False  # duplicate delivery
    assert book.apply(b"r-1", encode_rule(with_(R, version=1, context="^x$"))) is False  # older
    assert book.ruleset().canonicalize("http://www.s.com/page") == "http://s.com/page"
    assert book.apply(b"r-1", encode_rule(with_(R, version=3, status=RETIRED))) is True
    assert len(book) == 0 and book.ruleset().canonicalize("http://www.s.com/page") == "http://www.s.com/page"
    assert book.apply(b"r-1", encode_rule(with_(R, version=2))) is False  # retired stays retired


def test_tombstone_forgets_the_id_so_a_relearned_rule_starts_again():
    book = RuleBook([with_(R, version=7)])
    assert book.apply(b"r-1", None) is True
    assert book.rules(retired=True) == []
    assert book.apply(b"r-1", encode_rule(with_(R, version=1))) is True
    assert len(book) == 1


def test_bad_messages_raise_rule_errors():
    book = RuleBook()
    with pytest.raises(RuleError, match="not a rule record"):
        book.apply(b"r-1", b"\xff{")
    with pytest.raises(RuleError, match="not the rule's id"):
        book.apply(b"r-2", encode_rule(R))
    with pytest.raises(RuleError, match="context refused"):
        book.apply(b"r-1", encode_rule(with_(R, context="(")))
    assert len(book) == 0 and book.rules(retired=True) == []


@pytest.mark.parametrize(
    "context",
    ["(" * 3000 + "a" + ")" * 3000, r"^x{4294967296}$"],
    ids=["3000-nested-groups", "huge-repeat"],
)
def test_a_context_the_regex_compiler_gives_up_on_is_a_rule_error(context):
    book = RuleBook()
    with pytest.raises(RuleError, match="context refused"):
        book.apply(b"r-1", encode_rule(with_(R, context=context)))
    assert len(book) == 0


def test_a_tombstone_whose_key_is_not_utf8_is_a_rule_error():
    with pytest.raises(RuleError, match="not UTF-8"):
        RuleBook().apply(b"\xff\xfe", None)
