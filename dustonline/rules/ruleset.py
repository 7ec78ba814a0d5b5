"""Rules as crawlers see them (docs/DESIGN.md §2), and ``RuleSet.canonicalize``.

A rule applies to a URL when the URL's host is in ``hosts`` and ``context`` matches the
whole URL (tried as given, then lightly normalized). The first applicable active rule
wins, rules ordered by descending support, then id; no chaining. Parameter rules
(``drop_param``) and scheme rules (``canonical_scheme``, rules/params.py) come first: the
host's http URLs are read as https and its ignored query parameters are removed, then
the first rewrite rule applies to the rest (or, if none applies to it, to the URL as
given, its output then normalized the same way), and last the key's own host's rules
apply to the key (``RuleSet.explain``; the order in docs/formats.md). The result, or the
URL itself when no rule applies, is lightly normalized (scheme and host case, default
port, percent-encoding), so keys are comparable whichever way they were made.

A transformation is literals, ``$N`` group references, ``$$`` (a literal ``$``) and
``${N:lower}`` / ``${N:upper}`` (group N with ASCII letters case-mapped: the value
conversions of Koppula et al. 2010, Definition 2); see ``parse_transformation``.
"""

from __future__ import annotations

import logging
import operator
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import msgspec

from .params import (
    LOWERCASE_PATH,
    SORT_QUERY,
    applied_edits,
    apply_edits,
    check_edit,
    drop_params,
    lower_ascii,
    query_pairs,
    to_host,
    to_https,
    upper_ascii,
)
from .pattern import PatternError, to_re2
from .pattern import check as check_pattern
from .rule import ACTIVE as ACTIVE  # re-exported: where the rest of the package reads them
from .rule import APPLIERS
from .rule import EVERY_HOST as EVERY_HOST
from .rule import RETIRED as RETIRED
from .rule import Rule as Rule
from .urls import a_label, host_of, light_normalize, lower, site_of_host

_HOST_CACHE = 1 << 16  # hosts whose parameter rules, with the every-host ones, are kept
log = logging.getLogger("dustonline.rules")


class RuleError(ValueError):
    """A rule that cannot be applied; ``reason`` is a short name to count it by."""

    def __init__(self, message: str, reason: str = "bad-rule", rule_id: str = ""):
        super().__init__(message)
        self.reason = reason
        self.rule_id = rule_id


class CompiledRule:
    """Context compiled once; the transformation becomes a %-format over the groups it
    uses, so applying a rule is one full match and one format (the learner calls this for
    every validation URL against every candidate of its host). Rules with value conversions
    get a slower pick of their own; plain rules keep the itemgetter path unchanged."""

    def __init__(self, rule: Rule, check: bool = False):
        self.rule = rule
        if check:
            _admit(rule)
        try:
            rx = re.compile(rule.context, re.ASCII)  # \\d \\w \\s as Java and RE2 read them
        except re.error as e:
            raise RuleError(f"rule {rule.id}: bad context regex: {e}") from None
        except (RecursionError, OverflowError, MemoryError) as e:
            # 3,000 nested groups, x{4294967296}: the compiler itself gives up; a rule
            # from a file or a topic must not take the reader down with it
            raise RuleError(f"rule {rule.id}: bad context regex: {type(e).__name__}: {e}") from None
        # the whole URL must match, with backtracking into alternatives as needed: the
        # semantics of Java's Matcher.matches() and RE2's FullMatch
        self.fullmatch = rx.fullmatch
        self.ngroups = rx.groups
        try:
            parts = parse_transformation(rule.transformation, rx.groups)
        except ValueError as e:
            raise RuleError(f"rule {rule.id}: {e}") from None
        self._fmt = "".join("%s" if not isinstance(p, str) else p.replace("%", "%%") for p in parts)
        refs = [p - 1 for p in parts if isinstance(p, int)]
        convs = [(p[0] - 1, CONVERSIONS[p[1]]) for p in parts if isinstance(p, tuple)]
        if convs:
            # value conversions (${N:lower}): a slower pick, only for the rules that use them
            picks = [
                (p - 1, None) if isinstance(p, int) else (p[0] - 1, CONVERSIONS[p[1]])
                for p in parts
                if not isinstance(p, str)
            ]
            self._pick = lambda g: tuple(g[i] if f is None else f(g[i]) for i, f in picks)
        elif not refs:
            self._pick = lambda g: ()
        elif len(refs) == 1:
            i = refs[0]
            self._pick = lambda g: (g[i],)
        else:
            self._pick = operator.itemgetter(*refs)

    def apply(self, url: str) -> str | None:
        """The rule's output for ``url``, or None when the context does not match it."""
        m = self.fullmatch(url)
        if m is None:
            return None
        return self._fmt % self._pick(m.groups(""))


