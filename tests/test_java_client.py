"""The Java client (clients/java, issue 19 item 2) passes the conformance suite: its JUnit
tests run under Maven here, so scripts/test.sh runs them. The surefire report must list
every case of clients/conformance/cases.jsonl as run and passed: a build that ran no case
does not pass. DUSTONLINE_SKIP_JAVA=1 skips it (no Maven); otherwise a missing Maven fails."""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JAVA = ROOT / "clients" / "java"
CASES = ROOT / "clients" / "conformance" / "cases.jsonl"


def test_java_rule_set_passes_the_conformance_suite():
    if os.environ.get("DUSTONLINE_SKIP_JAVA"):
        pytest.skip("DUSTONLINE_SKIP_JAVA is set")
    mvn = shutil.which("mvn")
    assert mvn, "the Java client's tests need Maven and a JDK 17 (Debian: apt-get install maven)"
    reports = JAVA / "target" / "surefire-reports"
    shutil.rmtree(reports, ignore_errors=True)  # no report of an earlier run counts
    proc = subprocess.run(
        [mvn, "-q", "-B", "test", f"-Dconformance.cases={CASES}"],
        cwd=JAVA,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]

    records = [json.loads(line) for line in CASES.read_text().splitlines()]
    cases = [(r["set"], r["url"]) for r in records if "key" in r]
    sets = {r["set"] for r in records if "set" in r}
    suite = ET.parse(reports / "TEST-org.dustonline.rules.ConformanceTest.xml").getroot()
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    names = [tc.get("name") for tc in suite.iter("testcase")]
    ran = [n[n.index("conformance[") :] for n in names if "conformance[" in n]
    assert len([n for n in ran if n.endswith("] refused")]) == len(sets)
    assert len(ran) - len(sets) == len(cases) >= 400  # one test per case, each run
    assert {n.split("] ", 1)[0][len("conformance[") :] for n in ran} == sets
    other = ET.parse(reports / "TEST-org.dustonline.rules.RuleSetTest.xml").getroot()
    assert int(other.get("tests")) >= 3 and other.get("failures") == other.get("errors") == "0"


def test_java_subscriber_follows_the_rules_topic(kafka_broker):
    """RuleSubscriberTest (clients/java) on the real local broker: versions, retirements,
    tombstones, refusals by reason and a hot swap. Without -Dkafka.bootstrap it is skipped,
    so the report must show it run."""
    if os.environ.get("DUSTONLINE_SKIP_JAVA"):
        pytest.skip("DUSTONLINE_SKIP_JAVA is set")
    mvn = shutil.which("mvn")
    assert mvn, "the Java client's tests need Maven and a JDK 17 (Debian: apt-get install maven)"
    reports = JAVA / "target" / "surefire-reports"
    shutil.rmtree(reports, ignore_errors=True)
    proc = subprocess.run(
        [mvn, "-q", "-B", "test", "-Dtest=RuleSubscriberTest", f"-Dkafka.bootstrap={kafka_broker}"],
        cwd=JAVA,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    suite = ET.parse(reports / "TEST-org.dustonline.rules.RuleSubscriberTest.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "1",
        "0",
        "0",
        "0",
    )
