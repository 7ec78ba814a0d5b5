"""A bound on how long a step may take, for the tests that check a rule or URL cannot
hang a process (the bounds are thousands of times the step's cost; speed itself is
measured in benchmarks/)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def within(seconds: float, what: object = "") -> Iterator[None]:
    """The block takes under ``seconds``, with the garbage collector off meanwhile, as
    timeit does: a full collection of a long test session's heap can take a second, and
    would be charged to a step that takes 0.01 ms."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        t = time.perf_counter()
        yield
        took = time.perf_counter() - t
    finally:
        if enabled:
            gc.enable()
    assert took < seconds, (what, f"{took:.3f} s")
