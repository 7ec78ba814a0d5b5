"""StormCrawler on the JVM for the tests: clients/stormcrawler built with Maven against
storm-crawler-core from Maven Central and the Java client (clients/java, installed into
the local Maven repository from a copy of its sources, so that no build shares
clients/java/target with tests/test_java_client.py). DUSTONLINE_SKIP_JAVA=1 skips the
tests that use it; otherwise a missing Maven fails them."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JAVA = ROOT / "clients" / "java"
MODULE = ROOT / "clients" / "stormcrawler"


def mvn() -> str:
    if os.environ.get("DUSTONLINE_SKIP_JAVA"):
        pytest.skip("DUSTONLINE_SKIP_JAVA is set")
    path = shutil.which("mvn")
    assert path, "the StormCrawler tests need Maven and a JDK 17 (Debian: apt-get install maven)"
    return path


def run_mvn(args: list[str], cwd: Path) -> None:
    proc = subprocess.run([mvn(), "-q", "-B", *args], cwd=cwd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]


@functools.cache
def install_java_client() -> None:
    """org.dustonline:dustonline-rules as the working tree has it, in ~/.m2."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(JAVA / "pom.xml", tmp)
        shutil.copytree(JAVA / "src" / "main", Path(tmp) / "src" / "main")
        run_mvn(["install", "-Dmaven.test.skip=true"], Path(tmp))


@functools.cache
def classpath() -> str:
    """The module's test classes and every dependency (StormCrawler's included)."""
    install_java_client()
    out = MODULE / "target" / "classpath.txt"
    run_mvn(["test-compile", "dependency:build-classpath", f"-Dmdep.outputFile={out}"], MODULE)
    return f"{MODULE / 'target' / 'test-classes'}{os.pathsep}{out.read_text().strip()}"


def regex_normalize(jobs: list[tuple[str, list[str]]], tmp: Path) -> list[list[str | None]]:
    """Each (regex-normalize.xml text, URLs) applied by StormCrawler's RegexURLNormalizer
    (RegexNormalizerRunner), the file a classpath resource as StormCrawler reads it; the
    outputs in order (None: the filter dropped the URL)."""
    res = tmp / "resources"
    res.mkdir(exist_ok=True)
    args = []
    for i, (xml, urls) in enumerate(jobs):
        (res / f"dust-{i}.xml").write_text(xml, encoding="utf-8")
        (tmp / f"in-{i}.jsonl").write_text("".join(json.dumps(u) + "\n" for u in urls))
        args += [f"dust-{i}.xml", str(tmp / f"in-{i}.jsonl"), str(tmp / f"out-{i}.jsonl")]
    java = shutil.which("java")
    assert java, "the StormCrawler tests need a JDK 17"
    cp = f"{res}{os.pathsep}{classpath()}"
    proc = subprocess.run(
        [java, "-cp", cp, "org.dustonline.stormcrawler.RegexNormalizerRunner", *args],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    # StormCrawler logs a file it cannot parse and applies no rule: say so, not "keys differ"
    assert "error parsing conf file" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    outs = []
    for i, (_, urls) in enumerate(jobs):
        got = [json.loads(line) for line in (tmp / f"out-{i}.jsonl").read_text().splitlines()]
        assert len(got) == len(urls)
        outs.append(got)
    return outs
