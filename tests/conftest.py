import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a CI run on a clean clone is
# reproducible and main does not turn red by chance; DUSTONLINE_FUZZ_RANDOM=1 explores new
# examples (with DUSTONLINE_FUZZ_EXAMPLES=5000 for a deeper search of the readers).
settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("DUSTONLINE_FUZZ_RANDOM") else "reproducible")


def real_data_dir() -> Path:
    """../shared/data/real beside the repository (CI clones it there); override with DUSTONLINE_REAL_DATA."""
    env = os.environ.get("DUSTONLINE_REAL_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data" / "real"


@pytest.fixture(scope="session")
def real_data() -> Path:
    d = real_data_dir()
    if not d.is_dir():
        pytest.fail(
            f"real crawl data not found at {d}: clone the repo with shared/ beside it or set DUSTONLINE_REAL_DATA"
        )
    return d


@pytest.fixture(scope="session")
def kafka_broker() -> str:
    """A real single-node broker (scripts/kafka.sh, KRaft, jars from Maven Central):
    reused if one is running, else started here and stopped at the end. A broker that
    cannot be had fails the tests that need it, with kafka.sh's reason, never skips."""
    import subprocess

    script = Path(__file__).resolve().parents[1] / "scripts" / "kafka.sh"
    port = os.environ.get("DUSTONLINE_KAFKA_PORT", "9092")
    started = False
    if subprocess.run(["bash", str(script), "status"], capture_output=True).returncode != 0:
        r = subprocess.run(["bash", str(script), "start", "--fresh"], capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            pytest.fail(f"could not start the local Kafka broker (scripts/kafka.sh start):\n{r.stdout}\n{r.stderr}")
        started = True
    yield f"127.0.0.1:{port}"
    if started:
        subprocess.run(["bash", str(script), "stop"], capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """/usr/bin/chromium for tests/browser.py (scripts/test.sh installs it with
    scripts/chromium.sh ensure). Missing fails the tests that need it, never skips."""
    import browser

    try:
        return browser.chromium_path()
    except browser.ChromiumMissing as e:
        pytest.fail(str(e))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test marked ``pure_python`` instruments the learner's internals (it patches a
    method or a module function to watch it), which compiled modules do not allow. Where
    the learner runs compiled (setup.py), it runs in a child pytest on the pure-Python
    modules (DUSTONLINE_PURE_PYTHON=1): the same source, and test_compiled.py checks that
    both builds learn the same rules."""
    from dustonline import _compiled

    if pyfuncitem.get_closest_marker("pure_python") is None or not _compiled.status.startswith("compiled"):
        return None
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pure-python-") as tmp:  # not the parent's basetemp, which it would prune
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", tmp, pyfuncitem.nodeid],
            env={**os.environ, _compiled.PURE_ENV: "1"},
            cwd=pyfuncitem.config.rootpath,
            capture_output=True,
            text=True,
        )
    if r.returncode != 0:
        pytest.fail(f"on the pure-Python modules:\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}", pytrace=False)
    return True
