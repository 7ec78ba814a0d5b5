"""Rule sets for the exporters' tests (tests/test_export_*.py): every set of
clients/conformance/cases.jsonl with its URLs, host rules, and the rules learned on the
bundled sample with every URL of the sample; and which URLs an export must key as RuleSet
does (those whose key no skipped rule decides)."""

import json
from importlib import resources
from pathlib import Path

from dustonline.rules.export import Export
from dustonline.rules.ruleset import ACTIVE, Rule, RuleSet

CASES = Path(__file__).resolve().parent.parent / "clients" / "conformance" / "cases.jsonl"


def conformance_sets() -> dict[str, tuple[list[Rule], list[str]]]:
    sets: dict[str, tuple[list[Rule], list[str]]] = {}
    for line in CASES.read_text().splitlines():
        rec = json.loads(line)
        if "set" not in rec:
            continue
        rules, urls = sets.setdefault(rec["set"], ([], []))
        if "rule" in rec:
            rules.append(Rule(**rec["rule"]))
        elif "url" in rec:
            urls.append(rec["url"])
    return sets


def r(id, hosts, **kw) -> Rule:
    """A rule of the sets below: empty context and transformation, support 3, unless given."""
    kw.setdefault("context", "")
    kw.setdefault("transformation", "")
    return Rule(id=id, hosts=hosts, support=kw.pop("support", 3), **kw)


def host_rule_set() -> tuple[list[Rule], list[str]]:
    """Host rules (Rule.canonical_host), beside the suite's host-rules set: a move before
    everything, the target's rules after it, and a rewrite whose key lands on a moved host."""

    rules = [
        r("h", ["www.x.com", "m.x.com"], canonical_host="x.com"),
        r("p", ["x.com"], drop_param="sid"),
        r("s", ["x.com"], canonical_scheme="https"),
        r("q", ["www.x.com"], drop_param="ref"),
        r(
            "a",
            ["x.com"],
            context=r"^https\:\/\/x\.com\/a\/([0-9]+)\/index\.html$",
            transformation="http://www.x.com/a/$1",
        ),
        r(
            "b",
            ["x.com"],
            context=r"^http\:\/\/x\.com\/b\/([0-9]+)\?sid\=1$",
            transformation="http://x.com/b?n=$1&sid=2",
        ),
    ]
    urls = [
        f"{scheme}://{host}{path}"
        for scheme in ("http", "https")
        for host in ("www.x.com", "m.x.com", "x.com", "WWW.X.COM:8080", "u@www.x.com", "y.x.com")
        for path in ("/", "/a/7/index.html", "/a/7/index.html?sid=3&ref=1", "/b/5?sid=1", "/c?ref=2&sid=1&z", "?sid")
    ]
    return rules, urls


def path_edit_set() -> tuple[list[Rule], list[str]]:
    """Path edits (Rule.normalize) with parameter and rewrite rules around them, beside
    the suite's path-edits set: trailing slashes before and after the last segment, a
    segment %-escaped (either hex case, an unreserved character escaped) and a literal
    light normalization would rewrite, which no segment equals."""

    rules = [
        r("t", ["e.com", "www.e.com"], normalize="trailing-slash"),
        r("q", ["e.com"], normalize="empty-query"),
        r("i", ["e.com"], normalize="last-segment:index.html"),
        r("d", ["e.com"], normalize="last-segment:default.aspx"),
        r("u", ["e.com"], normalize="last-segment:%C3%A9"),
        r("n", ["e.com"], normalize="last-segment:%7e"),
        r("p", ["e.com"], drop_param="sid"),
        r("b", ["e.com"], normalize="bare-tokens"),
        r("w", ["www.e.com"], context=r"^(https?)\:\/\/www\.e\.com\/(.*)$", transformation="$1://e.com/$2/"),
    ]
    urls = [
        f"http://{host}{path}"
        for host in ("e.com", "www.e.com", "E.COM:81", "f.com")
        for path in (
            "/",
            "/a/",
            "/a//",
            "/a/index.html",
            "/a/index.html?",
            "/a/index.html?sid=1",
            "/default.aspx",
            "/a/default.aspx/",
            "/a?",
            "/a?#x",
            "/a/?sid=2#f",
            "/index.htmlx",
            "//",
            "/a/index.html/",
            "/a/index.html//?",
            "/index.html/index.html",
            "/a/%69ndex.html",
            "/a/index%2Ehtml",
            "/a/%C3%A9",
            "/a/%c3%a9/",
            "/a/%C3%A9x",
            "/a/~",
            "/a/%7e",
            "",
            "?",
            "/app.js?o4jxx5",
            "/a/?o4jxx5&sid=1",
            "/a/index.html?x=1&3.5&amp&9z&&y=2",
            "/a?amp",
            "/a/?1&2&3&4",  # at most DROP_PASSES tokens go in Heritrix (docs/crawlers.md)
        )
    ]
    return rules, urls