def _re2_engine():
    """google-re2's compiled-regex class and its both-ends anchor, or an ImportError
    that names the extra to install."""
    try:
        from re2 import Options, _re2
    except ImportError:
        raise ImportError("engine 're2' needs google-re2: pip install 'dustonline[re2]'") from None
    return _re2.RE2, _re2.RE2.Anchor.ANCHOR_BOTH, Options


class RE2CompiledRule(CompiledRule):
    """A rule whose context RE2 full-matches (``RuleSet(rules, engine="re2")``): linear
    time by construction, whatever the check admitted. RE2 is given the context as the
    grammar's parser read it (``pattern.to_re2``), so both engines agree on every URL:
    RE2 picks the same groups as a backtracking engine (leftmost-first submatches, full
    match over the whole text), and an unmatched group gives "" in both. The pybind
    class is called directly: ``re2.compile(...).fullmatch`` costs about 3x more per call
    in its Python wrapper (str offsets recomputed for every match)."""

    def __init__(self, rule: Rule, check: bool = False):
        super().__init__(rule, check)
        RE2, self._both, Options = _re2_engine()
        try:
            parsed = check_pattern(rule.context)  # cached: RuleSet has just checked it
        except PatternError as e:
            raise RuleError(f"rule {rule.id}: context refused: {e}", "unsafe-context", rule.id) from None
        rx = RE2(to_re2(parsed).encode(), Options())
        if not rx.ok():  # beyond RE2's memory bound (8 MiB a pattern): not applied, as refused
            raise RuleError(f"rule {rule.id}: RE2 refuses the context: {rx.error()}", "re2-refused", rule.id)
        self._match = rx.Match

    def apply(self, url: str) -> str | None:
        try:
            b = url.encode()
        except UnicodeEncodeError:  # lone surrogates (no UTF-8 text holds them): the checked re
            return super().apply(url)
        spans = self._match(self._both, b, 0, len(b))
        if spans[0][0] < 0:
            return None
        if len(b) == len(url):  # ASCII, most URLs: byte offsets are character offsets
            return self._fmt % self._pick(tuple("" if i < 0 else url[i:j] for i, j in spans[1:]))
        # RE2 reads UTF-8 code points: every span starts and ends on a character
        return self._fmt % self._pick(tuple("" if i < 0 else b[i:j].decode() for i, j in spans[1:]))


APPLIERS["python"], APPLIERS["re2"] = CompiledRule, RE2CompiledRule  # Rule.compile
#: what may apply rule contexts: Python's ``re`` (always there) and RE2 (``dustonline[re2]``)
ENGINES = tuple(APPLIERS)

#: the rule record formats this reader knows (``Rule.format``; absent is 1)
FORMATS = (1,)


def check_format(rule: Rule) -> None:
    """RuleError (reason ``unknown-format``) for a record of a format version this reader
    does not know: a later format may give a field another meaning, so the record is not
    applied, whatever its status."""
    if rule.format is not msgspec.UNSET and rule.format not in FORMATS:
        raise RuleError(
            f"rule {rule.id}: record format {rule.format} is not one this reader knows"
            f" ({', '.join(map(str, FORMATS))})",
            "unknown-format",
            rule.id,
        )


#: the path edits a rewrite rule may be ``subsumed_by`` (Rule.subsumed_by)
SUBSUMING = (SORT_QUERY, LOWERCASE_PATH)


