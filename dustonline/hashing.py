"""MurmurHash3 of text, for any ``str``.

mmh3 hashes a ``str`` as its UTF-8 bytes, and on a ``str`` that has no UTF-8 form (a lone
surrogate, ``"\\ud800"``, which a Python caller can put in a URL or a parameter's name) it
does not raise: it crashes the interpreter (a segmentation fault, mmh3 4.x). These hash
the ``surrogatepass`` encoding instead: the same value as mmh3 for every other string,
so ids learned before stay the same, and a bad string costs a hash, not the process.
"""

from __future__ import annotations

import mmh3


def text_bytes(text: str) -> bytes:
    """What mmh3 hashes for ``text``: its UTF-8, lone surrogates passed through. For
    callers that need another of mmh3's functions (``hash_bytes``, both 64-bit halves)."""
    return text.encode("utf-8", "surrogatepass")


def hash64(text: str, seed: int = 0) -> int:
    """The first unsigned 64-bit half of MurmurHash3 x64 128 of ``text``."""
    return mmh3.hash64(text_bytes(text), seed, signed=False)[0]


def hash32(text: str, seed: int = 0) -> int:
    """Unsigned MurmurHash3 x86 32 of ``text``."""
    return mmh3.hash(text_bytes(text), seed, signed=False)


def short_id(prefix: str, text: str, seed: int = 0) -> str:
    """``prefix-`` and 48 bits of ``hash64(text)`` in hex: the ids of rules and names,
    the same for the same text on every run and partition."""
    return f"{prefix}-{hash64(text, seed) >> 16:012x}"
