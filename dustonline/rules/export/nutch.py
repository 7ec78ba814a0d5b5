"""Rules as a Nutch / StormCrawler ``regex-normalize.xml`` (issue 19, item 4).

Nutch's RegexURLNormalizer (and StormCrawler's, adapted from it) applies every
``<regex>`` of the file in order, once, as ``pattern.matcher(url).replaceAll(subst)`` on
the whole URL string. ``RuleSet.canonicalize`` is not a chain: a rule applies only to
its hosts, the first applicable rewrite rule wins, scheme and parameter rules apply
before it, a rule that matches only the URL as given is tried after the others, the
key's own host's rules apply to the key, and every output is lightly normalized
(docs/formats.md, "Order"). The file reproduces that with state kept in the string:
private-use code points (U+E000-U+E00F, ``MARKS``) at its start say which step a URL is
in, and a URL whose host has rules is carried as two copies (as given, and with its
host's scheme, parameter and path-edit rules applied) until a rewrite rule decides it. Patterns
anchored at ``^`` match once; ``\\G`` chains do the per-character work (ASCII case,
percent escapes, dropped parameters). The ``${N:lower}`` / ``${N:upper}`` conversions
and lowercase-path are applied the same way, to the text between two marks.

What the file assumes: the URL it is given is lightly normalized
(``dustonline.rules.urls.light_normalize``); Nutch's BasicURLNormalizer and
StormCrawler's BasicURLNormalizer run first and do that and more (docs/crawlers.md).
The outputs of rules are lightly normalized by the file itself, except that a rule that
writes non-ASCII capitals into a scheme or host gets them lower-cased only by Python.
URLs must not contain the marks. ``tests/test_export_nutch.py`` runs the file through
StormCrawler's RegexURLNormalizer on the JVM and compares with ``RuleSet``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from ..params import (
    BARE_TOKENS,
    EMPTY_QUERY,
    LAST_SEGMENT,
    LOWERCASE_NAMES,
    LOWERCASE_PATH,
    SORT_QUERY,
    TRAILING_SLASH,
)
from ..pattern import Parsed, check
from ..ruleset import (
    ACTIVE,
    Rule,
    RuleError,
    RuleSet,
    check_format,
    excepted_hosts,
    is_every_host,
    parse_transformation,
)
from ..urls import light_normalize, split_authority
from . import Export, Skipped, as_indexed
from .javaregex import cp, digits, escaped_segment, java_context, lit, replacement

# ------------------------------------------------------------------ the marks
A = "\ue000"  # undecided: A <url> B <url with its host's scheme and parameter rules>
A2 = "\ue001"  # as A, the second copy normalized since (https's :443, escapes' hex)
B = "\ue002"  # separates the two copies
C = "\ue003"  # no rule took the second copy: C <second copy> B <url>, tried as given
D = "\ue004"  # a rewrite rule's output, not yet normalized
F = "\ue005"  # a rewrite rule's output for the URL as given: F <sig> G <output>
G = "\ue006"
E = "\ue007"  # a normalized key; the rules of the key's own host still apply
F2 = "\ue008"  # F, normalized; the URL's host's scheme and parameter rules still apply
MV = "\ue009"  # moved by a host rule (not moved again)
LO, LC = "\ue00a", "\ue00b"  # ${N:lower} and lowercase-path: the text between these
UO, UC = "\ue00c", "\ue00d"  # ${N:upper}
E1 = "\ue00e"  # E, moved by a host rule

MARKS = r"\x{e000}-\x{e00f}"
M = "[" + MARKS + "]"


# the scheme: everything up to the first "://" (split_authority); a second one may follow
SCHEME = rf"[^:{MARKS}]*+(?::(?!//)[^:{MARKS}]*+)*+"
USERINFO = rf"(?:[^/?#{MARKS}]*@)?+"  # up to the authority's last '@'
AUTH_END = rf"(?=[/?#{MARKS}]|\z)"
HEX = "[0-9A-Fa-f]"


def host_scope(hosts: Sequence[str]) -> str | None:
    """A pattern that, read at a URL's start, matches when ``host_of(url)`` is one of
    ``hosts`` (lower case, as RuleSet indexes them; hosts ``_plain`` says no URL has are
    left out); None when none is left. The URL is lightly normalized, so its host is in
    lower case already; the port is cut and trailing dots stripped as host_of does."""
    alts = [lit(h) for h in sorted(set(hosts)) if _plain(h)]
    if not alts:
        return None
    return f"{SCHEME}://{USERINFO}(?:{'|'.join(alts)})" + rf"\.*+(?=[:/?#{MARKS}]|\z)"


class _Unexpressible(Exception):
    pass


def java_transformation(t: str, ngroups: int) -> str:
    """The transformation as Java replacement text: ``$N`` kept, a literal digit after a
    reference escaped (Java would read it into the number), ``$$`` as ``\\$``, and a
    converted group between the marks the case rules read."""
    out = []
    after_ref = False
    for p in _literal_host_normalized(parse_transformation(t, ngroups)):
        if isinstance(p, str):
            text = replacement(p)
            if after_ref and p[:1].isascii() and p[:1].isdigit():
                text = "\\" + text
            out.append(text)
            after_ref = False
        elif isinstance(p, int):
            out.append(f"${p}")
            after_ref = True
        else:
            g, conv = p
            o, c = (LO, LC) if conv == "lower" else (UO, UC)
            out.append(f"{o}${g}{c}")
            after_ref = False
    return "".join(out)


def _literal_host_normalized(parts: list) -> list:
    """``parts`` with a literal authority of non-ASCII letters written as light
    normalization writes it (an IDN host as A-labels): a regex cannot compute IDNA, but
    the exporter can, for text known now. Refused (_Unexpressible) when the authority with
    such letters is partly a group reference, or the scheme before it more than one."""
    i = next((k for k, x in enumerate(parts) if isinstance(x, str) and "://" in x), None)
    if i is None:
        return parts
    j = parts[i].index("://") + 3
    span: list = [parts[i][j:]]  # the authority: up to the first '/', '?' or '#' of a literal
    for x in parts[i + 1 :]:
        if isinstance(span[-1], str) and any(c in span[-1] for c in "/?#"):
            break
        span.append(x)
    last = span[-1]
    end = min((n for n in (last.find(c) for c in "/?#") if n >= 0), default=len(last)) if isinstance(last, str) else 0
    literal = [x for x in span[:-1] if isinstance(x, str)] + [last[:end] if isinstance(last, str) else ""]
    if all(x.isascii() for x in literal):
        return parts
    if len(span) > 1 or len(parts[:i]) > 1 or (i and parts[i].index("://") > 0):
        raise _Unexpressible("its output host has non-ASCII letters next to group references (no IDNA in a regex)")
    auth = parts[i][j:][:end]
    normalized = split_authority(light_normalize(f"x-dust://{auth}/"))[1]
    return [*parts[:i], parts[i][:j] + normalized + parts[i][j + end :], *parts[i + 1 :]]


class _Chain:
    """The ``<regex>`` entries, in order, with a comment per section."""

    def __init__(self):
        self.items: list[tuple[str, str, str]] = []  # (comment, pattern, substitution)
        self._comment = ""

    def section(self, comment: str) -> None:
        self._comment = comment

    def add(self, pattern: str, subst: str) -> None:
        self.items.append((self._comment, pattern, subst))
        self._comment = ""


def _g(prefix: str, body: str) -> str:
    """A \\G chain: the first match after ``prefix`` (anchored), each next one where the
    last ended. Group 1 is that start, group 2 the text skipped."""
    return rf"(\G(?!^)|^{prefix})({body})"


@dataclass(frozen=True)
class Prep:
    """What a host's scheme, parameter and path-edit rules do (rules/params.py): hosts
    with the same one share the entries that do it."""

    https: bool
    drops: tuple[str, ...]
    edits: tuple[str, ...]


def _prepare(chain: _Chain, groups: list[tuple[str, str, Prep]]) -> None:
    """``RuleSet._prepare`` (to_https, drop_params, apply_edits) on the URL after a
    prefix, for each (prefix, host scope, Prep): the prefix a pattern with no groups that
    ends where the URL starts. The groups' hosts are disjoint, so the steps of all of
    them run side by side, with one lowercase pass (lowercase-path) between the
    parameters and the other edits, as apply_edits orders them."""
    for pfx, scope, prep in groups:
        at = f"{pfx}(?={scope})"
        if prep.https:
            chain.add(f"^({at})(?i:http)://", "$1https://")
        if prep.drops:
            names = "(?:" + "|".join(lit(n) for n in prep.drops) + ")"
            _remove_parts(chain, at, f"(?!{names}[=&])", rf"{names}(?:=[^&#{MARKS}]*+)?(?=&)")
        if LOWERCASE_NAMES in prep.edits:  # each part's name: up to its '=', '&' or '#'
            chain.add(
                rf"(\G(?!^)&|^{at}[^?{MARKS}]*+\?)([^=&#{MARKS}]*+)([^&#{MARKS}]*+)",
                f"$1{LO}$2{LC}$3",
            )
        if LOWERCASE_PATH in prep.edits:  # the path: from the authority to '?' or '#'
            chain.add(rf"^({at}{SCHEME}://[^/?#{MARKS}]*+)(/[^?#{MARKS}]*+)", f"$1{LO}$2{LC}")
    lowered = [e for e in (LOWERCASE_PATH, LOWERCASE_NAMES) if any(e in prep.edits for _, _, prep in groups)]
    if lowered:
        _case(chain, lower=True, what=" and ".join(lowered))
        chain.add(rf"[{cp(LO)}{cp(LC)}]", "")
    for pfx, scope, prep in groups:
        at = f"{pfx}(?={scope})"
        path = rf"{at}{SCHEME}://[^/?#{MARKS}]*+"
        if BARE_TOKENS in prep.edits:  # parts without '=' holding a digit
            token = rf"[^=&#{MARKS}]*[0-9][^=&#{MARKS}]*(?=&)"
            _remove_parts(chain, at, f"(?!{token})", token)
        if EMPTY_QUERY in prep.edits:
            chain.add(rf"^({at}[^?{MARKS}]*+)\?(?=[#{MARKS}]|\z)", "$1")
        # trailing slashes, the last segment, trailing slashes again (params._order): once
        # one segment is cut the path ends in '/', so one alternation does the sorted edits
        slashes = rf"^({path}/(?:[^?#{MARKS}]*[^/?#{MARKS}])?)/++(?=[?#{MARKS}]|\z)"
        if TRAILING_SLASH in prep.edits:
            chain.add(slashes, "$1")
        segments = [escaped_segment(e[len(LAST_SEGMENT) :]) for e in prep.edits if e.startswith(LAST_SEGMENT)]
        alts = "|".join(x for x in segments if x is not None)
        if alts:
            chain.add(rf"^({path}(?:/[^?#{MARKS}]*)?/)(?:{alts})(?=[?#{MARKS}]|\z)", "$1")
            if TRAILING_SLASH in prep.edits:
                chain.add(slashes, "$1")


def _remove_parts(chain: _Chain, at: str, other: str, part: str) -> None:
    """The query parts ``part`` matches removed from the URL after ``at``: each part put
    between two '&' (one before the query and one after it), so that a removed part goes
    with the '&' before it; ``other`` a lookahead at a part's start that ``part`` would not
    take. The query ends at the first '#'; with every part removed, so is its '?'."""
    q = rf"[^?{MARKS}]*+\?"  # the query starts at the URL's first '?'
    chain.add(rf"^({at}{q})([^#{MARKS}]*+)", "$1&$2&")
    chain.add(_g(at + q, rf"(?:&{other}[^&#{MARKS}]*+)*+") + rf"&{part}", "$1$2")
    chain.add(rf"^({at}[^?{MARKS}]*+)\?&(?=[#{MARKS}]|\z)", "$1")
    chain.add(rf"^({at}{q})&([^#{MARKS}]*)&", "$1$2")


#: the path edits this exporter writes (others, from a later format, skip their rule)
def _known_edit(edit: str) -> bool:
    return edit in (TRAILING_SLASH, EMPTY_QUERY, LOWERCASE_PATH, LOWERCASE_NAMES, BARE_TOKENS) or (
        edit.startswith(LAST_SEGMENT) and len(edit) > len(LAST_SEGMENT)
    )


def _move(chain: _Chain, pfx: str, moves: dict[str, str], mark: str) -> None:
    """Host rules (``to_host``) on the URL after ``pfx``: the host part of the authority
    replaced, userinfo and port kept; ``pfx`` replaced by ``mark``, so that a URL is moved
    once (the host moved to may have a host rule of its own)."""
    by_target: dict[str, list[str]] = {}
    for h, t in sorted(moves.items()):
        if _plain(h):
            by_target.setdefault(t, []).append(h)
    for target, hosts in sorted(by_target.items()):
        alts = "|".join(lit(h) for h in hosts)
        chain.add(
            rf"^{pfx}({SCHEME}://{USERINFO})(?:{alts})\.*+((?::[^/?#{MARKS}]*+)?)(?=[/?#{MARKS}]|\z)",
            f"{mark}$1{replacement(target)}$2",
        )


def _https_default_port(chain: _Chain, pfx: str, subst_prefix: str = "$1") -> None:
    """``light_normalize`` after a scheme rule made a URL https: its ``:443`` goes."""
    chain.add(
        rf"^({pfx}https://{USERINFO}(?:\[[^\]/?#{MARKS}]*+\]|(?!\[)[^/?#:{MARKS}]*+)):443{AUTH_END}",
        subst_prefix,
    )


def _light_normalize(chain: _Chain, pfx: str) -> None:
    """``light_normalize`` on the URL after ``pfx``: fragment, empty path, ASCII case of
    scheme and host, port and trailing dots, percent-escapes. Nothing changes a URL
    without a scheme (no '://', or nothing before it)."""
    url = rf"{pfx}(?!://){SCHEME}://"
    rest = rf"{url}[^/?#{MARKS}]*+"  # the rest starts after the authority
    chain.section("light normalization of rule outputs: fragment, empty path")
    chain.add(rf"^({url}[^#{MARKS}]*+)#[\s\S]*", "$1")
    chain.add(rf"^({rest})(?=\?|\z)", "$1/")
    chain.section("scheme and host in lower case (ASCII; light_normalize also maps non-ASCII capitals)")
    for up in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        body = rf"[^{up}:{MARKS}]*+(?::(?!//)[^{up}:{MARKS}]*+)*+"
        chain.add(_g(pfx, body) + rf"{up}(?=[^{MARKS}]*://)", f"$1$2{up.lower()}")
    for up in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        chain.add(_g(url + USERINFO, rf"[^{up}/?#{MARKS}]*+") + up, f"$1$2{up.lower()}")
    chain.section("port: the scheme's default or an empty one goes, and the host's trailing dots")
    host = rf"{url}{USERINFO}"
    v6 = rf"\[[^\]/?#{MARKS}]*+\]"
    name = rf"(?!\[)[^/?#:{MARKS}]*+"
    for scheme, port in (("http", "80"), ("https", "443")):
        h = rf"{pfx}{scheme}://{USERINFO}"
        chain.add(rf"^({h}(?:{v6}|{name})):(?:{port})?{AUTH_END}", "$1")
    chain.add(rf"^({host}(?:{v6}|{name})):{AUTH_END}", "$1")
    dotted = rf"{host}(?!\[)[^/?#:{MARKS}]*[^./?#:{MARKS}]"
    chain.add(rf"^({dotted})\.++(?=(?::{digits()}*+)?(?:[/?#{MARKS}]|\z))", "$1")
    chain.section("percent-escapes after the authority: a bare % encoded, unreserved ones decoded, hex upper case")
    chain.add(_g(rest, rf"(?:[^%{MARKS}]++|%{HEX}{{2}})*+") + rf"%(?!{HEX}{{2}})", "$1$2%25")
    chain.add(_g(rest, rf"(?:[^%{MARKS}]++|%(?!3[0-9]){HEX}{{2}})*+") + "%3([0-9])", "$1$2$3")
    for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-._~":
        hx = f"{ord(ch):02X}"
        esc = hx[0] + (f"[{hx[1]}{hx[1].lower()}]" if hx[1].isalpha() else hx[1])
        chain.add(_g(rest, rf"(?:[^%{MARKS}]++|%(?!{esc}){HEX}{{2}})*+") + f"%{esc}", f"$1$2{replacement(ch)}")
    _hex_upper(chain, rest)


def _hex_upper(chain: _Chain, rest: str) -> None:
    """The hex digits of every %-escape after ``rest`` in upper case (every '%' there
    starts an escape: bare ones are encoded first)."""
    for x in "abcdef":
        chain.add(_g(rest, rf"(?:[^%{MARKS}]++|%(?!{x}){HEX}{{2}})*+") + f"%{x}({HEX})", f"$1$2%{x.upper()}$3")
    for x in "abcdef":
        chain.add(_g(rest, rf"(?:[^%{MARKS}]++|%(?!{HEX}{x}){HEX}{{2}})*+") + f"%({HEX}){x}", f"$1$2%$3{x.upper()}")


def _renormalize(chain: _Chain, pfx: str, lowered_paths: bool) -> None:
    """``light_normalize`` of a normalized URL after its host's scheme, parameter and
    path-edit rules: a scheme rule may make ``:443`` a default port, and lowercase-path
    lowers the hex digits of the path's escapes; nothing else they do denormalizes."""
    _https_default_port(chain, pfx)
    if lowered_paths:
        _hex_upper(chain, rf"{pfx}(?!://){SCHEME}://[^/?#{MARKS}]*+")