def _admit(rule: Rule) -> None:
    """The trust boundary (docs/formats.md, "Context grammar"): a rule from a file or a
    topic must have a context of the admitted linear-time grammar, and a transformation
    whose literal host stays on the sites of the rule's hosts. Unchecked, the learner's
    own candidates compile as before."""
    check_format(rule)
    if rule.subsumed_by is not msgspec.UNSET and (
        rule.subsumed_by not in SUBSUMING
        or not rule.context
        or rule.canonical_scheme
        or rule.canonical_host
        or rule.normalize
        or rule.drop_param
    ):
        raise RuleError(
            f"rule {rule.id}: subsumed_by {rule.subsumed_by!r} belongs to a rewrite rule and names"
            f" {' or '.join(SUBSUMING)}",
            "bad-edit",
            rule.id,
        )
    if rule.canonical_host:
        _admit_host_rule(rule)
        return
    if rule.normalize:
        if (
            not check_edit(rule.normalize)
            or rule.context
            or rule.transformation
            or rule.drop_param
            or rule.canonical_scheme
        ):
            raise RuleError(f"rule {rule.id}: normalize {rule.normalize!r} is not a path edit", "bad-edit", rule.id)
        return
    if rule.drop_param or rule.canonical_scheme:
        return
    try:
        check_pattern(rule.context)
    except PatternError as e:
        raise RuleError(f"rule {rule.id}: context refused: {e}", "unsafe-context", rule.id) from None
    host = _literal_host(rule.transformation)
    if host is not None:
        sites = {site_of_host(lower(h).rstrip(".")) for h in rule.hosts}
        if site_of_host(host) not in sites:
            raise RuleError(
                f"rule {rule.id}: transformation leads to host {host!r}, not on the sites of its hosts",
                "foreign-host",
                rule.id,
            )


_HOST_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")


def _admit_host_rule(rule: Rule) -> None:
    """A host rule moves URLs to another host: a lower-case DNS name (A-labels) on the
    site of each of its hosts, never one of them, and nothing else in the record."""
    target = rule.canonical_host
    if not isinstance(target, str) or len(target) > 253 or not _HOST_NAME.fullmatch(target):
        raise RuleError(f"rule {rule.id}: canonical_host {target!r} is not a lower-case host name", "bad-host", rule.id)
    if rule.context or rule.transformation or rule.drop_param or rule.canonical_scheme or rule.normalize:
        raise RuleError(
            f"rule {rule.id}: a host rule has no context, transformation or other action", "bad-host", rule.id
        )
    site = site_of_host(target)
    for h in rule.hosts:
        h = lower(h).rstrip(".")
        if h == target or site_of_host(h) != site:
            raise RuleError(
                f"rule {rule.id}: canonical_host {target!r} is not another host of the site of {h!r}",
                "foreign-host",
                rule.id,
            )


def _literal_host(t: str) -> str | None:
    """The host a transformation writes when its authority is literal text (None when a
    group reference takes part in it)."""
    i = t.find("://")
    if i < 0:
        return None
    rest = t[i + 3 :]
    end = len(rest)
    for ch in "/?#":
        j = rest.find(ch)
        if 0 <= j < end:
            end = j
    auth = rest[:end]
    if "$" in auth:
        return None
    return host_of("http://" + auth)


#: Value conversions a transformation may apply to a group: ``${N:lower}``, ``${N:upper}``.
#: ASCII-only case mapping (A-Z <-> a-z, every other character unchanged): the one mapping
#: Java reproduces identically (``toLowerCase(Locale.ROOT)`` and Python's ``str.lower`` both
#: map non-ASCII letters, and differently, e.g. U+0130).
ascii_lower = lower_ascii

CONVERSIONS = {
    "lower": lower_ascii,
    "upper": upper_ascii,
}


