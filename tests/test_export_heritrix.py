"""The Heritrix export (dustonline/rules/export/heritrix.py, issue 19 item 4) applied by
Heritrix itself: clients/heritrix-check loads each exported fragment with Spring and the
heritrix-engine jars from Maven Central, gives each URL its Sheets with the real
SheetOverlaysManager (SURT prefixes) and keys it with FrontierPreparer.prepare, the
already-seen key of a crawl. Every key of a URL whose key no skipped rule decides must be
RuleSet.canonicalize's key of the same URI string (Heritrix's UURI form of the URL).

The rule sets: every set of clients/conformance/cases.jsonl over its URLs, host rules and
path edits of tests/export_sets.py, and the rules learned on the bundled sample over every
URL of the sample. DUSTONLINE_SKIP_JAVA=1 skips
the test (no Maven); otherwise a missing Maven fails it."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from export_sets import (
    conformance_sets,
    covered,
    every_host_rule_set,
    host_rule_set,
    path_edit_set,
    sample_rules_and_urls,
)

from dustonline.rules.export import load
from dustonline.rules.ruleset import ACTIVE, RuleSet
from dustonline.rules.urls import a_label, host_of, light_normalize

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "clients" / "heritrix-check"


def heritrix_keys(jobs: dict[str, tuple[str, list[str]]], tmp: Path) -> dict[str, list[dict]]:
    """{name: (fragment, urls)} -> {name: records}: one JVM run for all."""
    mvn = shutil.which("mvn")
    assert mvn, "the Heritrix check needs Maven and a JDK 17 (Debian: apt-get install maven)"
    args = []
    for name, (text, urls) in jobs.items():
        (tmp / f"{name}.xml").write_text(text)
        (tmp / f"{name}.urls").write_text("".join(json.dumps(u) + "\n" for u in urls))
        args += [str(tmp / f"{name}.xml"), str(tmp / f"{name}.urls"), str(tmp / f"{name}.out")]
    proc = subprocess.run(
        [mvn, "-q", "-B", "compile", "exec:java", "-Dexec.args=" + " ".join(args)],
        cwd=CHECK,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    return {name: [json.loads(line) for line in (tmp / f"{name}.out").read_text().splitlines()] for name in jobs}


def test_heritrix_keys_are_rulesets_keys(tmp_path):
    if os.environ.get("DUSTONLINE_SKIP_JAVA"):
        pytest.skip("DUSTONLINE_SKIP_JAVA is set")
    export = load("heritrix")
    sets = conformance_sets()
    sets["own-host-rules"] = host_rule_set()
    sets["own-path-edits"] = path_edit_set()
    sets["own-every-host"] = every_host_rule_set()
    sets["learned-on-sample"] = sample_rules_and_urls()
    exports = {name: export(rules) for name, (rules, _) in sets.items()}
    out = heritrix_keys({name: (exports[name].text, urls) for name, (_, urls) in sets.items()}, tmp_path)

    figures = {}
    disagree = []
    policy: list[tuple[str, str, str, str]] = []  # (set, url, its key, RuleSet's key)
    escaped: dict[tuple[str, str], bool] = {}
    for name, (rules, urls) in sets.items():
        exp, recs = exports[name], out[name]
        assert [r["url"] for r in recs] == urls
        whole = RuleSet(r for r in rules if r.status == ACTIVE)
        out_ids = {s.rule_id for s in exp.skipped}
        ruled = {a_label(h.lower()) for r in whole.rules() if r.id not in out_ids for h in r.hosts}
        kept = RuleSet(r for r in whole.rules() if r.id not in out_ids)
        is_covered = covered(rules, exp)
        n = dict.fromkeys(("no-uri", "not-http", "no-rules", "skipped-rule", "escapes", "escapes-agree"), 0)
        n.update(urls=len(urls), exact=0, normalized=0)
        for rec in recs:
            if "error" in rec:  # UURIFactory refuses it: Heritrix never crawls it
                n["no-uri"] += 1
                continue
            uri = rec["uuri"]
            if not uri.startswith(("http://", "https://")):
                n["not-http"] += 1  # SURT prefixes are per scheme; the export writes http(s) ones
                continue
            host = host_of(uri)
            # the Sheet of exactly the URI's host, through its SURT prefix
            assert rec["sheets"] == ([f"dust.sheet.{host}"] if host in ruled else []), rec
            if host not in ruled:
                n["no-rules"] += 1  # no rule exported for its host: the crawl's own policy keys it
                if uri == light_normalize(uri):  # after the rules of every host, which it heads
                    policy.append((name, rec["url"], rec["key"], kept.canonicalize(uri)))
                continue
            if not is_covered(uri):
                n["skipped-rule"] += 1
                continue
            key = whole.canonicalize(uri)
            if uri != light_normalize(uri):
                # %-escapes light normalization changes (%7e, %5F, a bare %): RuleSet tries
                # the rules on the normalized URI too, and normalizes the key; a chain of
                # regexes cannot decode escapes, and Heritrix's UURI keeps them
                n["escapes"] += 1
                n["escapes-agree"] += light_normalize(rec["key"]) == key
                escaped[name, rec["url"]] = light_normalize(rec["key"]) == key
            elif rec["key"] == key:
                n["exact"] += 1
            elif light_normalize(rec["key"]) == key:
                n["normalized"] += 1  # a rule's output with a bare % (or %7e): RuleSet escapes it
            else:
                disagree.append((name, rec["url"], uri, rec["key"], key))
        n["rules"], n["skipped"] = len(rules), len(exp.skipped)
        figures[name] = n
    print(json.dumps(figures))
    print("\n".join(map(repr, disagree)))
    assert disagree == []
    # a URI of a host without a Sheet: the policy's key of RuleSet's key (the rules of
    # every host dropped what they drop, then Heritrix's default rules), keyed in a crawl
    # with no rules of ours
    bare = heritrix_keys({"bare": (export([]).text, [k for *_, k in policy])}, tmp_path)["bare"]
    wrong = [(s, u, got, b.get("key")) for (s, u, got, _), b in zip(policy, bare, strict=True) if got != b.get("key")]
    assert wrong == [], wrong[:10]
    by_every = [p for p in policy if p[0].endswith("every-host") and light_normalize(p[1]) != p[3]]
    assert len(by_every) >= 30, by_every  # URLs of hosts without a Sheet that lose an every-host name
    own = figures["own-every-host"]  # keys written on hosts without rules of their own, and moved
    assert own["exact"] + own["no-rules"] == own["urls"] and own["exact"] >= 40 and own["skipped"] == 0, own
    sample = figures["learned-on-sample"]
    assert sample["rules"] > 50 and sample["exact"] > 10_000 and sample["normalized"] == 0
    assert sum(f["exact"] for f in figures.values()) > sample["exact"] + 100
    assert figures["own-host-rules"]["exact"] > 50 and figures["own-path-edits"]["exact"] > 30
    own = figures["own-path-edits"]  # escaped segments, in either hex case, are cut as RuleSet cuts them
    assert own["escapes"] == own["escapes-agree"] >= 4, own
    # the suite's path edits: a last segment compared with its escapes normalized (%c3 as
    # %C3) agrees; a rewrite matched on the normalized form only (lp.com/x/a%2f7) does not
    assert figures["path-edits"]["exact"] > 50
    assert escaped["path-edits", "http://ls.com/a/%c3%a9.html"]
