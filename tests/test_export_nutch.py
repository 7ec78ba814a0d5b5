"""``dustonline rules export --format nutch`` (issue 19, item 4): the exported
regex-normalize.xml, applied by StormCrawler's RegexURLNormalizer on the JVM (the real
engine, storm-crawler-core from Maven Central; its rule loop is Nutch's: every
``<regex>`` in order as ``pattern.matcher(url).replaceAll(substitution)``), gives
``RuleSet.canonicalize``'s key for every URL but those decided by rules the export lists
as skipped. URLs are given light-normalized, as BasicURLNormalizer leaves them
(docs/crawlers.md): the conformance suite's sets, the rules ``dustonline learn`` learns on
the bundled sample over its URLs and variants, and composition cases of our own (host
rules, the https :443 retry, the URL-as-given fallback, path edits, case conversions).
"""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import msgspec
import pytest
import stormcrawler_jvm
from export_sets import every_host_rule_set

from dustonline.rules.export import FORMATS, UnknownFormat, load
from dustonline.rules.export.nutch import export
from dustonline.rules.params import SORT_QUERY
from dustonline.rules.ruleset import Rule, RuleSet, read_rules
from dustonline.rules.urls import host_of, light_normalize

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "clients" / "conformance" / "cases.jsonl"
SAMPLE = ROOT / "dustonline" / "data" / "sample-stream.jsonl.gz"


def conformance_sets() -> dict[str, tuple[list[Rule], list[str]]]:
    sets: dict[str, tuple[list[Rule], list[str]]] = {}
    for line in CASES.read_text().splitlines():
        rec = json.loads(line)
        if "set" not in rec:
            continue
        rules, urls = sets.setdefault(rec["set"], ([], []))
        if "rule" in rec:
            rules.append(msgspec.convert(rec["rule"], Rule))
        if "url" in rec:
            urls.append(rec["url"])
    return sets


def unsorted_hosts(rules: list[Rule], skipped: set[str]) -> set[str]:
    """Hosts with a sort-query edit the file skips and a rule that edit subsumes."""
    unsorted = {h for r in rules if r.normalize == SORT_QUERY and r.id in skipped for h in r.hosts}
    return unsorted & {h for r in rules if r.subsumed_by == SORT_QUERY for h in r.hosts}


def compare(rules: list[Rule], urls: list[str], got: list[str | None], skipped: set[str]) -> tuple[Counter, list]:
    """(counts, mismatches) of the engine's outputs against RuleSet's keys. A URL is
    exempt when a skipped rule decides it or applies to it, or when its host has a
    skipped sort-query edit and a rule that edit subsumes (which the file applies there,
    since it cannot sort, and RuleSet does not); StormCrawler drops a URL the rules make
    empty (None for '')."""
    rs = RuleSet(rules)
    unsorted = unsorted_hosts(rules, skipped)
    counts: Counter = Counter()
    bad = []
    for url, out in zip(urls, got, strict=True):
        key = rs.canonicalize(url)
        rule, _ = rs.explain(url)
        if (
            (rule is not None and rule.id in skipped)
            or any(r.id in skipped for r in rs.applicable(url))
            or host_of(url) in unsorted
        ):
            counts["exempt"] += 1
            continue
        if out == key or (key == "" and out is None):
            counts["agree"] += 1
            counts["rewritten" if key != url else "unchanged"] += 1
            if rule is not None:
                counts[f"rule:{rule.id}"] += 1
        else:
            bad.append((url, key, out))
    return counts, bad