def parse_transformation(t: str, ngroups: int) -> list[str | int | tuple[int, str]]:
    """Literals, group numbers and (group, conversion) pairs. ``$$`` is a literal ``$``;
    ``$N`` takes the longest run of digits that is a valid group number, as Java's Matcher
    does ("$320" with 4 groups is group 3 then "20"), so a Java crawler reads a
    transformation exactly as we do. ``${N:conv}`` (conv one of ``CONVERSIONS``) is group
    N, all digits up to the colon, after the conversion; any other ``${`` is an error, so
    no transformation valid before conversions existed changes meaning."""
    parts: list[str | int | tuple[int, str]] = []
    lit: list[str] = []
    i, n = 0, len(t)
    while i < n:
        ch = t[i]
        if ch != "$":
            lit.append(ch)
            i += 1
            continue
        if i + 1 < n and t[i + 1] == "$":
            lit.append("$")
            i += 2
            continue
        j = i + 1
        if j < n and t[j] == "{":
            end = t.find("}", j)
            if end < 0:
                raise ValueError(f"'${{' at {i} is not closed by '}}'")
            body = t[j + 1 : end]
            num, sep, conv = body.partition(":")
            if not (num.isascii() and num.isdigit()) or not sep:
                raise ValueError(f"'${{{body}}}' at {i} is not ${{N:conversion}}")
            if conv not in CONVERSIONS:
                raise ValueError(
                    f"'${{{body}}}' at {i}: unknown conversion {conv!r}, choose from {', '.join(sorted(CONVERSIONS))}"
                )
            g = int(num)
            if not 1 <= g <= ngroups:
                raise ValueError(f"transformation refers to ${g}, context has {ngroups} groups")
            if lit:
                parts.append("".join(lit))
                lit = []
            parts.append((g, conv))
            i = end + 1
            continue
        if j >= n or not "0" <= t[j] <= "9":  # ASCII digits only, as Java's Matcher reads $N
            raise ValueError(f"'$' at {i} is neither $$, a group reference nor ${{N:conversion}}")
        g = int(t[j])
        j += 1
        while j < n and "0" <= t[j] <= "9" and g * 10 + int(t[j]) <= ngroups:
            g = g * 10 + int(t[j])
            j += 1
        if not 1 <= g <= ngroups:
            raise ValueError(f"transformation refers to ${g}, context has {ngroups} groups")
        if lit:
            parts.append("".join(lit))
            lit = []
        parts.append(g)
        i = j
    if lit:
        parts.append("".join(lit))
    return parts


def _other_action(rule: Rule) -> bool:
    return bool(rule.canonical_scheme or rule.canonical_host or rule.normalize or rule.context or rule.transformation)


def is_every_host(rule: Rule) -> bool:
    """A parameter rule of every host but its ``except_hosts`` (docs/formats.md): only a
    rule that drops a name and does nothing else; any other record of host ``*`` is one
    of a host called ``*``, which no URL has."""
    return bool(rule.drop_param) and rule.hosts == [EVERY_HOST] and not _other_action(rule)


def excepted_hosts(rule: Rule) -> frozenset[str]:
    """A rule of every host's excepted hosts as hosts are compared: lowered, A-labels."""
    return frozenset(a_label(lower(h)) for h in rule.except_hosts or ())


def rule_order(rule: Rule) -> tuple:
    return (-rule.support, rule.id)


def decide(url: str, rules) -> tuple[CompiledRule | None, str]:
    """The first of ``rules`` (in the order crawlers try them) that rewrites ``url``, and
    the key. Rules are tried on the URL as given (as they were learned), then on its light
    normalization: a key is itself normalized, so this keeps keys fixed points."""
    for cr in rules:
        out = cr.apply(url)
        if out is not None:
            return cr, light_normalize(out)
    norm = light_normalize(url)
    if norm != url and rules:
        for cr in rules:
            out = cr.apply(norm)
            if out is not None:
                return cr, light_normalize(out)
    return None, norm