def every_host_rule_set() -> tuple[list[Rule], list[str]]:
    """Parameter rules of every host beside the suite's every-host set: keys that rewrite
    rules write on hosts without rules of their own (excepted or not), a host rule's
    target, and URLs with several parts to drop."""

    rules = [
        r("g-utm", ["*"], drop_param="utm", support=40, except_hosts=["keep.e1.com", "kept.org"]),
        r("g-fb", ["*"], drop_param="fbclid", support=30, except_hosts=["keep.e1.com"]),
        r("g-sid", ["*"], drop_param="sid", support=20),
        *(
            r(f"g-{n}", ["*"], drop_param=f"utm_{n}", support=10)
            for n in ("source", "medium", "campaign", "term", "content")
        ),
        r("p-own", ["www.e1.com"], drop_param="ref"),
        r("m", ["old.e1.com"], canonical_host="new.e1.com"),
        r(
            "to-m",
            ["www.e1.com"],
            context=r"^http\:\/\/www\.e1\.com\/m\/([^?]*)$",
            transformation="http://m.e1.com/$1?utm=m&sid=s&x=1",
        ),
        r(
            "to-keep",
            ["www.e1.com"],
            context=r"^http\:\/\/www\.e1\.com\/k\/([^?]*)$",
            transformation="http://keep.e1.com/$1?utm=k&sid=s",
        ),
        r(
            "to-old",
            ["www.e1.com"],
            context=r"^http\:\/\/www\.e1\.com\/o\/([^?]*)$",
            transformation="http://old.e1.com/$1?fbclid=o&y",
        ),
    ]
    queries = (
        "",
        "?utm=1",
        "?a=1&utm=2&fbclid=x",
        "?sid=1&ref=2&a",
        "?fbclid&utm=1&sid=2&b=3#f",
        "?utm_source=a&utm_medium=b&k=1&utm_campaign=c&utm_term=d&utm_content=e",
    )
    urls = [
        f"http://{host}{path}{q}"
        for host in ("www.e1.com", "m.e1.com", "keep.e1.com", "old.e1.com", "new.e1.com", "kept.org", "z.net")
        for path in ("/p", "/m/x", "/k/y", "/o/z")
        for q in queries
    ]
    return rules, urls


def sample_rules_and_urls() -> tuple[list[Rule], list[str]]:
    from dustonline import OnlineLearner
    from dustonline.events.readers import Rejected, read_events

    learner = OnlineLearner()
    urls = []
    for ev in read_events([str(resources.files("dustonline") / "data" / "sample-stream.jsonl.gz")]):
        if not isinstance(ev, Rejected):
            learner.learn_one(ev)
            urls.append(ev.url)
    learner.flush()
    return learner.ruleset().rules(), list(dict.fromkeys(urls))


def covered(rules: list[Rule], exp: Export):
    """The URLs whose key no skipped rule decides: the rule set without the skipped rules
    gives them the key the whole set gives."""
    out = {s.rule_id for s in exp.skipped}
    whole = RuleSet(r for r in rules if r.status == ACTIVE)
    kept = RuleSet(r for r in rules if r.status == ACTIVE and r.id not in out)
    return lambda uri: whole.canonicalize(uri) == kept.canonicalize(uri)