def test_conformance_suite_through_stormcrawler(tmp_path):
    sets = conformance_sets()
    jobs, exports = [], {}
    for name, (rules, urls) in sets.items():
        exports[name] = export(rules)
        jobs.append((exports[name].text, [light_normalize(u) for u in urls]))
    outs = stormcrawler_jvm.regex_normalize(jobs, tmp_path)
    total: Counter = Counter()
    bad = []
    sorted_cases = 0
    for (name, (rules, _)), (_, urls), got in zip(sets.items(), jobs, outs, strict=True):
        skipped = {s.rule_id for s in exports[name].skipped}
        rs = RuleSet(rules)
        refused = {r.id for r in rules if r.id not in rs}  # refused or retired
        unsortable = {r.id for r in rs.rules() if r.normalize == SORT_QUERY}  # a regex chain cannot sort
        assert skipped <= refused | unsortable, f"{name}: the export skipped rules RuleSet applies: {skipped - refused}"
        unsorted = unsorted_hosts(rules, skipped)
        sorted_cases += sum(
            1 for u in urls if any(r.id in unsortable for r in rs.applicable(u)) or host_of(u) in unsorted
        )
        counts, b = compare(rules, urls, got, skipped)
        total += counts
        bad += [(name, *x) for x in b]
    assert not bad, "\n".join(f"[{n}] {u!r}: RuleSet {k!r}, StormCrawler {o!r}" for n, u, k, o in bad[:20])
    assert total["exempt"] == sorted_cases > 0  # only URLs whose query RuleSet sorts
    cases = sum(len(u) for _, u in sets.values())
    assert total["agree"] + total["exempt"] == cases >= 430
    assert total["rewritten"] >= 200  # the rules did the work, not an empty file
    print(f"conformance: {total['agree']} of {cases} URLs agree ({total['rewritten']} rewritten)")


