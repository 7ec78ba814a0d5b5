"""What long commands (learn, eval, replay) share about the process they run in."""

from __future__ import annotations

import sys


def tune_gc() -> None:
    """A learner holds millions of long-lived, acyclic cache entries; CPython's default
    full collection re-scans all of them every time the heap grows by 25% (measured: 11%
    of a 200k-event run). Full collections every 1000 young-generation passes instead."""
    import gc

    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, 1000)


def progress_bar(enabled: bool, initial: int = 0):
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit=" ev", unit_scale=True, file=sys.stderr, mininterval=0.5, desc="learning", initial=initial)
