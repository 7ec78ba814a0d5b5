import os
from pathlib import Path

import pytest


def real_data_dir() -> Path:
    """../shared/data/real beside the repository (CI clones it there); override with DUSTONLINE_REAL_DATA."""
    env = os.environ.get("DUSTONLINE_REAL_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data" / "real"


@pytest.fixture(scope="session")
def real_data() -> Path:
    d = real_data_dir()
    if not d.is_dir():
        pytest.fail(f"real crawl data not found at {d}: clone the repo with shared/ beside it or set DUSTONLINE_REAL_DATA")
    return d
