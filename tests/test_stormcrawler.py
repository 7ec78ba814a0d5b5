"""The StormCrawler adapter (clients/stormcrawler, issue 19 item 2): DustURLFilter, built
by StormCrawler's own URLFilters from urlfilters JSON and configured with the topology's
config, rewrites every URL of the conformance suite to the key Python's RuleSet gives, and
follows the rules topic on the real local broker. Its JUnit tests run under Maven against
storm-crawler-core 2.4 from Maven Central and the Java client as the working tree has it;
the surefire report must list every case as run and passed. DUSTONLINE_SKIP_JAVA=1 skips."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import stormcrawler_jvm

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "clients" / "conformance" / "cases.jsonl"
REPORTS = stormcrawler_jvm.MODULE / "target" / "surefire-reports"


def run_tests(*args: str) -> None:
    stormcrawler_jvm.install_java_client()
    shutil.rmtree(REPORTS, ignore_errors=True)  # no report of an earlier run counts
    stormcrawler_jvm.run_mvn(["test", f"-Dconformance.cases={CASES}", *args], stormcrawler_jvm.MODULE)


def test_url_filter_gives_the_conformance_keys():
    run_tests("-Dtest=DustURLFilterTest")
    records = [json.loads(line) for line in CASES.read_text().splitlines()]
    cases = [(r["set"], r["url"]) for r in records if "key" in r]
    suite = ET.parse(REPORTS / "TEST-org.dustonline.stormcrawler.DustURLFilterTest.xml").getroot()
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    names = [tc.get("name") for tc in suite.iter("testcase")]
    ran = [n[n.index("stormcrawler[") :] for n in names if "stormcrawler[" in n]
    assert len(ran) == len(cases) >= 400  # one test per case, each run
    assert {n.split("] ", 1)[0][len("stormcrawler[") :] for n in ran} == {s for s, _ in cases}
    assert len(names) == len(ran) + 1  # and the configuration test


def test_url_filter_follows_the_rules_topic(kafka_broker):
    run_tests("-Dtest=DustURLFilterTopicTest", f"-Dkafka.bootstrap={kafka_broker}")
    suite = ET.parse(REPORTS / "TEST-org.dustonline.stormcrawler.DustURLFilterTopicTest.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "1",
        "0",
        "0",
        "0",
    )
