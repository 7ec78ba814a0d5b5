"""Writes clients/conformance/cases.jsonl: rule sets, URLs and the keys every client must give.

The keys come from the Python ``RuleSet`` (the reference), never from a hand: run

    .venv/bin/python clients/conformance/generate.py            # keys recomputed, same rules
    .venv/bin/python clients/conformance/generate.py --relearn  # the sample's rules learned again

tests/test_conformance.py checks that the committed file is what this script writes, and
that both Python engines give its keys. The file is JSON lines of four kinds, each
naming its ``set``; a set's rules are its ``rule`` lines in file order:

    {"suite": ..., "format": 1, "doc": ...}                          the first line
    {"set": "composition", "doc": "what the set is about"}           a set begins
    {"set": "composition", "rule": {...a rule record...}}            one of its rules
    {"set": "composition", "refused": {"unknown-format": 1}}         rules the reader must refuse, by reason
    {"set": "composition", "url": "http://...", "key": "https://..."} a case
    {"set": "path-edits", "url": ..., "key": ..., "decides": "e-ts"} a case naming explain's rule (EXPLAINED sets)

The hand-written sets are the hard cases of issue 19; ``sample`` holds the rules learned
on the bundled sample stream (inputs, kept as committed unless ``--relearn``) over a few
hundred of its URLs and near misses. Every rule in the suite is inside the context
grammar, so a client passes it without porting the linear-time check; the refusals the
suite asks for are the record format's (``unknown-format``), bad transformations
(``bad-rule``), which every client implements, and host rules' (``bad-host``,
``foreign-host``: a client that applies host rules must check them, public suffix list
included) and path edits' (``bad-edit``).
"""

from __future__ import annotations

import json
import logging
import random
import sys
from pathlib import Path

import msgspec

from dustonline.rules.ruleset import Rule, RuleSet, encode_rule
from dustonline.rules.urls import light_normalize

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
#: refusals a client must reproduce; others (unsafe-context, a rewrite rule's foreign-host)
#: need the grammar check and the rewrite's host check, which the suite does not ask of every client
PORTABLE_REFUSALS = {"unknown-format", "bad-rule", "bad-edit"}
#: a host rule's refusals, which a client that applies host rules cannot do without
HOST_RULE_REFUSALS = {"bad-host", "foreign-host"}
#: sets whose cases also name the rule ``RuleSet.explain`` gives (``decides``, null for
#: none): where which of several rules changed a URL is the point (a later field, so the
#: other sets' lines stay as they were)
EXPLAINED = {"path-edits", "every-host", "subsumed"}

W = r"[^/?=&#;:.]+"  # the learner's generalized segment


def R(id, hosts, context="", transformation="", support=10, **kw) -> Rule:
    return Rule(id=id, hosts=hosts, context=context, transformation=transformation, support=support, **kw)


