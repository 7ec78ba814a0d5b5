"""How validation URLs are keyed: as RuleSet hands them to rewrite rules (moved to the
host their host moves to, then that host's names applied), now or before a change."""

from __future__ import annotations

from ..rules.params import to_host
from .names import key_of


def keyed(url: str, target: str | None, names: list[str] | None) -> str:
    """A URL as RuleSet hands it to rewrite rules: moved to ``target``, then ``names``."""
    if target:
        url = to_host(url, target)
    return key_of(url, names) if names else url


def members_of(moves: dict[str, str]) -> dict[str, list[str]]:
    """Per host, the hosts that move to it (sorted): the inverse of ``moves``."""
    out: dict[str, list[str]] = {}
    for moved, target in sorted(moves.items()):
        out.setdefault(target, []).append(moved)
    return out


class KeysBefore:
    """How validation URLs were keyed before this event's first change of names or moves
    (online.py moves their counts from these keys to the new ones): every move then, the
    names of the hosts renamed since, and the validation counts' sequence then."""

    __slots__ = ("moves", "seq", "_names", "_drops", "_members")

    def __init__(self, moves: dict[str, str], drops, seq: int):
        self.moves, self.seq, self._drops = moves, seq, drops
        self._names: dict[str, list[str] | None] = {}
        self._members: dict[str, list[str]] | None = None

    def keep(self, host: str) -> None:
        """``host``'s names are about to change: remember them as they are."""
        if host not in self._names:
            old = self._drops.get(host)
            self._names[host] = list(old) if old else None

    def prepared(self, url: str, host: str) -> str:
        target = self.moves.get(host)
        x = target or host
        return keyed(url, target, self._names[x] if x in self._names else self._drops.get(x))

    def members(self, host: str) -> list[str]:
        """The hosts that moved to ``host`` then."""
        if self._members is None:
            self._members = members_of(self.moves)
        return self._members.get(host) or []