@pytest.fixture(scope="module")
def learned(tmp_path_factory) -> Path:
    """The rules `dustonline learn` writes for the bundled sample."""
    out = tmp_path_factory.mktemp("learn") / "rules.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "dustonline", "learn", str(SAMPLE), "--rules-out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def variants(url: str, names: list[str], i: int) -> str:
    """One alias of ``url`` a crawler meets: the other scheme, a dropped parameter, with or
    without www, a default port made redundant by https, an index page, a trailing slash."""
    scheme_end = url.find("://") + 3
    path_start = url.find("/", scheme_end)
    sep = "&" if "?" in url else "?"
    kind = i % 6
    if kind == 0:
        return ("https://" + url[7:]) if url.startswith("http://") else ("http://" + url[8:])
    if kind == 1:
        return url + sep + names[i % len(names)] + "=x1&" + names[(i // 7) % len(names)]
    if kind == 2:
        rest = url[scheme_end:]
        return url[:scheme_end] + (rest[4:] if rest.startswith("www.") else "www." + rest)
    if kind == 3 and path_start > 0:
        return "http://" + url[scheme_end:path_start] + ":443" + url[path_start:]
    if kind == 4:
        return url.split("?")[0].rstrip("/") + "/index.html"
    return url.split("?")[0] + "/?"


def test_rules_learned_on_the_sample_through_stormcrawler(learned, tmp_path):
    """`dustonline learn` on the sample, `dustonline rules export --format nutch` (the CLI,
    as an operator runs it), StormCrawler on every URL of the sample and one alias each."""
    xml = tmp_path / "regex-normalize.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "dustonline", "rules", "export", "--format", "nutch", "--rules", str(learned)]
        + ["-o", str(xml)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rules = list(read_rules(learned))
    skipped = {line.split(":")[0].removeprefix("rule ") for line in proc.stderr.splitlines() if line}
    sorts = {r.id for r in rules if r.normalize == SORT_QUERY}
    assert skipped == sorts, proc.stderr  # all expressible but the query sorts (a regex chain cannot sort)
    kinds = Counter(
        "host"
        if r.canonical_host
        else "param"
        if r.drop_param
        else "scheme"
        if r.canonical_scheme
        else "edit"
        if r.normalize
        else "rewrite"
        for r in rules
    )
    # every kind, rewrite rules among them (14 on the sample since they are learned after
    # the names: what names explain needs none)
    assert kinds["rewrite"] >= 10 and kinds["param"] >= 5 and kinds["scheme"] >= 1, kinds
    assert kinds["host"] >= 1 and kinds["edit"] >= 1, kinds
    with gzip.open(SAMPLE, "rt") as fh:
        seen = sorted({json.loads(line)["url"] for line in fh})
    names = sorted({str(r.drop_param) for r in rules if r.drop_param})
    urls = sorted(
        {light_normalize(u) for u in seen} | {light_normalize(variants(u, names, i)) for i, u in enumerate(seen)}
    )
    [got] = stormcrawler_jvm.regex_normalize([(xml.read_text(), urls)], tmp_path)
    counts, bad = compare(rules, urls, got, skipped)
    assert not bad, "\n".join(f"{u!r}: RuleSet {k!r}, StormCrawler {o!r}" for u, k, o in bad[:20])
    assert counts["agree"] + counts["exempt"] == len(urls) > 30000
    assert counts["exempt"] < len(urls) // 20  # the URLs of the hosts whose query RuleSet sorts
    assert counts["rewritten"] > len(urls) // 3
    deciding = {k for k in counts if k.startswith("rule:")}
    assert len(deciding) >= kinds["rewrite"] // 2  # most rules decided some URL, every one the same
    print(
        f"sample: {len(rules)} rules ({dict(kinds)}), {len(deciding)} of them deciding; "
        f"{counts['agree']} of {len(urls)} URLs agree, {counts['rewritten']} rewritten"
    )


def R(id, hosts, context="", transformation="", support=10, **kw) -> Rule:
    return Rule(id=id, hosts=hosts, context=context, transformation=transformation, support=support, **kw)


COMPOSED = [
    R("h-www", ["www.h.com"], canonical_host="h.com"),
    R("s-h", ["h.com", "q.net"], canonical_scheme="https"),
    R("p-sid", ["h.com"], drop_param="sid"),
    R("p-dot", ["h.com"], drop_param="a.b"),
    R("e-slash", ["h.com"], normalize="trailing-slash"),
    R("e-query", ["h.com"], normalize="empty-query"),
    R("e-index", ["h.com"], normalize="last-segment:index.html"),
    R("e-tokens", ["h.com"], normalize="bare-tokens"),
    # matches only the URL as given (sid in its context): the fallback, sid dropped again
    R("r-raw", ["h.com"], r"^https\:\/\/h\.com\/item\-([0-9]+)\?sid\=([a-z]+)$", "https://h.com/i/$1?sid=$2&k=1", 30),
    R("r-case", ["h.com"], r"^https\:\/\/h\.com\/([A-Za-z]+)\/([0-9]+)$", "https://h.com/${1:lower}/$2", 20),
    R("r-dead", ["www.h.com"], r"^(.*)$", "http://h.com/never", 99),  # its host is moved away first
    # an output to normalize (case, default port, fragment, escapes), on a moved host with rules
    R("r-go", ["go.h.com"], r"^http\:\/\/go\.h\.com\/go\/([^?]*)(\?.*)?$", "HTTP://WWW.H.COM:80/$1/index.html$2#f", 25),
    R("r-up", ["u.com"], r"^http\:\/\/u\.com\/([a-z]+)\/(.*)$", "http://${1:upper}.U.com/%7e$2%zz%4a/", 15),
    # q.net: https makes :443 a default port; a rule that matches only without it, one only with it
    R("r-q443", ["q.net"], r"^https\:\/\/q\.net\:443\/z$", "https://q.net/with-port", 12),
    R("r-q", ["q.net"], r"^https\:\/\/q\.net\/x$", "https://q.net/y", 11),
    # outputs on http :443 of a host with a scheme rule: the port goes once https applies
    R("r-qraw", ["q.net"], r"^http\:\/\/q\.net\/raw\/(.*)$", "http://q.net:443/r/$1", 11),
    R("r-p443", ["go.h.com"], r"^http\:\/\/go\.h\.com\/p443\/(.*)$", "http://h.com:443/$1", 26),
    R("r-rel", ["v.org"], r"^http\:\/\/v\.org\/rel\/(.*)$", "no-scheme/$1", 10),
    # a host moved to that has a host rule of its own: a URL is moved once
    R("h-a", ["a.k.net"], canonical_host="b.k.net"),
    R("h-b", ["b.k.net"], canonical_host="c.k.net"),
    R("p-x", ["b.k.net", "c.k.net"], drop_param="x"),
    R("e-lower", ["b.k.net"], normalize="lowercase-path"),
    R("e-index2", ["b.k.net"], normalize="last-segment:index.html"),
    # compared with escapes normalized: lowercase-path lowers the hex, the literal's is upper
    R("e-pct", ["b.k.net"], normalize="last-segment:%C3%A9.html"),
    R("e-never", ["b.k.net"], normalize="last-segment:%7e"),  # no segment normalizes to it
    R("r-tob", ["v.k.net"], r"^http\:\/\/v\.k\.net\/b\/(.*)$", "http://b.k.net/$1", 9),
]
COMPOSED_URLS = [
    "http://www.h.com/item-7?sid=ab",
    "https://h.com/item-7?sid=ab",
    "http://h.com/item-7?sid=ab&a.b=1",
    "http://h.com/News/12",
    "http://www.h.com/NEWS/12?sid=1",
    "http://h.com/a/b/index.html?",
    "http://h.com/a/b/?sid=1&&a.b&axb=2",
    "http://h.com/a/b/?o4jxx5&sid=1&amp&x=2&9",
    "http://h.com/a/index.html?o4jxx5#f",
    "http://h.com/?",
    "http://h.com:443/x/",
    "http://user@www.h.com:8080/x/",
    "http://go.h.com/go/a/b",
    "http://go.h.com/go/a?sid=1&z=2",
    "http://go.h.com/go/",
    "http://USER@go.h.com/go/x",
    "http://u.com/abc/d%2fe",
    "http://u.com/abc/",
    "http://q.net/x",
    "http://q.net:443/x",
    "http://q.net:443/z",
    "https://q.net:443/z",
    "http://q.net/z",
    "http://q.net/raw/a",
    "http://go.h.com/p443/a",
    "http://v.org/rel/a?b",
    "http://[::1]:8080/x",
    "http://a.k.net/P/INDEX.HTML?x=1&y=Y",
    "http://b.k.net/P/Q?x=1",
    "http://a.k.net/Q/%C3%A9.HTML?x=1",
    "http://a.k.net/P/%C3%A9.html",
    "http://a.k.net/P/%7e",
    "http://h.com/a//",
    "http://h.com//?",
    "http://h.com/a/index.html//",
    "http://h.com/index.html/index.html",
    "http://v.k.net/b/Z/index.html?x=2",
    "http://other.org/a?sid=1",
    "not a url",
    "",
]


def test_composed_rules_through_stormcrawler(tmp_path):
    ex = export(COMPOSED)
    assert ex.skipped == []
    urls = [light_normalize(u) for u in COMPOSED_URLS]
    [got] = stormcrawler_jvm.regex_normalize([(ex.text, urls)], tmp_path)
    counts, bad = compare(COMPOSED, urls, got, set())
    assert not bad, "\n".join(f"{u!r}: RuleSet {k!r}, StormCrawler {o!r}" for u, k, o in bad)
    rs = RuleSet(COMPOSED)
    applied = {r.id for u in urls for r in rs.applicable(u)}
    assert applied == {r.id for r in COMPOSED} - {"r-dead", "e-never"}  # every rule took part somewhere
    assert counts["rewritten"] >= 20


#: rules of every host over the composed ones: excepted on a host with rules, on a host
#: moved to, and on a host no other rule names
EVERY = [
    R("g-utm", ["*"], drop_param="utm", support=40, except_hosts=["q.net", "c.k.net", "plain.org"]),
    R("g-sid", ["*"], drop_param="sid", support=30, except_hosts=["u.com"]),
]
EVERY_URLS = [
    "http://other.org/a?utm=1&sid=2&k=3",
    "http://other.org/a?utm",
    "http://plain.org/a?utm=1&sid=2",
    "http://q.net/x?utm=1",
    "http://q.net/x?sid=1",
    "http://h.com/News/12?utm=x",
    "http://go.h.com/go/a?utm=1&z=2",
    "http://u.com/abc/d?sid=1&utm=2",  # u.com keeps sid; its rewrite's key on abc.u.com loses it
    "http://v.k.net/b/Z/index.html?utm=2&x=1",
    "http://b.k.net/P?utm=1&x=2",  # moved to c.k.net, which keeps utm
    "http://a.k.net/P?utm=1&sid=2",
    "http://v.org/rel/a?utm=1",
    "http://[::1]:8080/x?utm=1",
    "no-scheme?utm=1",
]


def test_rules_of_every_host_through_stormcrawler(tmp_path):
    """Every host's names on hosts no rule names, added to named hosts' own parameter
    rules unless excepted, and on the keys rewrite rules write to other hosts."""
    rules = COMPOSED + EVERY
    ex = export(rules)
    assert ex.skipped == []
    urls = [light_normalize(u) for u in COMPOSED_URLS + EVERY_URLS]
    [got] = stormcrawler_jvm.regex_normalize([(ex.text, urls)], tmp_path)
    counts, bad = compare(rules, urls, got, set())
    assert not bad, "\n".join(f"{u!r}: RuleSet {k!r}, StormCrawler {o!r}" for u, k, o in bad)
    rs = RuleSet(rules)
    by_every = [u for u in urls if any(r.id in ("g-utm", "g-sid") for r in rs.applicable(u))]
    assert len(by_every) >= 9
    keys = dict(zip(urls, got, strict=True))
    own_rules, own_urls = every_host_rule_set()  # keys written on hosts without rules, moved ones
    own_urls = [light_normalize(u) for u in own_urls]
    (tmp_path / "own").mkdir()
    [own] = stormcrawler_jvm.regex_normalize([(export(own_rules).text, own_urls)], tmp_path / "own")
    own_counts, own_bad = compare(own_rules, own_urls, own, set())
    assert not own_bad and own_counts["rewritten"] >= 80, (own_counts, own_bad[:5])
    assert keys["http://other.org/a?utm=1&sid=2&k=3"] == "http://other.org/a?k=3"
    assert keys["http://plain.org/a?utm=1&sid=2"] == "http://plain.org/a?utm=1"  # excepted for utm only
    assert keys["http://q.net/x?utm=1"] == "https://q.net/x?utm=1"  # its own scheme rule, utm excepted


def generated_urls(rules: list[Rule], n: int, rnd: random.Random) -> list[str]:
    """URLs of the rules' hosts as crawlers meet them: any scheme and host case, ports,
    userinfo, trailing dots, escapes of every kind, index pages, dropped and other
    parameters, fragments (light-normalized, as the file expects them)."""
    hosts = sorted({h for r in rules for h in r.hosts}) or ["a.com"]
    names = sorted({str(r.drop_param) for r in rules if r.drop_param}) + ["x", "page", "ID"]
    segs = [
        "a",
        "B",
        "index.html",
        "%7e",
        "%2f",
        "%2F",
        "%",
        "%zz",
        "~x",
        "\u00c9t\u00e9",
        "..",
        "",
        "news",
        "12",
        "Foo%41",
    ]
    out = set()
    while len(out) < n:
        host = rnd.choice(hosts)
        host = host.upper() if rnd.random() < 0.2 else host
        host += "." if rnd.random() < 0.1 else ""
        scheme = rnd.choice(["http", "https", "HTTP", "ftp"])
        auth = rnd.choice(["", "", "", "u@", "U:p@"]) + host + rnd.choice(["", "", "", ":80", ":443", ":8080", ":"])
        path = "/".join(rnd.choice(segs) for _ in range(rnd.randint(0, 4))) + ("/" if rnd.random() < 0.3 else "")
        query = ""
        if rnd.random() < 0.6:
            parts = [rnd.choice(names) + rnd.choice(["", "=1", "=A", "="]) for _ in range(rnd.randint(0, 4))]
            query = "?" + "&".join(parts)
        out.add(light_normalize(f"{scheme}://{auth}/{path}{query}" + rnd.choice(["", "", "#f", "#a?b"])))
    return sorted(out)


def test_generated_urls_through_stormcrawler(tmp_path):
    """Every conformance set with hosts and the composed rules, over URLs generated around
    their hosts (deterministic): the engine gives RuleSet's key for each."""
    rnd = random.Random(19)
    sets = [(name, rules) for name, (rules, _) in conformance_sets().items() if any(r.hosts for r in rules)]
    sets.append(("composed", COMPOSED))
    exports = [export(rules) for _, rules in sets]
    jobs = [(ex.text, generated_urls(rules, 600, rnd)) for ex, (_, rules) in zip(exports, sets, strict=True)]
    outs = stormcrawler_jvm.regex_normalize(jobs, tmp_path)
    total: Counter = Counter()
    bad = []
    for (name, rules), ex, (_, urls), got in zip(sets, exports, jobs, outs, strict=True):
        counts, b = compare(rules, urls, got, {s.rule_id for s in ex.skipped})
        total += counts
        bad += [(name, *x) for x in b]
    assert not bad, "\n".join(f"[{n}] {u!r}: RuleSet {k!r}, StormCrawler {o!r}" for n, u, k, o in bad[:20])
    # exempt: URLs of a host with a sort-query rule, which the export skips
    assert total["agree"] + total["exempt"] == sum(len(u) for _, u in jobs) and total["rewritten"] > 1000
    print(f"generated: {total['agree']} URLs agree ({total['rewritten']} rewritten, {total['exempt']} exempt)")


def test_cli_names_each_rule_it_cannot_express(tmp_path, capsys):
    """A rule RuleSet refuses, one whose transformation holds a character XML 1.0 cannot
    carry and one that writes an IDN host partly from a group are named on stderr with the
    reason; the rest export."""
    from dustonline.cli import main
    from dustonline.rules.ruleset import write_rules

    rules = [
        R("ok", ["a.com"], r"^http\:\/\/a\.com\/(.*)$", "http://a.com/x/$1"),
        R("ctl", ["a.com"], r"^http\:\/\/a\.com\/c$", "http://a.com/\x01"),
        R("bad", ["a.com"], r"^http\:\/\/a\.com\/(.*)$", "http://a.com/$7"),
        R("idn", ["a.com"], r"^http\:\/\/a\.com\/i\/([a-z]+)$", "http://$1.b\u00fccher.a.com/"),
    ]
    path = tmp_path / "rules.jsonl"
    write_rules(path, rules)
    out = tmp_path / "out.xml"
    assert main(["rules", "export", "--format", "nutch", "--rules", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    reasons = {e.split(":")[0]: e for e in err}
    assert sorted(reasons) == ["rule bad", "rule ctl", "rule idn"]
    assert all(": not expressible in nutch: " in e for e in err)
    assert "refused by RuleSet (bad-rule)" in reasons["rule bad"]
    assert "XML 1.0" in reasons["rule ctl"]
    assert "non-ASCII letters next to group references" in reasons["rule idn"]
    assert "a.com\\x{2f}x" not in out.read_text() and "http://a.com/x/$1" in out.read_text()
    assert main(["rules", "export", "--format", "stormcrawler", "--rules", str(path)]) == 0
    assert capsys.readouterr().out.startswith('<?xml version="1.0" encoding="UTF-8"?>')


def test_a_newer_kind_of_rule_is_skipped_not_misread(monkeypatch):
    """A field this exporter does not know (a later kind of rule) skips the rule by name."""
    import dustonline.rules.export.nutch as nutch

    monkeypatch.setattr(nutch, "KNOWN_FIELDS", nutch.KNOWN_FIELDS - {"normalize"})
    ex = nutch.export([R("e", ["a.com"], normalize="trailing-slash"), R("s", ["a.com"], canonical_scheme="https")])
    assert [(s.rule_id, "does not know (normalize)" in s.reason) for s in ex.skipped] == [("e", True)]


def test_formats_load_lazily_and_name_a_missing_module(monkeypatch):
    assert load("nutch") is export and load("stormcrawler") is export
    monkeypatch.setitem(FORMATS, "gone", "dustonline.rules.export.gone")
    with pytest.raises(UnknownFormat, match="its module dustonline.rules.export.gone is not installed"):
        load("gone")
    with pytest.raises(UnknownFormat, match="unknown export format 'x', choose from"):
        load("x")


def test_escaped_segment_matches_what_normalizes_to_the_literal():
    """javaregex.escaped_segment against escapes_normalized over texts of escapes in both
    hex cases, escaped unreserved characters and bare '%' (read by Python's re: the
    constructs it writes, classes, alternation, a lookahead, mean the same in Java)."""
    import re

    from dustonline.rules.export.javaregex import escaped_segment
    from dustonline.rules.urls import escapes_normalized

    pieces = ["a", "A", "~", "%", "7", "e", "E", ".", "\u00e9", "%7e", "%7E", "%25", "%41", "%c3", "%C3", "%2e", "%2F"]
    rnd = random.Random(16)
    texts = sorted({"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 4))) for _ in range(3000)})
    literals = sorted({escapes_normalized(t) for t in texts} | set(texts[:100]))
    matched = 0
    for literal in literals:
        java = escaped_segment(literal)
        assert (java is None) == (escapes_normalized(literal) != literal), literal
        rx = java and re.compile(re.sub(r"\\x\{([0-9a-f]+)\}", lambda m: re.escape(chr(int(m.group(1), 16))), java))
        for t in texts:
            got = bool(rx and rx.fullmatch(t))
            assert got == (escapes_normalized(t) == literal), (literal, t, java)
            matched += got
    assert matched > len(literals)  # literals matched by more than themselves