def hand_sets() -> list[tuple[str, str, list[Rule], list[str]]]:
    """(name, doc, rules, URLs) of the hard cases."""
    sets = []
    c = ["c.com", "www.c.com"]
    sets.append(
        (
            "composition",
            "scheme rule, then parameter rules, then the first rewrite rule (or the one that "
            "matches the URL as given), then the key's own host's rules (docs/formats.md, Order)",
            [
                R("s-c", c + ["m.c.com"], support=5, canonical_scheme="https"),
                R("p-utm", c + ["m.c.com"], support=4, drop_param="utm_source"),
                R("p-sid", c, support=3, drop_param="sid"),
                R("p-d", ["d.com"], support=3, drop_param="ref"),
                R(
                    "r-www",
                    c,
                    r"^(https?)\:\/\/(?:www\.)?c\.com\/news\/([0-9]+)$",
                    "$1://c.com/news/$2",
                    support=30,
                ),
                R(
                    "r-item",
                    ["www.c.com"],
                    r"^http\:\/\/www\.c\.com\/item\?id\=([0-9]+)\&sid\=[0-9a-f]+$",
                    "http://www.c.com/item/$1?sid=0&utm_source=x",
                    support=20,
                ),
                R("r-move", ["www.c.com"], r"^https\:\/\/www\.c\.com\/p\/(.*)$", "http://m.c.com/p/$1", support=15),
                R("r-d", ["d.com"], r"^http\:\/\/d\.com\/a\?x\=([0-9]+)$", "http://d.com/a/$1", support=9),
            ],
            [
                "http://www.c.com/news/7",
                "http://www.c.com/news/7?utm_source=tw",
                "HTTP://WWW.C.COM/news/7?sid=ab12&utm_source=tw",
                "https://c.com/news/7?utm_source=tw&sid=1",
                "http://www.c.com/item?id=3&sid=9f",
                "http://www.c.com/item?id=3&sid=9f&utm_source=x",
                "http://www.c.com/item?sid=9f&id=3",
                "http://www.c.com/p/x?utm_source=1&q=2",
                "https://www.c.com/p/x?sid=1#top",
                "http://c.com/other?utm_source=1",
                "http://c.com/other?utm_source",
                "http://c.com/other?utm_source=1&utm_source=2",
                "http://c.com/other?UTM_SOURCE=1",
                "http://c.com/other?utm%5Fsource=1",
                "http://c.com/other?a=1&&utm_source=2&",
                "http://c.com/other?utm_source=1#utm_source=2",
                "http://c.com/other?",
                "http://d.com/a?x=5&ref=9",
                "http://d.com/a?ref=9&x=5",
                "http://d.com/a?ref=9",
                "HTTP://D.COM:80/a?ref",
                "http://m.c.com/q?utm_source=1",
                "httpx://c.com/x?utm_source=1",
            ],
        )
    )
    sets.append(
        (
            "case-conversion",
            "${N:lower} and ${N:upper} map ASCII letters only; every other character is copied",
            [
                R(
                    "r-case",
                    ["k.com"],
                    r"^http\:\/\/k\.com\/([^/]+)\/([^/]+)$",
                    "http://k.com/${1:lower}/${2:upper}",
                ),
                R(
                    "r-case2",
                    ["k2.com"],
                    r"^http\:\/\/k2\.com\/(a)(b)(c)(d)(e)(f)(g)(h)(i)([a-z]+)\/(.*)$",
                    "http://k2.com/${10:upper}$1${1:upper}$$1/${11:lower}",
                ),
            ],
            [
                "http://k.com/AbC/dEf",
                "http://k.com/\u00c9COLE/stra\u00dfe",
                "http://k.com/\u0130x\u212a/\u01c6\u0131",
                "http://k.com/%C3%A9/%c3%a9",
                "http://k.com/%7e/%7E",
                "http://k.com/\U0001d400Z/z\U0001d41a",
                "http://k2.com/abcdefghixyz/A/B%2F",
                "http://k2.com/abcdefghi/A",
            ],
        )
    )
    g12 = "".join(f"({chr(97 + i)})" for i in range(12))
    sets.append(
        (
            "dollars",
            "$$ is a literal $; $N takes the longest run of digits that is a group number; URLs with $ in them",
            [
                R(
                    "r-dollar",
                    ["d1.com"],
                    r"^http\:\/\/d1\.com\/\$([a-z]+)\$(.*)$",
                    "http://d1.com/$$$1/$2$$",
                ),
                R("r-digits", ["d2.com"], r"^http\:\/\/d2\.com\/([a-z])([a-z])$", "http://d2.com/$13/$21/$20"),
                R("r-twelve", ["d3.com"], r"^http\:\/\/d3\.com\/" + g12 + "$", "http://d3.com/$12$123/$1$$12"),
                R("r-inurl", ["d4.com"], r"^http\:\/\/d4\.com\/([^?]*)\?p\=([$0-9]+)$", "http://d4.com/$1/$2"),
            ],
            [
                "http://d1.com/$abc$x$y",
                "http://d1.com/$abc$",
                "http://d1.com/abc$x",
                "http://d2.com/xy",
                "http://d3.com/abcdefghijkl",
                "http://d4.com/a$b?p=$1$",
                "http://d4.com/$?p=$$",
                "http://d4.com/%24?p=%24",
            ],
        )
    )
    sets.append(
        (
            "percent-encoding",
            "keys are lightly normalized: escapes upper-cased, unreserved ones decoded, a bare % "
            "encoded; a rule is tried on the URL as given, then on its normalization",
            [
                R("r-tilde", ["p.com"], r"^http\:\/\/p\.com\/\~([a-z]+)$", "http://p.com/u/$1"),
                R("r-raw", ["p.com"], r"^http\:\/\/p\.com\/r\%7e([a-z]+)$", "http://p.com/r/$1%2f%7e%zz%4%"),
                R("r-pct", ["p.com"], r"^http\:\/\/p\.com\/x\%20([0-9]+)(y)?$", "http://p.com/%$1$2$$"),
            ],
            [
                "http://p.com/~bob",
                "http://p.com/%7Ebob",
                "http://p.com/%7ebob",
                "http://p.com/r%7ebob",
                "http://p.com/r%7Ebob",
                "http://p.com/x%2012",
                "http://p.com/x%2012y",
                "http://p.com/a%2fb%2Fc%41%5a%61%2D%2e%5F%7E%3a%E2%82%ac",
                "http://p.com/100%",
                "http://p.com/%zz%4g%",
                "http://p.com/?q=%7e#%7e",
                "http://P.COM/%C3%A9",
            ],
        )
    )
    sets.append(
        (
            "idn-hosts",
            "hosts are lower-cased as text (Unicode lower case), then an IDN host is written as its "
            "A-labels: the punycode and Unicode forms of a host are one host (docs/formats.md, Light "
            "normalization)",
            [
                R(
                    "r-idn",
                    ["b\u00fccher.example", "xn--bcher-kva.example"],
                    r"^https?\:\/\/([^/]+)\/buch\/([0-9]+)$",
                    "https://$1/b/$2",
                ),
                R("r-kelvin", ["k.org"], r"^http\:\/\/(.+)\/x$", "http://$1/y"),
            ],
            [
                "http://b\u00fccher.example/buch/1",
                "http://B\u00dcCHER.EXAMPLE/buch/1",
                "http://xn--bcher-kva.example/buch/1",
                "http://XN--BCHER-KVA.example/buch/2",
                "http://b\u00fccher.example./buch/3",
                "http://user@B\u00fccher.example:80/buch/4",
                "http://\u212a.org/x",
                "http://K.ORG/x",
                "http://\u0130.example/",
                "http://\u03a3\u039f\u03a3.example/",
                "http://\u65e5\u672c.example/%E6%97%A5",
            ],
        )
    )
    bu, mu, ja = "xn--bcher-kva.example", "xn--mnchen-3ya.example", "xn--wgv71a.example"
    sets.append(
        (
            "idn",
            "an IDN host is its IDNA 2003 ToASCII (RFC 3490, AllowUnassigned false: "
            "java.net.IDN.toASCII(host, 0)) in the key, the host rules are found by and the URL "
            "rules are tried on; a host that does not encode stays as given; rules are scoped "
            "by A-labels, as the learner writes hosts, and a hosts entry in Unicode is read as its A-labels",
            [
                R(
                    "r-idn-sid",
                    [bu],
                    r"^https?\:\/\/xn\-\-bcher\-kva\.example\/buch\/([0-9]+)\?sid\=[0-9a-f]+$",
                    "https://xn--bcher-kva.example/buch/$1",
                ),
                R("p-idn", [mu], drop_param="sid"),
                R("s-idn", [ja], canonical_scheme="https"),
                R("p-idn-u", ["z\u00fcrich.example"], drop_param="ref"),  # a hosts entry in Unicode: its A-labels
            ],
            [
                "http://B\u00fccher.example/buch/7?sid=9f",
                "http://B\u00dcCHER.EXAMPLE/buch/7?sid=9f",
                "http://b\u00fcCHER.example/buch/7?sid=9f#x",
                "http://xn--bcher-kva.example/buch/7?sid=9f",
                "HTTP://XN--BCHER-KVA.EXAMPLE/buch/7?sid=9f",
                "http://b\u00fccher.example./buch/7?sid=9f",
                "http://b\u00fccher\u3002example/buch/7?sid=9f",
                "http://b\uff55\u0308cher.example/buch/7?sid=9f",
                "http://B\u00fccher.example:80/buch/7?sid=9f",
                "http://B\u00fccher.example:8080/buch/7?sid=9f",
                "https://User:P\u00e4ss@B\u00fccher.example:443/buch/7?sid=9f",
                "http://xn--bcher-kva.b\u00fccher.example/buch/7?sid=9f",
                "http://M\u00fcnchen.example/a?sid=1&x=2",
                "http://xn--mnchen-3ya.example/a?x=2&sid=1",
                "http://\u65e5\u672c.example/%E6%97%A5",
                "http://\u65e5\u672c.example/old/x",
                "http://XN--WGV71A.EXAMPLE/old/y",
                "http://\u00df.example/",
                "http://\u0130stanbul.example/",
                "http://xn--b\u00fccher.example/buch/7?sid=9f",
                "http://b\u00fccher..example/buch/7?sid=9f",
                "http://\u00fc" + "\u00fc" * 60 + ".example/",
                "http://\U0001f600.example/",
                "http://a\u0627.example/",
                "http://\u00fc\u3000.example/",
                "http://\u00fc\uff1a80/",
                "http://\u00fc\uff0fx.example/",
                "http://\u00dc\ud800.example/",
                "http://\u3002/",
                "http://vaz\u03a3\u07e9-t..example/",
                "http://[\u00fc]/",
                "http://xn--zrich-kva.example/a?ref=1",
                "http://Z\u00fcrich.example/a?ref=2",
            ],
        )
    )
    sets.append(
        (
            "groups",
            "a group that does not take part gives ''; empty groups; leftmost alternative first; "
            "the last iteration of a repeated group",
            [
                R("r-opt", ["g.com"], r"^http\:\/\/g\.com\/(b)?(x{2,3})(x*)$", "http://g.com/$1.$2.$3"),
                R("r-empty", ["g2.com"], r"^http\:\/\/g2\.com\/(|a)()(z?)\/(.*)$", "http://g2.com/[$1][$2][$3]$4"),
                R("r-alt", ["g3.com"], r"^http\:\/\/g3\.com\/(a|ab)(c|bcd)(d*)$", "http://g3.com/$1-$2-$3"),
                R(
                    "r-order",
                    ["g4.com"],
                    r"^http\:\/\/g4\.com\/p\?(?:(cat)=([a-z]+)&(item)=([0-9]+)|(item)=([0-9]+)&(cat)=([a-z]+))$",
                    "http://g4.com/p?$1$7=$2$8&$3$5=$4$6",
                ),
                R("r-branch", ["g5.com"], r"^http\:\/\/g5\.com\/(?:(a)b|(a)c)$", "http://g5.com/[$1][$2]"),
                R("r-rep", ["g6.com"], r"^http\:\/\/g6\.com\/((a)|b)+$", "http://g6.com/[$1][$2]"),
                R("r-prefix", ["g7.com"], r"http\:\/\/g7\.com\/(?:p|pa)ge\/([0-9]+)", "http://g7.com/page/$1"),
            ],
            [
                "http://g.com/xxxxx",
                "http://g.com/bxx",
                "http://g.com/x",
                "http://g2.com//",
                "http://g2.com/az/q",
                "http://g2.com/z/",
                "http://g3.com/abcd",
                "http://g3.com/acd",
                "http://g4.com/p?cat=x&item=1",
                "http://g4.com/p?item=1&cat=x",
                "http://g4.com/p?item=1",
                "http://g5.com/ab",
                "http://g5.com/ac",
                "http://g6.com/ab",
                "http://g6.com/ba",
                "http://g6.com/bb",
                "http://g7.com/page/7",
                "http://g7.com/pge/7",
                "http://g7.com/page/7/more",
            ],
        )
    )
    sets.append(
        (
            "lazy",
            "lazy and greedy repeats choose the groups a backtracking engine chooses",
            [
                R("r-lazy", ["l.com"], r"^http\:\/\/l\.com\/([a-z.]+?)(?:\.html?)?$", "http://l.com/$1"),
                R("r-lazy2", ["l2.com"], r"^http\:\/\/l2\.com\/(.*?)(\/?)$", "http://l2.com/$1|$2"),
                R("r-lazy3", ["l3.com"], r"^http\:\/\/l3\.com\/([0-9]{1,3}?)([0-9]*)$", "http://l3.com/$1|$2"),
                R(
                    "r-sid",
                    ["l4.com"],
                    r"^http\:\/\/l4\.com\/(" + W + r")\?id\=(" + W + r"?)(?:\&sid\=[0-9a-zA-Z]+)?$",
                    "http://l4.com/$1?id=$2",
                ),
            ],
            [
                "http://l.com/news.html",
                "http://l.com/a.htm.htm",
                "http://l.com/news",
                "http://l2.com/a/b/",
                "http://l2.com/a/b",
                "http://l3.com/12345",
                "http://l4.com/item?id=7&sid=9f3a",
                "http://l4.com/item?id=7",
            ],
        )
    )
    sets.append(
        (
            "characters",
            "code points, not UTF-16 units; ASCII \\d \\w \\s (\\s includes \\v); '.' stops only at \\n; "
            "escaped punctuation and class edges",
            [
                R("r-s", ["x.com"], r"^http\:\/\/x\.com\/x\s([0-9]+)\S?$", "http://x.com/$1"),
                R("r-dot", ["x2.com"], r"^http\:\/\/x2\.com\/(.*)(\s?)$", "http://x2.com/$1.$2"),
                R("r-cp", ["x3.com"], r"^http\:\/\/x3\.com\/(.)([^/]*)\/(\w+)$", "http://x3.com/$3/$2$1"),
                R(
                    "r-cls",
                    ["x4.com"],
                    r"^http\:\/\/x4\.com\/([a-][a-b-c][\-\]][.$][}{][#&])\/(\d+)$",
                    "http://x4.com/$2/$1",
                ),
                R(
                    "r-emoji",
                    ["x5.com"],
                    "^http\\:\\/\\/x5\\.com\\/([\U0001f600-\U0001f602]+)\\<\\>\\~\\%$",
                    "http://x5.com/$1",
                ),
                R("r-w", ["x6.com"], r"^http\:\/\/x6\.com\/(\W+)\/(\w+)\/(\D+)\/(\d+)$", "http://x6.com/$4/$3/$2/$1"),
            ],
            [
                "http://x.com/x\x0b7",
                "http://x.com/x 7\x0b",
                "http://x.com/x\x1c7",
                "http://x.com/x\u00a07",
                "http://x2.com/a\nb",
                "http://x2.com/ab\n",
                "http://x2.com/a\rb\u2028c\u0085d",
                "http://x3.com/\u00e9t\u00e9/x_1",
                "http://x3.com/\u65e5/\u00e9",
                "http://x3.com/\U0001f600a/x1",
                "http://x3.com/\ud800z/x1",
                "http://x4.com/--]$}#/12",
                "http://x4.com/ac-.{&/\u0663",
                "http://x5.com/\U0001f600\U0001f602<>~%",
                "http://x5.com/\U0001f603<>~%",
                "http://x6.com/--\u00e9/abc_9/x\u0663y/12",
                "http://x6.com/--/\u00e9/x/1",
            ],
        )
    )
    sets.append(
        (
            "not-applicable",
            "rules of other hosts, partial matches, retired rules; the first applicable rule by "
            "descending support, then id (code point order)",
            [
                R("r-b", ["n.com"], r"^http\:\/\/n\.com\/(.*)$", "http://n.com/b/$1", support=20),
                R("r-a", ["n.com"], r"^http\:\/\/n\.com\/(.*)$", "http://n.com/a/$1", support=20),
                R("r-top", ["n.com"], r"^http\:\/\/n\.com\/top\/(.*)$", "http://n.com/t/$1", support=50),
                R(
                    "r-retired",
                    ["n.com"],
                    r"^http\:\/\/n\.com\/(.*)$",
                    "http://n.com/r/$1",
                    support=99,
                    status="retired",
                ),
                R("r-\uff41", ["n2.com"], r"^http\:\/\/n2\.com\/(.*)$", "http://n2.com/bmp/$1"),
                R("r-\U0001d41a", ["n2.com"], r"^http\:\/\/n2\.com\/(.*)$", "http://n2.com/astral/$1"),
                R("r-case", ["N3.COM"], r"^http\:\/\/N3\.COM\/(.*)$", "http://n3.com/up/$1"),
                R("r-host", ["n4.com"], r"^http\:\/\/n4\.com\/x$", "http://n4.com/y"),
            ],
            [
                "http://n.com/x",
                "http://n.com/top/x",
                "http://www.n.com/x",
                "http://other.com/x",
                "http://n2.com/x",
                "http://N3.COM/x",
                "http://n3.com/x",
                "http://n4.com/x/",
                "http://n4.com/xx",
                "http://n4.com/x",
            ],
        )
    )
    sets.append(
        (
            "light-normalization",
            "no rule applies: scheme and host case, default port, empty path, fragment, "
            "userinfo, IPv6, text that is not a URL",
            [],
            [
                "HTTP://Example.COM/A/B",
                "http://example.com:80/",
                "https://example.com:443/x",
                "http://example.com:443/x",
                "HTTPS://EXAMPLE.COM:443",
                "http://example.com:/x",
                "http://example.com:0080/x",
                "http://example.com./x",
                "http://example.com..:80/x",
                "http://.:80/x",
                "http://example.com?q=1",
                "http://example.com#frag",
                "http://example.com/a#b?c",
                "http://User:Pw@Example.com:80/",
                "http://a@b@Example.com/",
                "http://[::1]:80/x",
                "http://[FE80::1]/x",
                "http://[::1]x/y",
                "http://[::1/x",
                "http://example.com:8o/x",
                "http://example.com:\u0668\u0660/x",
                "http://a:b:80/x",
                "FTP://X.com:21/y",
                "Foo Bar://X/",
                "not a url",
                "//example.com/x",
                "",
                "http://",
                "http:///x",
            ],
        )
    )
    sets.append(
        (
            "record-format",
            "a record whose format version the reader does not know is refused, whatever its "
            "status; format 1 (or none) applies",
            [
                R("r-v1", ["f.com"], r"^http\:\/\/f\.com\/a\/(.*)$", "http://f.com/v1/$1", format=1),
                R("r-v2", ["f.com"], r"^http\:\/\/f\.com\/(.*)$", "http://f.com/v2/$1", support=99, format=2),
                R("r-v2r", ["f.com"], r"^http\:\/\/f\.com\/(.*)$", "http://f.com/x/$1", status="retired", format=7),
                R("p-v2", ["f.com"], drop_param="sid", format=2),
            ],
            ["http://f.com/a/b?sid=1", "http://f.com/b"],
        )
    )
    sets.append(
        (
            "bad-transformations",
            "a transformation that is not literals, $$, $N and ${N:lower|upper} over the "
            "context's groups refuses its rule; the others apply",
            [
                R("b-0", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/$0", support=9),
                R("b-5", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/$5", support=9),
                R("b-title", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${1:title}", support=9),
                R("b-brace", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${1}", support=9),
                R("b-open", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${1:lower", support=9),
                R("b-space", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${ 1:lower}", support=9),
                R("b-big", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${2:lower}", support=9),
                R("b-letter", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/$x", support=9),
                R("b-end", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/a$", support=9),
                R("b-arabic", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/${\u0661:lower}", support=9),
                R("b-sup", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/$\u00b9", support=9),
                R("b-arabic-ref", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/$\u0661", support=9),
                R("g-ok", ["t.com"], r"^http\:\/\/t\.com\/(a)$", "http://t.com/ok/$1", support=1),
            ],
            ["http://t.com/a"],
        )
    )
    sets.append(host_rules_set())
    sets.append(path_edits_set())
    sets.append(every_host_set())
    sets.append(subsumed_set())
    return sets


def host_rules_set() -> tuple[str, str, list[Rule], list[str]]:
    """Host rules (``canonical_host``) and the refusals that keep them on their site."""
    return (
        "host-rules",
        "a host rule reads its hosts' URLs on the canonical host first (userinfo and port "
        "kept), then that host's scheme, parameter and rewrite rules apply and the alias's "
        "own rules no more; a rewrite's output on an alias is moved again; once, so a cycle "
        "does not loop; the first host rule by rule order wins; refused unless a lower-case "
        "host name on the site (public suffix list, private section included) of each host, "
        "none of them, and nothing else in the record",
        [
            R("h-www", ["www.h.com", "WWW.H.COM."], canonical_host="h.com"),
            R("s-h", ["h.com"], canonical_scheme="https"),
            R("p-h", ["h.com"], drop_param="sid"),
            R("r-h", ["h.com"], r"^https\:\/\/h\.com\/a\/([0-9]+)\/index\.html$", "https://www.h.com/a/$1"),
            R("r-alias", ["www.h.com"], r"^https?\:\/\/www\.h\.com\/only\/([0-9]+)$", "http://www.h.com/o/$1", 50),
            R("p-alias", ["www.h.com"], drop_param="ref"),
            R("h-a", ["a.h2.com"], canonical_host="b.h2.com"),
            R("h-b", ["b.h2.com"], canonical_host="a.h2.com"),
            R("r-b", ["b.h2.com"], r"^http\:\/\/b\.h2\.com\/x\/(.*)$", "http://a.h2.com/y/$1"),
            R("p-b", ["b.h2.com"], drop_param="sid"),
            R("h-img", ["img1.h3.com", "img2.h3.com"], canonical_host="img.h3.com"),
            R("h-uk", ["www.h4.co.uk"], canonical_host="h4.co.uk"),
            R("h-m1", ["m.h5.com"], canonical_host="h5.com", support=20),
            R("h-m0", ["m.h5.com"], canonical_host="www.h5.com", support=5),
            R("h-m2", ["m.h5.com"], canonical_host="w.h5.com", support=20),
            R("h-ck", ["a.www.ck"], canonical_host="www.ck"),
            R("h-rf", ["www.b.xn--p1ai"], canonical_host="b.xn--p1ai"),
            R("h-hk", ["www.b.xn--55qx5d.xn--j6w193g"], canonical_host="b.xn--55qx5d.xn--j6w193g"),
            R("h-de", ["www.xn--bcher-kva.de"], canonical_host="xn--bcher-kva.de"),
            R("h-empty", ["www.h8.com"], canonical_host=""),
            R("f-retired", ["www.h6.com"], canonical_host="evil.com", status="retired"),
            R("f-site", ["www.h6.com"], canonical_host="evil.com"),
            R("f-self", ["www.h6.com"], canonical_host="www.h6.com"),
            R("f-one", ["h6.com", "www.h7.com"], canonical_host="www.h6.com"),
            R("f-private", ["alice.github.io"], canonical_host="bob.github.io"),
            R("f-ck", ["a.b.ck"], canonical_host="c.b.ck"),
            R("f-suffix", ["a.co.uk"], canonical_host="co.uk"),
            R("b-case", ["www.h6.com"], canonical_host="H6.com"),
            R("b-port", ["www.h6.com"], canonical_host="h6.com:8080"),
            R("b-dot", ["www.h6.com"], canonical_host="h6.com."),
            R("b-idn", ["www.h6.com"], canonical_host="b\u00fccher.h6.com"),
            R(
                "b-rewrite",
                ["www.h6.com"],
                r"^http\:\/\/www\.h6\.com\/(.*)$",
                "http://h6.com/$1",
                canonical_host="h6.com",
            ),
            R("b-param", ["www.h6.com"], drop_param="sid", canonical_host="h6.com"),
        ],
        [
            "http://www.h.com/a/5/index.html?sid=3",
            "https://h.com/a/5/index.html",
            "http://www.h.com/q?sid=1&x=2",
            "http://user:pw@www.h.com:8080/q?sid=1",
            "HTTP://WWW.H.COM:80/Q#f",
            "http://www.h.com./q",
            "https://www.h.com",
            "http://www.h.com/only/7",
            "http://www.h.com/q?ref=9",
            "http://other.h.com/q?sid=1",
            "http://a.h2.com/p",
            "http://b.h2.com/p",
            "http://a.h2.com/x/1",
            "http://b.h2.com/x/1",
            "http://a.h2.com/p?sid=1",
            "http://b.h2.com/p?sid=1",
            "http://img1.h3.com/i.png",
            "http://IMG2.h3.com:81/i.png",
            "http://img.h3.com/i.png",
            "http://www.h4.co.uk/",
            "http://m.h5.com/p",
            "http://a.www.ck/x",
            "http://www.b.xn--p1ai/x",
            "http://www.b.\u0440\u0444/x",
            "http://WWW.B.XN--55QX5D.XN--J6W193G/x",
            "http://www.xn--bcher-kva.de/x",
            "http://www.b\u00fccher.de/x",
            "http://www.h8.com/x",
            "http://www.h6.com/x?sid=1",
            "http://h6.com/x",
            "http://www.h7.com/x",
            "http://alice.github.io/x",
            "http://a.b.ck/x",
            "http://a.co.uk/x",
        ],
    )


def subsumed_set() -> tuple[str, str, list[Rule], list[str]]:
    """Rewrite rules a path edit subsumes (``subsumed_by``), on hosts with and without it."""
    order = (
        r"^([^?#]*)\?(?:(id)\=([0-9]+)\&(page)\=([0-9]+)|(page)\=([0-9]+)\&(id)\=([0-9]+))$",
        "$1?$2$8=$3$9&$4$6=$5$7",
    )
    return (
        "subsumed",
        "a rewrite rule with subsumed_by is not tried on a host that has that path edit (sort-query, "
        "lowercase-path), where the edit already does what it does; on other hosts it is a rewrite "
        "rule like any, in its place in the order; refused: bad-edit (subsumed_by on a rule without "
        "a context, or naming another edit); each case names the rule explain gives (decides)",
        [
            R("o", ["sq.com", "plain.com"], *order, support=20, subsumed_by="sort-query"),
            R(
                "m",
                ["sq.com", "plain.com"],
                r"^http\:\/\/([a-z]+)\.com(?:\/mirror1)?\/story\?id\=([0-9]+)\&page\=1$",
                "http://$1.com/story?id=$2&page=1",
                support=5,
            ),
            R("e-sq", ["sq.com"], normalize="sort-query"),
            R(
                "c",
                ["lp.com", "plain.com"],
                r"^(https?\:\/\/[^/?#]+)(\/[^?#]*)$",
                "$1${2:lower}",
                support=15,
                subsumed_by="lowercase-path",
            ),
            R(
                "r-lp",
                ["lp.com", "plain.com"],
                r"^http\:\/\/([a-z]+)\.com\/old\/([0-9]+)$",
                "http://$1.com/new/$2",
                support=3,
            ),
            R("e-lp", ["lp.com"], normalize="lowercase-path"),
            R("x-edit", ["x.com"], *order, subsumed_by="trailing-slash"),
            R("x-param", ["x.com"], drop_param="sid", subsumed_by="sort-query"),
        ],
        [
            "http://sq.com/mirror1/story?page=1&id=7",
            "http://sq.com/mirror1/story?id=7&page=1",
            "http://sq.com/story?page=2&id=7",
            "http://plain.com/mirror1/story?id=7&page=1",
            "http://plain.com/story?page=1&id=7",
            "http://lp.com/OLD/7",
            "http://lp.com/old/7",
            "http://plain.com/OLD/7",
            "http://plain.com/old/7",
            "http://x.com/story?page=1&id=7&sid=3",
        ],
    )


def every_host_set() -> tuple[str, str, list[Rule], list[str]]:
    """Parameter rules of every host (``hosts: ["*"]``) but their ``except_hosts``."""
    return (
        "every-host",
        'a parameter rule whose hosts are exactly ["*"] drops its name on every host not in '
        "its except_hosts (compared as hosts are: lowered, A-labels), after the host's own "
        "parameter rules and before rewrite rules; a moved URL is judged on the host it moves "
        'to; any other rule of host "*" (a scheme rule, hosts ["*", "a.com"]) '
        "applies to no URL of another host",
        [
            R(
                "g-utm",
                ["*"],
                drop_param="utm_source",
                support=50,
                except_hosts=["keep.com", "WWW.Keep.com", "z\u00fcrich.example", "mv.com"],
            ),
            R("g-sid", ["*"], drop_param="sid", support=20, except_hosts=["x.com"]),
            R("g-old", ["*"], drop_param="old", status="retired"),
            R("p-own", ["own.com"], drop_param="ref", support=5),
            R("r-own", ["own.com"], r"^http\:\/\/own\.com\/item\?id\=([0-9]+)$", "http://own.com/i/$1", support=8),
            R("h-mv", ["www.mv.com"], canonical_host="mv.com"),
            R("g-two", ["*", "a.com"], drop_param="k"),
            R("g-scheme", ["*"], canonical_scheme="https"),
        ],
        [
            "http://new.com/a?utm_source=x",
            "http://new.com/a?utm_source=x&b=1",
            "http://new.com/a?b=1&utm_source=x&sid=9f3a",
            "http://new.com/a?utm_source",
            "http://new.com/?utm_source=x#f",
            "http://new.com/a?UTM_SOURCE=x",
            "http://new.com/a?old=1",
            "http://keep.com/a?utm_source=x&sid=1",
            "http://www.keep.com/a?utm_source=x",
            "http://sub.keep.com/a?utm_source=x",
            "http://KEEP.com:80/a?utm_source=x",
            "http://z\u00fcrich.example/a?utm_source=x",
            "http://xn--zrich-kva.example/a?utm_source=x",
            "http://own.com/item?id=5&utm_source=x&ref=2",
            "http://own.com/item?utm_source=x&id=5",
            "http://www.mv.com/a?utm_source=x&sid=2",
            "http://mv.com/a?utm_source=x",
            "http://x.com/a?sid=1&utm_source=2",
            "http://a.com/a?k=1",
            "http://b.com/a?k=1",
        ],
    )


def path_edits_set() -> tuple[str, str, list[Rule], list[str]]:
    """Path edits (``normalize``) alone, in their order, and composed with every other kind."""
    E = r"^https\:\/\/e\.com\/"
    return (
        "path-edits",
        "a path edit (normalize) applies on its hosts after the scheme and parameter rules and "
        "before rewrite rules, in one order: lowercase-path (ASCII letters of the path), "
        "lowercase-query-names (ASCII letters of each query part's name, values untouched), "
        "sort-query (the query's parts by the code points of their names, a stable sort), "
        "bare-tokens (the query's parts without = that hold an ASCII digit, the ? too when no "
        "part is left), empty-query, last-segment:<literal> (byte for byte, the / before it kept), "
        "trailing-slash (not the root's); a rewrite that matches only the URL as given still "
        "decides; the key's own host's edits apply to a rewrite's output; the path ends at the "
        "first ? or #, the query at the first #; refused: bad-edit (an unknown edit, a literal "
        "empty or with / ? #, anything else in the record), bad-host (a host rule with an edit); "
        "each case names the rule explain gives (decides)",
        [
            # each edit alone
            R("e-ts", ["ts.com", "TS2.COM"], normalize="trailing-slash"),
            R("e-eq", ["eq.com"], normalize="empty-query"),
            R("e-index", ["ls.com"], normalize="last-segment:index.html"),
            R("e-case", ["ls.com"], normalize="last-segment:Default.aspx"),
            R("e-utf", ["ls.com"], normalize="last-segment:\u00e9t\u00e9"),
            R("e-pct", ["ls.com"], normalize="last-segment:%C3%A9.html"),
            R("e-lp", ["lp.com"], normalize="lowercase-path"),
            R("r-lp", ["lp.com"], r"^http\:\/\/lp\.com\/x\/a\%2F([0-9]+)$", "http://lp.com/y/$1"),
            R("e-qn", ["qn.com"], normalize="lowercase-query-names"),
            R("e-qn-eq", ["qn.com"], normalize="empty-query"),
            R("p-qn", ["qn.com"], drop_param="SID"),
            R("r-qn", ["qn.com"], r"^http\:\/\/qn\.com\/P\?id\=([0-9]+)$", "http://qn.com/p/$1"),
            R("e-sq", ["sq.com"], normalize="sort-query"),
            R("e-sq-qn", ["sq.com"], normalize="lowercase-query-names"),
            R("e-sq-eq", ["sq.com"], normalize="empty-query"),
            R("p-sq", ["sq.com"], drop_param="sid"),
            R("r-sq", ["sq.com"], r"^http\:\/\/sq\.com\/c\?cat\=([a-z]+)\&id\=([0-9]+)$", "http://sq.com/$1/$2"),
            R("e-bt", ["bt.com"], normalize="bare-tokens"),
            R("e-bt-sq", ["bt.com"], normalize="sort-query"),
            R("p-bt", ["bt.com"], drop_param="v2"),
            R("r-bt", ["bt.com"], r"^http\:\/\/bt\.com\/js\/app\.js\?v\=([0-9]+)$", "http://bt.com/app.js"),
            # all four on one host: their order; an upper-case literal never meets a lowered path
            R("a-slash", ["all.com"], normalize="trailing-slash", support=40),
            R("a-index", ["all.com"], normalize="last-segment:index.html", support=30),
            R("a-home", ["all.com"], normalize="last-segment:Home.php", support=30),
            R("a-query", ["all.com"], normalize="empty-query", support=20),
            R("a-lower", ["all.com"], normalize="lowercase-path", support=10),
            # composed: host, scheme, parameter and rewrite rules
            R("h-e", ["www.e.com"], canonical_host="e.com"),
            R("e-home", ["www.e.com"], normalize="last-segment:home.php"),
            R("s-e", ["e.com"], canonical_scheme="https"),
            R("p-e", ["e.com"], drop_param="sid"),
            R("e-lower", ["e.com"], normalize="lowercase-path"),
            R("e-query", ["e.com"], normalize="empty-query"),
            R("e-slash", ["e.com"], normalize="trailing-slash", support=12),
            R("e-slash2", ["e.com"], normalize="trailing-slash", support=5),
            R("e-idx", ["e.com"], normalize="last-segment:index.html"),
            R("e-default", ["e.com"], normalize="last-segment:default.aspx"),
            R("r-news", ["e.com"], r"^https?\:\/\/e\.com\/news\/([0-9]+)\/$", "http://e.com/n/$1", support=20),
            R("r-item", ["e.com"], E + r"item\/([0-9]+)$", "https://e.com/i/$1", support=20),
            R("r-up", ["e.com"], E + r"up\/([0-9]+)$", "https://e.com/UP/$1/Index.html?", support=20),
            R("r-old", ["old.e.com"], r"^http\:\/\/old\.e\.com\/(.*)$", "http://www.e.com/$1/"),
            # refused, and so applying nowhere
            R("x-word", ["ts3.com"], normalize="lowercase"),
            R("x-upper", ["ts3.com"], normalize="Trailing-Slash"),
            R("x-space", ["ts3.com"], normalize="trailing-slash "),
            R("x-empty", ["ls3.com"], normalize="last-segment:"),
            R("x-slash", ["ls3.com"], normalize="last-segment:a/index.html"),
            R("x-query", ["ls3.com"], normalize="last-segment:index.html?"),
            R("x-frag", ["ls3.com"], normalize="last-segment:index.html#"),
            R("x-context", ["ts3.com"], r"^http\:\/\/ts3\.com\/(.*)\/$", normalize="trailing-slash"),
            R("x-transformation", ["ts3.com"], transformation="http://ts3.com/", normalize="trailing-slash"),
            R("x-param", ["ts3.com"], drop_param="sid", normalize="trailing-slash"),
            R("x-host", ["www.ts3.com"], canonical_host="ts3.com", normalize="trailing-slash"),
            R("x-scheme", ["ts3.com"], canonical_scheme="https", normalize="trailing-slash"),
            R("x-retired", ["ts3.com"], normalize="lowercase", status="retired"),
        ],
        [
            # trailing-slash: one slash, not the root's, the path only
            "http://ts.com/a/",
            "http://ts.com/a//",
            "http://ts.com//",
            "http://all.com/a/index.html//",
            "http://all.com/index.html/index.html",
            "http://ts.com/a/b/?x=1/",
            "http://ts.com/a/#f/",
            "http://ts.com/",
            "http://ts.com",
            "http://ts.com/a/./",
            "HTTP://TS.COM:80/a/",
            "http://ts2.com/a/",
            "http://sub.ts.com/a/",
            # empty-query: a ? then nothing or #, the first ? even in the fragment
            "http://eq.com/a?",
            "http://eq.com/a?#f",
            "http://eq.com?",
            "http://eq.com/a/?",
            "http://eq.com/a?&",
            "http://eq.com/a?=",
            "http://eq.com/a??",
            "http://eq.com/a#f?",
            # last-segment: whole last segments, byte for byte
            "http://ls.com/a/index.html",
            "http://ls.com/index.html",
            "http://ls.com/a/index.html?q=1#f",
            "http://ls.com/a/xindex.html",
            "http://ls.com/index.html/a",
            "http://ls.com/a/INDEX.HTML",
            "http://ls.com/a/index.html;x=1",
            "http://ls.com/a/index.html/",
            "http://ls.com/a/Default.aspx",
            "http://ls.com/a/default.aspx",
            "http://ls.com/a/\u00e9t\u00e9",
            "http://ls.com/a/%C3%A9t%C3%A9",
            "http://ls.com/a/%C3%A9.html",
            "http://ls.com/a/%c3%a9.html",
            "http://ls.com//index.html",
            # lowercase-path: ASCII letters of the path; escapes upper-cased again by light normalization
            "http://lp.com/A/B",
            "http://U:P@lp.com:8080/A?Q=B#F",
            "http://lp.com/A%2Fb%7E%C3%89",
            "http://lp.com/%c3%a9%2f",
            "http://lp.com/\u00c9T\u00c9/\u0130STANBUL/\u212aELVIN/\uff21/\u00df",
            "http://lp.com/X/A%2F7",
            "http://lp.com/x/a%2f7",
            "http://lp.com/x/a%2F7",
            "http://lp.com",
            "http://LP.COM/A",
            # lowercase-query-names: the names of the query's parts, after the parameter rules
            "http://qn.com/A?ID=B&Sort=Up#F=G",
            "http://qn.com/a?A&B=&=C",
            "http://qn.com/a?X=Y=Z&&Q",
            "http://qn.com/a?\u00c9T\u00c9=1&\u0130D=2&\u212a=3",
            "http://qn.com/a?%41B=1&A%2FB=2",
            "http://qn.com/a?SID=1&Q=2",
            "http://qn.com/a?sid=1&Q=2",
            "http://qn.com/P?ID=7",
            "http://qn.com/P?Id=7&SID=9",
            "http://qn.com/p?ID=7",
            "http://qn.com/a?",
            "http://qn.com/a#?Q=1",
            "http://qn.com/a?Q=1#?R=2",
            "http://www.qn.com/a?Q=1",
            # sort-query: parts by name, each name's parts in order, after lowered names
            "http://sq.com/c?id=7&cat=a",
            "http://sq.com/c?ID=7&Cat=a",
            "http://sq.com/c?id=7&sid=1&cat=a",
            "http://sq.com/a?b=1&a=2&b=0&a=1",
            "http://sq.com/a?b&a=&=c&&z=1",
            "http://sq.com/a?\U0001f600=2&\ufb01=1&\u00e9=3",
            "http://sq.com/a?x=b=2&x=a",
            "http://sq.com/a?b=1#z=0&y=1",
            "http://sq.com/a?sid=1",
            "http://sq.com/a?",
            # bare-tokens: parts without = that hold an ASCII digit, after parameter rules and sorting
            "http://bt.com/app.js?o4jxx5",
            "http://bt.com/app.js?3.5.12#f",
            "http://bt.com/app.js?amp",
            "http://bt.com/app.js?amp&o4jxx5",
            "http://bt.com/a?id=7&o4jxx5&x=1",
            "http://bt.com/a?x=1&&2&=3&b=",
            "http://bt.com/a?v2&v3",
            "http://bt.com/a?",
            "http://bt.com/a?\u0661\u0662",
            "http://bt.com/a#?o4jxx5",
            "http://bt.com/js/app.js?o4jxx5&v=7",
            "http://bt.com/js/app.js?v=7&9xyz",
            "http://www.bt.com/app.js?o4jxx5",
            # the order: lowered, empty query, last segment, trailing slash
            "http://all.com/A/Index.html?",
            "http://all.com/a/index.html?#f",
            "http://all.com/a/Home.php",
            "http://all.com/a/home.php",
            "http://all.com/a/index.html/",
            "http://all.com/Index.HTML",
            "http://all.com/A/",
            "http://all.com/a/?",
            "http://all.com/a/",
            "http://all.com/a",
            # composed
            "http://www.e.com/A/Index.html?",
            "https://www.e.com/A/",
            "https://www.e.com/a/",
            "https://www.e.com/a",
            "http://www.e.com/a/home.php",
            "https://e.com/a/index.html?sid=1",
            "https://e.com/a/?sid=1&",
            "https://e.com/a/?sid=1&x=2",
            "https://e.com/a/default.aspx",
            "https://e.com/A/#Top/",
            "http://e.com/news/7/",
            "https://e.com/news/7/",
            "https://e.com/news/7",
            "http://www.e.com/news/7/",
            "http://www.e.com/News/7/",
            "https://e.com/news/7/index.html",
            "http://E.COM/Item/7/index.html?",
            "https://e.com/item/7/",
            "https://e.com/up/7",
            "https://e.com/up/7/",
            "http://old.e.com/B",
            "http://old.e.com/A/Index.html",
            "http://old.e.com/",
            # refused records apply nowhere
            "http://ts3.com/a/",
            "http://ts3.com/A/?sid=1",
            "http://www.ts3.com/a/",
            "http://ls3.com/a/index.html",
        ],
    )


def learn_sample() -> tuple[list[Rule], list[str]]:
    """The rules the online learner writes on the bundled sample, and the sample's URLs."""
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
    return list(learner.rules()), urls


def sample_urls() -> list[str]:
    from importlib import resources

    from dustonline.events.readers import Rejected, read_events

    sample = resources.files("dustonline") / "data" / "sample-stream.jsonl.gz"
    return [ev.url for ev in read_events([str(sample)]) if not isinstance(ev, Rejected)]


def pick_sample_urls(rules: list[Rule], urls: list[str]) -> list[str]:
    """Up to four URLs each rule decides, near misses of two, and URLs no rule decides."""
    rs = RuleSet(rules)
    rnd = random.Random(19)
    by_rule: dict[str | None, list[str]] = {}
    for u in dict.fromkeys(urls):
        rule, _ = rs.explain(u)
        by_rule.setdefault(None if rule is None else rule.id, []).append(u)
    out: list[str] = []
    for rid in sorted(by_rule, key=lambda r: (r is None, r or "")):
        group = by_rule[rid]
        chosen = rnd.sample(group, min(len(group), 4 if rid is not None else 60))
        out += chosen
        for u in chosen[:2] if rid is not None else ():
            scheme, _, rest = u.partition("://")
            host, slash, path = rest.partition("/")
            out.append(
                rnd.choice(
                    [
                        f"{scheme.upper()}://{host.upper()}:80{slash}{path}",
                        f"{u}{'&' if '?' in u else '?'}sid={rnd.getrandbits(32):x}",
                        u + "/",
                        f"{scheme}://{host}/{path}#x",
                        u[: rnd.randrange(len(scheme) + 4, len(u))],
                    ]
                )
            )
    return out


def build(sample_rules: list[Rule]) -> list[dict]:
    lines: list[dict] = [
        {
            "suite": "dustonline rule conformance",
            "format": 1,
            "doc": "Rule sets, URLs and the keys RuleSet.canonicalize gives (the reference). "
            "Written by clients/conformance/generate.py; see its docstring and clients/java/README.md.",
        }
    ]
    sets = hand_sets()
    urls = pick_sample_urls(sample_rules, sample_urls())
    sets.append(
        ("sample", "the rules learned on the bundled sample stream, over its URLs and near misses", sample_rules, urls)
    )
    for name, doc, rules, set_urls in sets:
        lines.append({"set": name, "doc": doc})
        lines += [{"set": name, "rule": json.loads(encode_rule(r))} for r in rules]
        py, re2 = RuleSet(rules), RuleSet(rules, engine="re2")
        bad = [
            (r.id, reason)
            for r in rules
            for reason in RuleSet([r]).refused
            if reason not in PORTABLE_REFUSALS and not (r.canonical_host and reason in HOST_RULE_REFUSALS)
        ]
        assert not bad, f"set {name}: refusals a client cannot reproduce: {bad}"
        if py.refused:
            lines.append({"set": name, "refused": dict(sorted(py.refused.items()))})
        for u in set_urls:
            key = py.canonicalize(u)
            assert re2.canonicalize(u) == key, (name, u)
            case = {"set": name, "url": u, "key": key}
            if name in EXPLAINED:
                rule, k = py.explain(u)
                assert k == key and (rule and rule.id) == (re2.explain(u)[0] and re2.explain(u)[0].id), (name, u)
                case["decides"] = rule and rule.id
            lines.append(case)
        if name != "light-normalization":  # the rules do something in every other set
            assert any(py.canonicalize(u) != light_normalize(u) for u in set_urls), name
    return lines


def render(lines: list[dict]) -> str:
    return "".join(json.dumps(line, ensure_ascii=True, sort_keys=False) + "\n" for line in lines)


def committed_sample_rules(path: Path = CASES) -> list[Rule]:
    dec = msgspec.json.Decoder(Rule)
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("set") == "sample" and "rule" in rec:
            out.append(dec.decode(json.dumps(rec["rule"])))
    return out


def main(argv: list[str]) -> int:
    logging.getLogger("dustonline.rules").setLevel(logging.ERROR)  # the refusals the suite asks for
    relearn = "--relearn" in argv or not CASES.exists()
    rules = learn_sample()[0] if relearn else committed_sample_rules()
    text = render(build(rules))
    CASES.write_text(text)
    n = sum("key" in json.loads(line) for line in text.splitlines())
    print(f"{CASES}: {n} cases, {len(rules)} sample rules ({'learned' if relearn else 'as committed'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