def _case(chain: _Chain, lower: bool, what: str = "") -> None:
    """ASCII letters between two marks lowered (upper-cased): a \\G chain per letter."""
    o, c = (LO, LC) if lower else (UO, UC)
    src = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if lower else "abcdefghijklmnopqrstuvwxyz"
    what = what or f"${{N:{'lower' if lower else 'upper'}}}"
    chain.section(f"{what}: the ASCII letters between two marks")
    for ch in src:
        chain.add(rf"(\G(?!^)|{cp(o)})([^{ch}{cp(c)}]*+){ch}", f"$1$2{ch.swapcase()}")


#: the fields of a record this exporter knows what to do with
KNOWN_FIELDS = {
    "id", "hosts", "context", "transformation", "support", "fpr", "freq", "version", "status", "updated",
    "drop_param", "canonical_scheme", "canonical_host", "normalize", "format", "except_hosts",
    "subsumed_by",  # kept as a rewrite rule: Nutch applies neither sort-query nor lowercase-path
}  # fmt: skip


def _unknown_fields(r: Rule) -> list[str]:
    """Fields set on ``r`` that this exporter does not know: a newer kind of rule."""
    defaults = dict(zip(reversed(Rule.__struct_fields__), reversed(Rule.__struct_defaults__), strict=False))
    out = []
    for name in Rule.__struct_fields__:
        if name not in KNOWN_FIELDS:
            value = getattr(r, name)
            if value is not msgspec.UNSET and (name not in defaults or value != defaults[name]):
                out.append(name)
    return out


