"""RuleSet.canonicalize: deterministic, total, idempotent where the rule set says so."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustonline import FetchEvent, Rule, RuleSet, learn
from dustonline.config import config_from_dict
from dustonline.rules.ruleset import ENGINES
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
RE2_RULES = RuleSet(RULES, engine="re2")  # the same rules applied by RE2: every key must agree

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
    assert RE2_RULES.canonicalize(text) == out


@given(
    st.sampled_from(["http://", "https://", "HTTP://", "http://www."]),
    st.sampled_from(["a.com", "A.com", "b.org"]),
    url_parts,
)
@settings(max_examples=500)
def test_deterministic_and_order_independent(scheme, host, rest):
    url = scheme + host + "/" + rest
    a, b = RuleSet(RULES), RuleSet(list(reversed(RULES)))
    assert a.canonicalize(url) == a.canonicalize(url) == b.canonicalize(url) == RE2_RULES.canonicalize(url)


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


@pytest.mark.parametrize("engine", ENGINES)
def test_rules_apply_only_to_their_hosts_and_first_by_support(engine):
    rs = RuleSet(RULES, engine=engine)
    assert rs.canonicalize("http://www.a.com/news/7") == "http://a.com/news/7"
    assert rs.canonicalize("http://www.b.com/news/7") == "http://www.b.com/news/7"  # host not taught
    assert rs.canonicalize("http://a.com/item?id=7&sid=9f3a") == "http://a.com/item?id=7"
    both = Rule(id="r-0", hosts=["a.com"], support=10, context=r"^http://a\.com/(.*)$", transformation="http://a.com/X")
    assert (
        RuleSet(RULES + [both], engine=engine).canonicalize("http://a.com/news/7") == "http://a.com/news/7"
    )  # support 50 first
    assert [r.id for r in RuleSet(RULES + [both], engine=engine).rules()] == ["r-www", "r-sid", "r-0"]


@pytest.mark.parametrize("engine", ENGINES)
def test_upsert_respects_versions_and_retirement(engine):
    rs = RuleSet([WWW], engine=engine)
    stale = Rule(**{**{f: getattr(WWW, f) for f in WWW.__struct_fields__}, "version": 1, "status": "retired"})
    assert not rs.upsert(stale)  # same version: ignored
    newer = Rule(**{**{f: getattr(WWW, f) for f in WWW.__struct_fields__}, "version": 2, "status": "retired"})
    assert rs.upsert(newer) and len(rs) == 0
    assert rs.canonicalize("http://www.a.com/news/7") == "http://www.a.com/news/7"


@pytest.mark.parametrize("engine", ENGINES)
def test_context_must_match_the_whole_url_with_backtracking(engine):
    """Full-match semantics (Java's matches(), RE2's FullMatch): an alternative that stops
    short is backtracked into, and a context that only matches a prefix does not apply."""
    alt = Rule(
        id="r-alt",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/(?:p|pa)ge\/([0-9]+)",
        transformation="http://a.com/page/$1",
    )
    rs = RuleSet([alt], engine=engine)
    assert rs.explain("http://a.com/page/7")[0] is alt
    assert rs.explain("http://a.com/pge/7")[0] is alt
    assert rs.explain("http://a.com/page/7/more")[0] is None
    ext = Rule(
        id="r-ext",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/([0-9]+)(?:\.htm|\.html)",
        transformation="http://a.com/$1",
    )
    assert RuleSet([ext], engine=engine).canonicalize("http://a.com/7.html") == "http://a.com/7"
    pct = Rule(
        id="r-pct",
        hosts=["a.com"],
        context=r"http\:\/\/a\.com\/x\%20([0-9]+)(y)?",
        transformation="http://a.com/%$1$2$$",
    )
    assert RuleSet([pct], engine=engine).canonicalize("http://a.com/x%2012") == "http://a.com/%12$"


def _mutations(url: str, rnd: random.Random) -> list[str]:
    """Near misses a crawler meets: host case and www, session ids and tracking parameters,
    trailing slashes, other digits, non-ASCII text, escapes, whitespace, cut paths."""
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    bare = host.removeprefix("www.")
    sep = "&" if "?" in url else "?"
    digits = "".join(str(rnd.randrange(10)) if c.isdigit() else c for c in path)
    return [
        f"{scheme.upper()}://{host.upper()}{slash}{path}",
        f"{scheme}://www.{bare}{slash}{path}",
        f"{scheme}://{bare}{slash}{path}",
        f"{scheme}://{host}:80{slash}{path}",
        f"{url}{sep}sid={rnd.getrandbits(48):x}",
        f"{url}{sep}utm_source=x&ref=1",
        url + "/",
        url.rstrip("/") + "/index.html",
        f"{scheme}://{host}/{digits}",
        f"{scheme}://{host}/{path}/\u00e9t\u00e9/\u65e5\u672c",
        f"{scheme}://{host}/{path.replace('/', '/%7E', 1)}",
        f"{scheme}://{host}/{path}\x0b",
        f"{scheme}://{host}/{path.rsplit('/', 1)[0]}",
        f"{scheme}://{host}//{path}#frag",
        url.replace(".", "..", 1),
        url[: rnd.randrange(1, len(url))],
    ]


def test_re2_gives_the_python_keys_for_the_rules_learned_on_the_sample():
    """RE2 must not change one key: the learned rules' contexts (lazy groups, optional
    parts, parameter-order alternations) over every URL of the sample and its near misses."""
    from importlib import resources

    from dustonline import OnlineLearner
    from dustonline.events.readers import Rejected, read_events

    sample = resources.files("dustonline") / "data" / "sample-stream.jsonl.gz"
    learner = OnlineLearner()
    urls = []
    for ev in read_events([str(sample)]):
        if not isinstance(ev, Rejected):
            learner.learn_one(ev)
            urls.append(ev.url)
    learner.flush()
    rules = learner.ruleset().rules()
    py, re2 = RuleSet(rules), RuleSet(rules, engine="re2")
    assert len(rules) > 50 and len(py) == len(re2) == len(rules)
    rnd = random.Random(17)
    tried = urls + [m for u in dict.fromkeys(urls) for m in _mutations(u, rnd)]
    keys = [py.canonicalize(u) for u in tried]
    assert sum(k != light_normalize(u) for u, k in zip(tried, keys)) > 10_000  # the rules do rewrite
    assert [u for u, k in zip(tried, keys) if re2.canonicalize(u) != k] == []


HARD = [  # (context, transformation, URLs): where a backtracking engine and RE2 could part
    (
        r"^http://a\.com/([a-z.]+?)(?:\.html?)?$",
        "http://a.com/$1",
        ["http://a.com/news.html", "http://a.com/a.htm.htm"],
    ),
    (r"^http://a\.com/(a|ab)(c|bcd)(d*)$", "http://a.com/$1-$2-$3", ["http://a.com/abcd", "http://a.com/acd"]),
    (
        r"^http://a\.com/p\?(?:(cat)=([a-z]+)&(item)=([0-9]+)|(item)=([0-9]+)&(cat)=([a-z]+))$",
        "http://a.com/p?$1$7=$2$8&$3$5=$4$6",
        ["http://a.com/p?cat=x&item=1", "http://a.com/p?item=1&cat=x", "http://a.com/p?item=1"],
    ),
    (r"^http://a\.com/x\s([0-9]+)\S?$", "http://a.com/$1", ["http://a.com/x\x0b7", "http://a.com/x 7\x0b"]),
    (
        r"^http://a\.com/(.)([^/]*)/(\w+)$",
        "http://a.com/$3/$2$1",
        ["http://a.com/\u00e9t\u00e9/x_1", "http://a.com/\u65e5/\u00e9", "http://a.com/\ud800z/x1"],
    ),
    (
        r"^http://a\.com/(b)?(x{2,3})(x*)$",
        "http://a.com/$1.$2.$3",
        ["http://a.com/xxxxx", "http://a.com/bxx", "http://a.com/x"],
    ),
    (r"^http://a\.com/(.*)(\s?)$", "http://a.com/$1.$2", ["http://a.com/a\nb", "http://a.com/ab\n"]),
]


@pytest.mark.parametrize("context,transformation,urls", HARD)
def test_re2_agrees_on_hard_cases(context, transformation, urls):
    """Submatch choice (lazy, leftmost-first alternatives, unmatched groups), ASCII
    classes (RE2's own \\s lacks \\v), code points (a lone surrogate: no UTF-8 for
    RE2), and '.' against a newline."""
    r = Rule(id="r-h", hosts=["a.com"], context=context, transformation=transformation)
    py, re2 = RuleSet([r]), RuleSet([r], engine="re2")
    assert len(re2) == 1
    keys = [py.canonicalize(u) for u in urls]
    assert any(k != light_normalize(u) for u, k in zip(urls, keys))
    assert [re2.canonicalize(u) for u in urls] == keys


def test_re2_engine_without_google_re2_names_the_extra(monkeypatch, capsys, tmp_path):
    import sys

    from dustonline.cli import main
    from dustonline.rules.ruleset import write_rules

    monkeypatch.setitem(sys.modules, "re2", None)  # as if not installed
    with pytest.raises(ImportError, match=r"dustonline\[re2\]"):
        RuleSet(RULES, engine="re2")
    with pytest.raises(ValueError, match="unknown engine"):
        RuleSet(RULES, engine="pcre")
    rules = tmp_path / "rules.jsonl"
    write_rules(rules, RULES)
    assert main(["canonicalize", "--rules", str(rules), "--engine", "re2", str(rules)]) == 2
    assert "dustonline[re2]" in capsys.readouterr().err


def test_cli_engine_re2_writes_the_same_keys(tmp_path, capsys):
    from dustonline.cli import main
    from dustonline.rules.ruleset import write_rules

    rules, urls = tmp_path / "rules.jsonl", tmp_path / "urls.txt"
    write_rules(rules, RULES)
    urls.write_text("http://www.a.com/news/7\nhttp://a.com/item?id=7&sid=9f3a\nnot a url\nhttp://b.org/x\n")
    out = {}
    for engine in ENGINES:
        assert main(["canonicalize", "--rules", str(rules), "--engine", engine, str(urls)]) == 0
        out[engine] = capsys.readouterr().out
    assert out["re2"] == out["python"]
    assert out["re2"].splitlines()[:2] == ["http://a.com/news/7", "http://a.com/item?id=7"]
