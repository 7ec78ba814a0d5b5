"""The record a reader could not turn into a FetchEvent: what every reader yields for
the dead-letter file, in one place so the per-format modules share it."""

from __future__ import annotations

import msgspec

RAW_MAX = 4096  # characters of the raw record kept in a dead letter


class Rejected(msgspec.Struct, frozen=True):
    """A record that could not become a FetchEvent, with enough context to find and fix it."""

    source: str
    line: int
    reason: str
    detail: str
    raw: str