class _Plan:
    """The active rules as ``RuleSet._index`` files them, by host (lower case), and the
    rules left out with the reason. Rules of every host (``hosts: ["*"]``) join the drops
    of each host named anywhere that they do not except, and make ``default`` the Prep of
    every host named nowhere (docs/formats.md, "Every host")."""

    def __init__(self, rules: Sequence[Rule]):
        self.skipped: list[Skipped] = []
        admitted = []
        for r in rules:  # refused as RuleSet refuses them, named by id
            try:
                check_format(r)
                if r.status == ACTIVE:
                    r.compile(check=True)
            except RuleError as err:
                self.skipped.append(Skipped(r.id, f"refused by RuleSet ({err.reason}): {err}"))
                continue
            unknown = _unknown_fields(r)
            if unknown and r.status == ACTIVE:
                self.skipped.append(Skipped(r.id, f"a kind of rule this exporter does not know ({', '.join(unknown)})"))
                continue
            admitted.append(r)
        self.active = RuleSet(admitted).rules()
        self.moves: dict[str, str] = {}
        self.drops: dict[str, set[str]] = {}
        self.https: set[str] = set()
        self.edits: dict[str, set[str]] = {}
        self.rewrites: list[tuple[Rule, Parsed, str]] = []
        self.every: dict[str, frozenset[str]] = {}  # name -> its excepted hosts
        for r in self.active:
            if is_every_host(r):
                self._every(r)
                continue
            odd = [h for h in r.hosts if h == "" or h.startswith("[")]
            if odd:
                self.skipped.append(Skipped(r.id, f"an empty host or an IPv6 literal ({odd[0]!r}) is not scoped"))
                continue
            hosts = [h.lower() for h in r.hosts if _plain(h.lower())]  # the others match no URL
            if r.canonical_host:
                for h in hosts:
                    self.moves.setdefault(h, str(r.canonical_host))
            elif r.normalize:
                if r.normalize == SORT_QUERY:
                    self.skipped.append(Skipped(r.id, "sort-query: a chain of regex replacements cannot sort a query"))
                    continue
                if not _known_edit(str(r.normalize)):
                    self.skipped.append(Skipped(r.id, f"a path edit this exporter does not know ({r.normalize})"))
                    continue
                for h in hosts:
                    self.edits.setdefault(h, set()).add(str(r.normalize))
            elif r.drop_param:
                if _xml_unsafe(str(r.drop_param)):
                    self.skipped.append(Skipped(r.id, "the parameter name has a character XML 1.0 cannot hold"))
                    continue
                for h in hosts:
                    self.drops.setdefault(h, set()).add(str(r.drop_param))
            elif r.canonical_scheme:
                if r.canonical_scheme == "https":  # RuleSet leaves other schemes out
                    self.https.update(hosts)
            else:
                parsed = check(r.context)
                try:
                    subst = java_transformation(r.transformation, parsed.groups)
                except _Unexpressible as err:
                    self.skipped.append(Skipped(r.id, str(err)))
                    continue
                if _xml_unsafe(subst):
                    self.skipped.append(Skipped(r.id, "the transformation has a character XML 1.0 cannot hold"))
                    continue
                self.rewrites.append((r, parsed, subst))
        # a rewrite rule an edit subsumes is not tried on the hosts where that edit applies
        # (RuleSet); where the file cannot apply it (sort-query), the rule is what does it
        self.rewrites = [
            (r if r.hosts == keep else msgspec.structs.replace(r, hosts=keep), parsed, subst)
            for r, parsed, subst in self.rewrites
            if (keep := [h for h in r.hosts if not r.subsumed_by or r.subsumed_by not in self.edits.get(h.lower(), ())])
        ]
        # a host named by any rule takes the every-host names it is not excepted from; a
        # host named by none takes them all (``default``)
        self.named = set(self.drops) | self.https | set(self.edits) | set(self.moves.values())
        self.named |= {h.lower() for r, _, _ in self.rewrites for h in r.hosts}
        self.named |= {h for exc in self.every.values() for h in exc}
        self.default = Prep(False, tuple(sorted(self.every)), ()) if self.every else None
        for h in self.named:
            names = {n for n, exc in self.every.items() if h not in exc}
            if names:
                self.drops.setdefault(h, set()).update(names)
        # the hosts whose scheme, parameter and path-edit rules apply (a host moved to may
        # have a host rule of its own: URLs moved there are not moved again)
        prep_hosts = set(self.drops) | self.https | set(self.edits)
        self.prep = {
            h: Prep(h in self.https, tuple(sorted(self.drops.get(h, ()))), tuple(sorted(self.edits.get(h, ()))))
            for h in prep_hosts
        }
        self.preps = sorted(set(self.prep.values()), key=repr)
        self.hosts_of: dict[int, list[str]] = {}
        for h in sorted(prep_hosts):
            self.hosts_of.setdefault(self.preps.index(self.prep[h]), []).append(h)

    def _every(self, r: Rule) -> None:
        """A rule of every host: the first of its name in RuleSet's order holds."""
        name = str(r.drop_param)
        exc = excepted_hosts(r)
        odd = sorted(h for h in exc if not _plain(h))
        if odd:
            self.skipped.append(Skipped(r.id, f"an excepted host that is empty or an IPv6 literal ({odd[0]!r})"))
        elif _xml_unsafe(name):
            self.skipped.append(Skipped(r.id, "the parameter name has a character XML 1.0 cannot hold"))
        else:
            self.every.setdefault(name, exc)

    def default_groups(self, pfx: str) -> list[tuple[str, str, Prep]]:
        """The ``_prepare`` group of the hosts no rule names, after ``pfx``."""
        if self.default is None:
            return []
        named = host_scope(sorted(self.named))
        return [(pfx, "" if named is None else f"(?!{named})", self.default)]

    @property
    def prepares(self) -> bool:
        return bool(self.prep) or self.default is not None


