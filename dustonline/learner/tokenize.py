"""The thesis tokenizer (§4.1.1): runs of ASCII letters, runs of digits, every other
character a token of its own. Case is kept; alignment compares case-insensitively."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|[^A-Za-z0-9]", re.S)

ALPHA, NUM, PUNCT = "a", "n", "p"

#: The thesis splits consensus sequences into subsequences at these (§4.2.1.2).
DELIMITERS = frozenset("/?=&#;:.")


def tokenize(url: str) -> list[str]:
    return _TOKEN.findall(url)


def token_type(token: str) -> str:
    c = token[0]
    if c.isascii() and c.isalpha():
        return ALPHA
    if c.isascii() and c.isdigit():
        return NUM
    return PUNCT