class RuleSet:
    """Active rules indexed by host, so a URL is tried only against its host's rules."""

    def __init__(self, rules: Iterable[Rule] = (), engine: str = "python"):
        """Rules outside the admitted grammar are left out, counted in ``refused`` (by
        reason) and listed in ``refused_rules`` (id, reason). ``engine`` applies the
        contexts: ``python`` (``re``) or ``re2`` (google-re2, the ``re2`` extra; the
        same keys, ImportError naming the extra when it is not installed)."""
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}, choose from {', '.join(ENGINES)}")
        if engine == "re2":
            _re2_engine()  # missing: say so now, not at the first rule
        self.engine = engine
        self._by_id: dict[str, CompiledRule] = {}
        self.refused: dict[str, int] = {}
        self.refused_rules: list[tuple[str, str]] = []
        self._by_host: dict[str, list[CompiledRule]] = {}
        self._drops: dict[str, dict[str, Rule]] = {}  # host -> parameter name -> its rule
        self._https: dict[str, Rule] = {}  # host -> its scheme rule
        self._moves: dict[str, Rule] = {}  # host -> its host rule
        self._edits: dict[str, dict[str, Rule]] = {}  # host -> path edit -> its rule
        self._pre: set[str] = set()
        self._every: dict[str, tuple[Rule, frozenset[str]]] = {}  # every-host parameter rules, excepted hosts
        self._host_drops: dict[str, dict[str, Rule]] = {}  # host -> its parameter rules and every host's
        for r in rules:
            self._add(r)
        self._index()

    def _add(self, r: Rule, where: str = "") -> None:
        """One record of a snapshot (``where``: its file:line): an active rule checked and
        compiled, a refused one counted; a record of an unknown format is refused whatever
        its status."""
        try:
            check_format(r)
            if r.status == ACTIVE:
                self._by_id[r.id] = r.compile(check=True, engine=self.engine)
        except RuleError as e:
            self._refuse(RuleError(f"{where}{e}", e.reason, e.rule_id) if where else e)

    def _refuse(self, e: RuleError) -> None:
        self.refused[e.reason] = self.refused.get(e.reason, 0) + 1
        self.refused_rules.append((e.rule_id, str(e)))
        log.warning("%s", e)

    @classmethod
    def from_compiled(cls, compiled: Iterable[CompiledRule]) -> RuleSet:
        """A rule set over rules compiled already (a subscriber swapping in updates)."""
        rs = cls()
        rs._by_id = {c.rule.id: c for c in compiled if c.rule.status == ACTIVE}
        rs._index()
        return rs

    def _index(self) -> None:
        by_host: dict[str, list[CompiledRule]] = {}
        drops: dict[str, dict[str, Rule]] = {}
        https: dict[str, Rule] = {}
        moves: dict[str, Rule] = {}
        edits: dict[str, dict[str, Rule]] = {}
        every: dict[str, tuple[Rule, frozenset[str]]] = {}
        for cr in sorted(self._by_id.values(), key=lambda c: rule_order(c.rule)):
            name, scheme = cr.rule.drop_param, cr.rule.canonical_scheme
            if is_every_host(cr.rule):
                every.setdefault(str(name), (cr.rule, excepted_hosts(cr.rule)))
                continue
            for h in cr.rule.hosts:
                if cr.rule.canonical_host:
                    moves.setdefault(a_label(lower(h)), cr.rule)
                elif cr.rule.normalize:
                    edits.setdefault(a_label(lower(h)), {}).setdefault(cr.rule.normalize, cr.rule)
                elif name:
                    drops.setdefault(a_label(lower(h)), {}).setdefault(name, cr.rule)
                elif scheme:
                    if scheme == "https":  # the one scheme rule there is; others are left out
                        https.setdefault(a_label(lower(h)), cr.rule)
                else:
                    by_host.setdefault(a_label(lower(h)), []).append(cr)
        for h, host_edits in edits.items():  # a rule an edit of the host already does is not tried there
            crs = by_host.get(h)
            if crs and any(cr.rule.subsumed_by in host_edits for cr in crs):
                by_host[h] = [cr for cr in crs if cr.rule.subsumed_by not in host_edits]
        self._by_host = by_host
        self._drops = drops
        self._https = https
        self._moves = moves
        self._edits = edits
        self._pre = set(drops) | set(https) | set(moves) | set(edits)  # hosts whose URLs are normalized first
        self._every = every
        self._host_drops = {}

    def _pre_host(self, host: str, url: str) -> bool:
        """Is ``url`` of ``host`` normalized before rewrite rules apply? Rules of every
        host drop query parameters only: without a ``?`` they change nothing."""
        return host in self._pre or (bool(self._every) and "?" in url)

    def _drops_of(self, host: str) -> dict[str, Rule] | None:
        """The host's parameter rules, then the every-host ones it is not excepted from."""
        if not self._every:
            return self._drops.get(host)
        d = self._host_drops.get(host)
        if d is None:
            d = dict(self._drops.get(host) or {})
            for name, (rule, exc) in self._every.items():
                if host not in exc:
                    d.setdefault(name, rule)
            if len(self._host_drops) >= _HOST_CACHE:
                self._host_drops.clear()
            self._host_drops[host] = d
        return d

    # ------------------------------------------------------------ loading / saving
    @classmethod
    def load(cls, path: str | Path, engine: str = "python") -> RuleSet:
        """A rules file. A refused rule is skipped with a warning naming file:line, the
        rule id and the reason, and counted (``refused``); the rest load (a malformed
        line still ends the load: the file is not a rules file)."""
        rs = cls(engine=engine)
        for n, r in _numbered(path):
            rs._add(r, f"{path}:{n}: ")
        rs._index()
        return rs

    def save(self, path: str | Path) -> None:
        write_rules(path, self.rules())

    def rules(self) -> list[Rule]:
        return sorted((c.rule for c in self._by_id.values()), key=rule_order)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._by_id

    def upsert(self, rule: Rule) -> bool:
        """Apply one update record; stale versions are ignored. True when it changed the set."""
        check_format(rule)  # RuleError: the set is unchanged
        cur = self._by_id.get(rule.id)
        if cur is not None and cur.rule.version >= rule.version:
            return False
        if rule.status == ACTIVE:
            self._by_id[rule.id] = rule.compile(check=True, engine=self.engine)  # RuleError: the set is unchanged
        elif cur is None:
            return False
        else:
            del self._by_id[rule.id]
        self._index()
        return True

    # ------------------------------------------------------------ applying
    def canonicalize(self, url: str) -> str:
        host = host_of(url)
        if not self._pre and not self._every:
            return decide(url, self._by_host.get(host, ()))[1]
        move = self._moves.get(host)
        if move is not None:  # the URL is read on the canonical host, and is given as that
            host = move.canonical_host  # type: ignore[assignment]
            url = to_host(url, host)
        rules = self._by_host.get(host, ())
        if not self._pre_host(host, url):  # a host without parameter or scheme rules
            cr, key = decide(url, rules)
            return key if cr is None else self._after(key)  # only a rewrite moves a URL to another host
        # explain's steps, without naming the rules that took them
        u = to_https(url) if host in self._https else url
        drops = self._drops_of(host)
        if drops:
            u = drop_params(u, drops)
        edits = self._edits.get(host)
        if edits:
            u = apply_edits(u, edits)
        cr, key = decide(u, rules)
        if cr is not None:
            return self._after(key)
        return key if u == url else self._explain(url, host)[1]  # the URL as moved: not moved again

    def _after(self, key: str) -> str:
        """The key with its own host's host, scheme and parameter rules applied: a rewrite
        rule may move a URL to another host (``www.x.com`` -> ``x.com``), whose rules then
        hold."""
        host = host_of(key)
        if not self._pre_host(host, key):
            return key
        move = self._moves.get(host)
        if move is not None:
            host = move.canonical_host  # type: ignore[assignment]
            return light_normalize(self._prepare(to_host(key, host), host)[0])
        out, changed_by = self._prepare(key, host)
        return key if changed_by is None else light_normalize(out)

    def _prepare(self, url: str, host: str) -> tuple[str, Rule | None]:
        """``url`` with its host's scheme rule and parameter rules applied, and the first
        of those rules that changed it."""
        first = None
        scheme = self._https.get(host)
        if scheme is not None:
            out = to_https(url)
            if out != url:
                first, url = scheme, out
        drops = self._drops_of(host)
        if drops:
            out = drop_params(url, drops)
            if out != url:
                if first is None:
                    names = {n for n, _ in query_pairs(url)}
                    first = next(r for n, r in drops.items() if n in names)
                url = out
        edits = self._edits.get(host)
        if edits:
            out = apply_edits(url, edits)
            if out != url:
                if first is None:
                    first = edits[applied_edits(url, edits)[0]]
                url = out
        return url, first

    def explain(self, url: str) -> tuple[Rule | None, str]:
        """The rule that decides ``url`` (None: only light normalization) and the key.

        The host's scheme rule and parameter rules apply first, and ``decide`` runs over the
        host's rewrite rules on what is left. When no rewrite rule applies to it but one
        applies to the URL as given (a rule learned with the parameter in its context),
        that one decides, and the host's rules apply to its output. Last, the rules of the
        key's own host apply to the key. The deciding rule is the rewrite rule, or else the
        first scheme or parameter rule that changed the URL, or else the host rule that moved
        it to another host (which comes first of all)."""
        host = host_of(url)
        move = self._moves.get(host)
        if move is None:
            return self._explain(url, host)
        host = move.canonical_host  # type: ignore[assignment]
        rule, key = self._explain(to_host(url, host), host)
        return move if rule is None else rule, key

    def _explain(self, url: str, host: str) -> tuple[Rule | None, str]:
        rules = self._by_host.get(host, ())
        if not self._pre_host(host, url):
            cr, key = decide(url, rules)
            if cr is None:
                return None, key
            return cr.rule, self._after(key) if self._pre or self._every else key
        stripped, first = self._prepare(url, host)
        cr, key = decide(stripped, rules)
        if cr is None and first is not None:
            raw, out = decide(url, rules)
            if raw is not None:
                return raw.rule, self._after(light_normalize(self._prepare(out, host)[0]))
            return first, key  # the URL's own host: its rules have applied
        return (None if cr is None else cr.rule), key if cr is None else self._after(key)

    def applicable(self, url: str) -> list[Rule]:
        """The host's parameter rules that drop something from ``url``, then the rewrite
        rules whose context matches what they leave (or, when none does, the URL)."""
        host = host_of(url)
        move = self._moves.get(host)
        if move is None:
            return self._applicable(url, host)
        host = move.canonical_host  # type: ignore[assignment]
        return [move] + self._applicable(to_host(url, host), host)

    def _applicable(self, url: str, host: str) -> list[Rule]:
        drops = self._drops_of(host) or {}
        names = {n for n, _ in query_pairs(url)}
        rules = self._by_host.get(host, ())
        stripped, _ = self._prepare(url, host)
        out = [cr.rule for cr in rules if cr.apply(stripped) is not None]
        if not out and stripped != url:
            out = [cr.rule for cr in rules if cr.apply(url) is not None]
        scheme = self._https.get(host)
        pre = [scheme] if scheme is not None and to_https(url) != url else []
        pre += [r for n, r in drops.items() if n in names]
        edits = self._edits.get(host, {})
        dropped = drop_params(url, drops) if drops else url
        pre += [edits[e] for e in applied_edits(dropped, edits)]
        return pre + out


_decoder = msgspec.json.Decoder(Rule)
_encoder = msgspec.json.Encoder()


def read_rules(path: str | Path) -> Iterator[Rule]:
    for _, r in _numbered(path):
        yield r


def _numbered(path: str | Path) -> Iterator[tuple[int, Rule]]:
    p = Path(path)
    try:
        fh = p.open("rb")
    except OSError as e:
        raise RuleError(f"cannot read rules file {p}: {e.strerror}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rule = _decoder.decode(line)
            except msgspec.DecodeError as e:
                raise RuleError(f"{p}:{n}: not a rule record: {e}") from None
            yield n, rule


def write_rules(path: str | Path | IO[bytes], rules: Iterable[Rule]) -> int:
    n = 0
    if hasattr(path, "write"):
        for r in rules:
            path.write(_encoder.encode(r) + b"\n")
            n += 1
        return n
    with open(path, "wb") as fh:
        return write_rules(fh, rules)


def encode_rule(rule: Rule) -> bytes:
    return _encoder.encode(rule)