def _plain(host: str) -> bool:
    """A host name ``host_of`` can give: not empty, no IPv6 literal, none of ``:/?#@``
    (the authority ends or the port starts there), no final '.' (host_of strips them)."""
    return bool(host) and not any(c in host for c in ":/?#@[") and not host.endswith(".")


def export(rules: Sequence[Rule]) -> Export:
    """The rule set (as ``RuleSet(rules)`` reads it) as ``regex-normalize.xml``."""
    plan = _Plan(as_indexed(rules))
    chain = _Chain()
    a, a2, b, c, d, f, g, e, f2 = (cp(x) for x in (A, A2, B, C, D, F, G, E, F2))
    rewrites, preps, hosts_of = plan.rewrites, plan.preps, plan.hosts_of
    if plan.moves:
        chain.section("host rules: the URL read on its canonical host")
        _move(chain, f"(?!{M})", plan.moves, MV)
        chain.add(f"^{cp(MV)}", "")
    ruled = set(plan.prep) | {h.lower() for r, _, _ in rewrites for h in r.hosts}
    scope_all = host_scope(sorted(ruled))
    for _, scope, _ in plan.default_groups(""):  # any other URL with a query
        unnamed = rf"(?={scope})[^?{MARKS}]*+\?"
        scope_all = unnamed if scope_all is None else f"(?:{scope_all}|{unnamed})"
    if scope_all is None:
        return Export(_xml(chain, len(plan.active)), plan.skipped)
    slot = rf"[^{b}]*+{b}"  # the first copy and the separator

    chain.section("a URL whose host has rules: two copies, as given and for the host's scheme and parameter rules")
    chain.add(rf"^(?!{M})(?={scope_all})([\s\S]*)", f"{A}$1{B}$1")
    if plan.prepares:
        chain.section("the second copy: its host's scheme, parameter and path-edit rules")
        groups = [(f"{a}{slot}", _scope(hosts), preps[i]) for i, hosts in hosts_of.items()]
        _prepare(chain, groups + plan.default_groups(f"{a}{slot}"))

    chain.section("rewrite rules, first applicable wins (descending support, then id)")
    for r, parsed, subst in rewrites:
        chain.section(f"rule {r.id}")
        chain.add(rf"^{a}{slot}(?={_scope(r.hosts)})(?:{java_context(parsed)})\z", D + subst)
    lowered = {h for h, p in plan.prep.items() if LOWERCASE_PATH in p.edits}
    if plan.https or lowered:
        chain.section(
            "the second copy not normalized (https made :443 a default port, lowercase-path lowered"
            " the hex of escapes): the rules again on its normalization"
        )
        authority = rf"{USERINFO}(?:\[[^\]/?#{MARKS}]*+\]|(?!\[)[^/?#:{MARKS}]*+)"
        if plan.https:
            chain.add(rf"^{a}(?={slot}https://{authority}:443{AUTH_END})", A2)
        if lowered:
            chain.add(rf"^{a}(?={slot}(?!://){SCHEME}://[^/?#{MARKS}]*+[^{MARKS}]*?%(?:[a-f]{HEX}|{HEX}[a-f]))", A2)
        _renormalize(chain, f"{a2}{slot}", bool(lowered))
        for r, parsed, subst in rewrites:
            hosts = [h for h in r.hosts if h.lower() in plan.https | lowered]
            if hosts:
                chain.add(rf"^{a2}{slot}(?={_scope(hosts)})(?:{java_context(parsed)})\z", D + subst)
    chain.section("no rule: the copies are equal, the URL is its key")
    chain.add(rf"^{a}([^{b}]*+){b}\1\z", "$1")
    if plan.prepares:
        chain.section("no rule took the second copy: the rules on the URL as given")
        chain.add(rf"^[{a}{a2}]([^{b}]*+){b}([\s\S]*)", f"{C}$2{B}$1")
        for r, parsed, subst in rewrites:
            by_prep: dict[int, list[str]] = {}
            for h in r.hosts:
                if h.lower() in plan.prep:
                    by_prep.setdefault(preps.index(plan.prep[h.lower()]), []).append(h)
            for i, hosts in sorted(by_prep.items()):
                chain.add(rf"^{c}{slot}(?={_scope(hosts)})(?:{java_context(parsed)})\z", f"{F}{i}{G}{subst}")
        chain.section("no rule at all: the key is the second copy")
        chain.add(rf"^{c}([^{b}]*+){b}[\s\S]*", "$1")
    if not rewrites:
        return Export(_xml(chain, len(plan.active)), plan.skipped)

    if any(LO in s for _, _, s in rewrites):
        _case(chain, lower=True)
    if any(UO in s for _, _, s in rewrites):
        _case(chain, lower=False)
    if any(LO in s or UO in s for _, _, s in rewrites):
        chain.add(rf"[{cp(LO)}-{cp(UC)}]", "")
    _light_normalize(chain, rf"(?:{d}|{f}[0-9]++{g})")
    chain.section("normalized")
    chain.add(rf"^{d}", E)
    if plan.prep:
        chain.add(rf"^{f}([0-9]++){g}", f"{F2}$1{G}")
        chain.section("an output for the URL as given: its host's scheme, parameter and path-edit rules")
        _prepare(chain, [(f"{f2}{i}{g}", "", preps[i]) for i in hosts_of])
        _renormalize(chain, rf"{f2}[0-9]++{g}", bool(lowered))
        chain.add(rf"^{f2}[0-9]++{g}", E)
    e_any = f"[{e}{cp(E1)}]"
    if plan.moves or plan.prepares:
        chain.section("the key's own host's rules: host rule, scheme, parameters, path edits")
        if plan.moves:
            _move(chain, e, plan.moves, E1)
        groups = [(e_any, _scope(hosts), preps[i]) for i, hosts in hosts_of.items()]
        _prepare(chain, groups + plan.default_groups(e_any))
        _renormalize(chain, e_any, bool(lowered))
    chain.section("done")
    chain.add(rf"^{e_any}", "")
    return Export(_xml(chain, len(plan.active)), plan.skipped)


