"""The Heritrix rule (clients/heritrix): DustCanonicalizationRule, declared in the
policy's list of a crawler-beans fragment that Spring loads with Heritrix 3.13's own
classes (Maven Central), keys every URL of the conformance suite as Python's RuleSet does,
keys URIs through FrontierPreparer as a crawl does, says what to fix in a bad config, and
follows the rules topic on the real local broker. Its JUnit tests run under Maven against
the Java client as the working tree has it; the surefire report must list every case as
run and passed. DUSTONLINE_SKIP_JAVA=1 skips."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import stormcrawler_jvm

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "clients" / "conformance" / "cases.jsonl"
MODULE = ROOT / "clients" / "heritrix"
REPORTS = MODULE / "target" / "surefire-reports"


def run_tests(*args: str) -> ET.Element:
    stormcrawler_jvm.install_java_client()
    shutil.rmtree(REPORTS, ignore_errors=True)  # no report of an earlier run counts
    stormcrawler_jvm.run_mvn(["test", f"-Dconformance.cases={CASES}", *args], MODULE)
    [name] = [a.split("=", 1)[1] for a in args if a.startswith("-Dtest=")]
    return ET.parse(REPORTS / f"TEST-org.dustonline.heritrix.{name}.xml").getroot()


def test_heritrix_rule_gives_the_conformance_keys():
    suite = run_tests("-Dtest=DustCanonicalizationRuleTest")
    records = [json.loads(line) for line in CASES.read_text().splitlines()]
    cases = [(r["set"], r["url"]) for r in records if "key" in r]
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    names = [tc.get("name") for tc in suite.iter("testcase")]
    ran = [n[n.index("heritrix[") :] for n in names if "heritrix[" in n]
    assert len(ran) == len(cases) >= 400  # one test per case, each run
    assert {n.split("] ", 1)[0][len("heritrix[") :] for n in ran} == {s for s, _ in cases}
    assert sorted(set(names) - {n for n in names if "heritrix[" in n}) == [
        "aBadConfigSaysWhatToFix",
        "keysUrisAsACrawlDoes",
    ]


def test_heritrix_rule_follows_the_rules_topic(kafka_broker):
    suite = run_tests("-Dtest=DustCanonicalizationRuleTopicTest", f"-Dkafka.bootstrap={kafka_broker}")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "1",
        "0",
        "0",
        "0",
    )
