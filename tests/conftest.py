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
        r = subprocess.run(["bash", str(script), "start"], capture_output=True, text=True, timeout=900)
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