def _scope(hosts: Sequence[str]) -> str:
    scope = host_scope([h.lower() for h in hosts])
    assert scope is not None  # _Plan left out rules of hosts no URL has
    return scope


def _xml_unsafe(text: str) -> bool:
    """Characters XML 1.0 cannot hold even as a reference: a rule that needs one in its
    substitution cannot be written to the file."""
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF):
            return True
    return False


def _xml_text(text: str) -> str:
    """Element text as the normalizer reads it (the first text node, untrimmed): markup
    characters escaped, everything outside printable ASCII as a character reference
    (a literal CR would be read as LF)."""
    out = []
    for ch in text:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif 0x20 <= ord(ch) < 0x7F:
            out.append(ch)
        else:
            out.append(f"&#x{ord(ch):X};")
    return "".join(out)


def _comment(text: str) -> str:
    """Text for an XML comment: printable ASCII, no '--'."""
    safe = "".join(ch if 0x20 <= ord(ch) < 0x7F else f"\\u{ord(ch):04x}" for ch in text)
    return safe.replace("--", "- -")


def _xml(chain: _Chain, rules_in: int) -> str:
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<!-- dustonline rules export for Nutch's and StormCrawler's RegexURLNormalizer:",
        f"     {rules_in} active rule(s). Written by `dustonline rules export` (format nutch);",
        "     the entries apply in order and only together (docs/crawlers.md). Expects",
        "     light-normalized URLs (BasicURLNormalizer first); U+E000-U+E00F mark state. -->",
        "<regex-normalize>",
    ]
    for comment, pattern, subst in chain.items:
        if comment:
            lines.append(f"<!-- {_comment(comment)} -->")
        lines.append(
            f"<regex><pattern>{_xml_text(pattern)}</pattern><substitution>{_xml_text(subst)}</substitution></regex>"
        )
    lines.append("</regex-normalize>")
    return "\n".join(lines) + "\n"
