"""The duplicate-url-discarder export (dustonline/rules/export/dud.py, issue 19 item 4)
applied by the package itself (PyPI: duplicate-url-discarder, in the test extra): its
Fingerprinter, built from a Scrapy crawler whose DUD_LOAD_RULE_PATHS is the exported
file, fingerprints each URL's request.

The equality tested is the one a Scrapy crawl acts on: a request is dropped as a duplicate
when its fingerprint was seen. So for each URL whose key no skipped rule decides, dud's
fingerprint of ``Request(url)`` must be Scrapy's default fingerprint of
``Request(RuleSet.canonicalize(request.url))``: the request dustonline's key names. Both
sides then go through w3lib's canonicalize_url (sorted query, normalized escapes, no
fragment), so dud's own forms (a '?' left empty, empty query parts dropped) do not count
as differences. Light normalization is dustonline's, not a rule's, and Scrapy keeps its
own: canonicalize_url leaves default ports, trailing dots of hosts and bare '%'. Where
only that differs, dud's output is lightly normalized before it is fingerprinted
(counted apart as "agree-normalized"). How many URLs dud rewrites to exactly the key is
reported too."""

import json
import logging

from export_sets import (
    conformance_sets,
    covered,
    every_host_rule_set,
    host_rule_set,
    path_edit_set,
    sample_rules_and_urls,
)

from dustonline.rules.export import load
from dustonline.rules.ruleset import ACTIVE, Rule, RuleSet
from dustonline.rules.urls import light_normalize


def subpath_rule_set() -> tuple[list[Rule], list[str]]:
    """A rewrite rule that only leaves out the path's first segment (what subpathRemoval
    does), beside one whose segment has letters in one case (url-matcher would take
    /PRINT too: skipped) and a parameter rule."""
    rules = [
        Rule(
            id="m",
            hosts=["c.com", "www.c.com"],
            context=r"^(https?)\:\/\/(c\.com|www\.c\.com)(?:\/[mM][iI][rR][rR][oO][rR]|\/2)?\/(.*)$",
            transformation="$1://$2/$3",
            support=5,
        ),
        Rule(
            id="x", hosts=["d.com"], context=r"^(https?)\:\/\/(d\.com)(?:\/print)?\/(.*)$", transformation="$1://$2/$3"
        ),
        Rule(id="p", hosts=["c.com"], context="", transformation="", drop_param="sid", support=3),
    ]
    urls = [
        f"{s}://{h}{p}"
        for s in ("http", "https")
        for h in ("c.com", "www.c.com", "d.com", "e.c.com")
        for p in ("/mirror/a/b?sid=1&q=2", "/MIRROR/a", "/2/x", "/2", "/mirror/", "/a/mirror/b", "/print/a", "/x?sid=3")
    ]
    return rules, urls


def test_dud_fingerprints_are_those_of_rulesets_keys(tmp_path):
    from duplicate_url_discarder import Fingerprinter
    from scrapy import Request
    from scrapy.utils.request import RequestFingerprinter
    from scrapy.utils.test import get_crawler

    # url-matcher's tldextract asks the network for the suffix list, then uses its snapshot
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)
    export = load("dud")
    sets = conformance_sets()
    sets["host-rules"] = host_rule_set()
    sets["path-edits"] = path_edit_set()
    sets["subpath"] = subpath_rule_set()
    sets["own-every-host"] = every_host_rule_set()
    sets["learned-on-sample"] = sample_rules_and_urls()
    figures, disagree = {}, []
    for name, (rules, urls) in sets.items():
        exp = export(rules)
        path = tmp_path / f"{name}.json"
        path.write_text(exp.text)
        exported = json.loads(exp.text)
        crawler = get_crawler(settings_dict={"DUD_LOAD_RULE_PATHS": [str(path)]})
        dud, plain = Fingerprinter(crawler), RequestFingerprinter(crawler)
        whole = RuleSet(r for r in rules if r.status == ACTIVE)
        is_covered = covered(rules, exp)
        n = dict.fromkeys(("no-request", "skipped-rule", "unchanged", "agree", "agree-normalized", "same-url"), 0)
        n.update(urls=len(urls), rules=len(rules), skipped=len(exp.skipped), dud_rules=len(exported))
        for url in urls:
            try:
                req = Request(url)
            except (ValueError, TypeError):  # not a URL Scrapy requests
                n["no-request"] += 1
                continue
            uri = req.url  # Scrapy's form of the URL: what dud and RuleSet are both given
            if not is_covered(uri):
                n["skipped-rule"] += 1
                continue
            key = whole.canonicalize(uri)
            want = plain.fingerprint(Request(key))
            out = dud.url_canonicalizer.process_url(uri)
            if dud.fingerprint(req) == want:
                n["agree"] += 1
            elif plain.fingerprint(Request(light_normalize(out))) == want:
                n["agree-normalized"] += 1
            else:
                disagree.append((name, url, uri, out, key))
                continue
            n["same-url"] += out == key
            n["unchanged"] += key == light_normalize(uri)
        figures[name] = n
    print(json.dumps(figures))
    print("\n".join(map(repr, disagree)))
    assert disagree == []
    # the parameter rules and the fitting subpath rule do change keys, and dud follows
    agreed = {name: f["agree"] + f["agree-normalized"] for name, f in figures.items()}
    assert sum(agreed[name] - f["unchanged"] for name, f in figures.items()) > 200
    sub = figures["subpath"]
    assert sub["dud_rules"] == 3 and sub["skipped"] == 1 and agreed["subpath"] - sub["unchanged"] >= 10
    assert figures["learned-on-sample"]["dud_rules"] > 5
    # rules of every host: a universal rule, and each named or excepted host's own
    for name in ("every-host", "own-every-host"):
        f = figures[name]
        assert agreed[name] - f["unchanged"] >= 8 and f["skipped-rule"] < f["urls"] // 2, (name, f)
