"""Heritrix 3: the rules as ``RegexRule`` beans on a Sheet per host (crawler-beans.cxml).

What Heritrix does with them (read in internetarchive/heritrix3):

- ``FrontierPreparer.canonicalize`` keys a URI for the already-seen check with
  ``getCanonicalizationPolicy().canonicalize(curi.getURI())``, the overlays of the URI's
  Sheets in force (``AbstractFrontier``'s events call ``KeyedProperties.loadOverridesFrom``).
- ``RulesCanonicalizationPolicy.canonicalize`` runs the string through every rule of its
  ``rules`` list in order, each on the previous one's output.
- ``RegexRule.canonicalize``: when ``regex`` (``java.util.regex``) full-matches
  (``matcher.matches()``), the output is ``format`` after ``Matcher.appendReplacement``:
  ``$N`` is group N (the longest run of digits that is a group number; "" for a group that
  did not take part), ``\\x`` is a literal x; otherwise the string is unchanged.
- ``SheetOverlaysManager.applyOverlaysTo`` gives a URI the Sheets of every SURT prefix of
  its SURT form (https read as http), the longest prefix last, so it wins; a Sheet's map
  entry ``canonicalizationPolicy.rules`` replaces that bean's ``rules`` for those URIs.

dustonline's rules are host-scoped and first-match-wins, with parameter, scheme and host
rules around the rewrite rules (docs/formats.md, "Order, exactly"), while a Heritrix rule
list is one chain. So each host with rules gets a Sheet whose list is a small program over
one string, with private-use characters (never in a URI Heritrix makes: it %-escapes
non-ASCII) as state markers:

1. the host rule's move to its canonical host (``to_host``), then, on the working URL,
   that host's scheme, parameter and path-edit rules, with the URL as given kept after SEP
   (``W SEP RAW``);
2. the rewrite rules in RuleSet order, each matching ``W SEP ...`` and writing
   ``KEY output``: once one has, no later one finds the SEP, so the first one wins;
3. when none matched W, the same rules on RAW (a rule learned with a dropped parameter in
   its context), writing ``FROM_RAW output``; that output gets the host's scheme and
   parameter rules, then becomes ``KEY output``; with no match at all, ``W`` alone stays;
4. ``KEY output``: the host, scheme, parameter and path-edit rules of the output's own host (the
   anchored copies, for every host of the site that has such rules), then the marker goes.

A parameter rule removes one occurrence per application, so its bean is listed
``DROP_PASSES`` times, or once a name when it has more. A parameter rule of every host
(``hosts: ["*"]``) joins the parameter rules of each host with a Sheet that it does not
except; for the other hosts it
is a bean at the head of the policy's own list, before Heritrix's default rules, with a
lookahead that skips its excepted hosts, and a key bean does the same for keys a rewrite
rule writes on a host without a Sheet.

What the chain does not do is light normalization (RuleSet tries the rules on the URL as
given, then on its light normalization, and normalizes keys): a Heritrix URI is already
in that form but for %-escapes of unreserved characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..params import BARE_TOKENS, EMPTY_QUERY, LAST_SEGMENT, TRAILING_SLASH
from ..pattern import PatternError
from ..pattern import check as check_pattern
from ..ruleset import ACTIVE, Rule, RuleSet, excepted_hosts, is_every_host, parse_transformation, rule_order
from ..urls import site_of_host
from . import Export, Skipped, as_indexed
from .javaregex import escaped_segment

REGEX_RULE = "org.archive.modules.canonicalize.RegexRule"
POLICY = "canonicalizationPolicy"

#: state markers (Unicode private use): the URL as given follows SEP; KEY starts a rewrite
#: rule's output, FROM_RAW one from the URL as given, MOVED a key moved to its host's peer
SEP, KEY, FROM_RAW, MOVED = "\ue000", "\ue001", "\ue002", "\ue003"
MARKERS = SEP + KEY + FROM_RAW + MOVED
#: applications of a parameter bean, at least: each removes one part of the query, and a
#: bean of more names is listed once a name (five utm_ names on one URL are common)
DROP_PASSES = 4


def _passes(names) -> int:
    return max(DROP_PASSES, len(names))


_ANY = r"[\s\S]"


def _x(ch: str) -> str:
    return rf"\x{{{ord(ch):X}}}"


_SEP, _KEY, _RAW, _MOVED = (_x(c) for c in (SEP, KEY, FROM_RAW, MOVED))


def quote(text: str) -> str:
    """``text`` as a literal in a Java regex (ASCII letters and digits as they are,
    ASCII punctuation escaped, anything else as ``\\x{h}``)."""
    out = []
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in "_-"):
            out.append(ch)
        elif ch.isascii() and not ch.isspace() and ch.isprintable():
            out.append("\\" + ch)
        else:
            out.append(_x(ch))
    return "".join(out)


def _host_re(host: str) -> str:
    """The host as ``host_of`` reads it: any letter case, trailing dots."""
    flags = "i" if host.isascii() else "iu"
    return f"(?{flags}:{quote(host)})\\.*"


def _auth_is(host: str) -> str:
    """After a marker: the URL's host (``host_of``: userinfo up to the last '@' and the
    port left out) is ``host``."""
    return rf"(?:(?!://){_ANY})*://(?:[^/?#]*@)?{_host_re(host)}(?::[^/?#]*)?(?:[/?#]|\z)"


@dataclass
class Bean:
    id: str
    regex: str
    format: str
    doc: str


@dataclass
class _Host:
    """A host's rules, as RuleSet indexes them."""

    move: str | None = None
    https: bool = False
    drops: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    rewrites: list[Rule] = field(default_factory=list)

    @property
    def prepares(self) -> bool:
        return self.https or bool(self.drops) or bool(self.edits)


#: ``RulesCanonicalizationPolicy.getDefaultRules()`` (Heritrix 3), in its order: the
#: policy's list when the export sets none
DEFAULT_RULES = (
    "LowercaseRule",
    "StripUserinfoRule",
    "StripWWWNRule",
    "StripSessionIDs",
    "StripSessionCFIDs",
    "FixupQueryString",
)


@dataclass
class _Every:
    """Rules of every host: name -> its excepted hosts (the first rule of a name in
    RuleSet's order holds)."""

    names: dict[str, frozenset[str]] = field(default_factory=dict)

    def of(self, host: str) -> list[str]:
        return [n for n, exc in sorted(self.names.items()) if host not in exc]

    def groups(self) -> list[tuple[list[str], list[str]]]:
        """(names, excepted hosts) for each set of names excepted on the same hosts."""
        by: dict[frozenset[str], list[str]] = {}
        for n, exc in sorted(self.names.items()):
            by.setdefault(exc, []).append(n)
        return sorted(((names, sorted(exc)) for exc, names in by.items()), key=lambda g: g[0])


def _none_of(hosts: Sequence[str], states: str = "") -> str:
    """A lookahead: the URL (after one of ``states``, a marker) is on none of ``hosts``."""
    at = f"[{states}]" if states else ""
    lead = f"(?={at})" if states else ""
    if hosts:
        lead += f"(?!{at}(?:{'|'.join(_auth_is(h) for h in hosts)}))"
    return lead


def _java_format(rule: Rule, ngroups: int) -> str:
    """The transformation as an ``appendReplacement`` format; ValueError naming what the
    format cannot say."""
    out: list[str] = []
    after_ref = False
    for part in parse_transformation(rule.transformation, ngroups):
        if isinstance(part, tuple):
            raise ValueError(
                f"value conversion ${{{part[0]}:{part[1]}}}: RegexRule's format (Matcher.appendReplacement) "
                "has no case conversion"
            )
        if isinstance(part, int):
            out.append(f"${part}")
            after_ref = True
            continue
        text = part.replace("\\", "\\\\").replace("$", "\\$")
        if after_ref and text[:1].isdigit():  # "$1" then "0": Java would read $10 if there were 10 groups
            text = "\\" + text
        out.append(text)
        after_ref = False
    return "".join(out)


def _body(context: str) -> str:
    """The context without its anchors: RegexRule full-matches anyway, and the body is
    wrapped in a larger regex. Java reads the context grammar as Python does with
    UNIX_LINES (clients/java), given here as the scoped flag ``(?d:...)``."""
    parsed = check_pattern(context)
    start = 1 if parsed.anchored_start else 0
    end = len(context) - (1 if parsed.anchored_end else 0)
    return f"(?d:{context[start:end]})"


def _drop_regex(names: Sequence[str], lead: str) -> str:
    """One query part named one of ``names`` removed (params.drop_params, one part a
    pass): the first part and its '&', a later part and the '&' before it, or the only part
    and its '?'. ``lead``: a lookahead that says which states it applies to."""
    return _part_regex("(?:" + "|".join(quote(n) for n in names) + ")(?:=[^&#" + _SEP + "]*)?", lead)


#: a bare token (params.is_bare_token): a whole part without '=' that holds a digit
_TOKEN = rf"[^=&#{_SEP}]*[0-9][^=&#{_SEP}]*"


def _part_regex(part: str, lead: str) -> str:
    """One query part that ``part`` matches whole removed, as ``_drop_regex`` says."""
    alt1 = rf"([^?{_SEP}]*\?){part}&({_ANY}*)"
    alt2 = rf"([^?{_SEP}]*\?[^#{_SEP}]*?)&{part}((?:[&#{_SEP}]{_ANY}*)?)"
    alt3 = rf"([^?{_SEP}]*)\?{part}((?:[#{_SEP}]{_ANY}*)?)"
    return f"{lead}(?:{alt1}|{alt2}|{alt3})"


_DROP_FORMAT = "$1$2$3$4$5$6"


def _edit_beans(w: _Writer, host: str, edits: Sequence[str], lead: str, tag: str) -> list[str]:
    """A host's path edits (params.apply_edits), in its order: an empty query's '?', the
    trailing '/'s of a path longer than '/', a last path segment whose escapes normalized
    equal a literal (the '/' before it kept), then the trailing '/'s again. ``lead`` and
    ``tag`` say which states they apply to."""
    head = rf"(?:(?!://){_ANY})*://[^/?#{_SEP}]*/"  # up to the path's first '/'
    tail = rf"((?:[?#{_SEP}]{_ANY}*)?)"  # the end of the path: query, fragment, SEP or the end
    out = []
    if BARE_TOKENS in edits:
        bid = w.bean(
            f"dust.{tag}bare-tokens.{host}",
            _part_regex(_TOKEN, lead),
            _DROP_FORMAT,
            f"{host}: a query part without '=' that holds a digit is removed (one a pass)",
        )
        out += [bid] * DROP_PASSES
    if EMPTY_QUERY in edits:
        out.append(
            w.bean(
                f"dust.{tag}empty-query.{host}",
                rf"{lead}([^?{_SEP}]*)\?((?:[#{_SEP}]{_ANY}*)?)",
                "$1$2",
                f"{host}: an empty query loses its '?'",
            )
        )
    slashes = []
    if TRAILING_SLASH in edits:
        slashes.append(
            w.bean(
                f"dust.{tag}trailing-slash.{host}",
                rf"{lead}({head}(?:[^?#{_SEP}]*[^/?#{_SEP}])?)/+{tail}",
                "$1$2",
                f"{host}: a path's trailing '/'s are removed",
            )
        )
    out += slashes
    # once one segment is cut the path ends in '/': one alternation does the sorted edits
    last = sorted(e[len(LAST_SEGMENT) :] for e in edits if e.startswith(LAST_SEGMENT))
    names = "|".join(x for x in map(escaped_segment, last) if x is not None)
    if names:
        out.append(
            w.bean(
                f"dust.{tag}last-segment.{host}",
                rf"{lead}({head}(?:[^?#{_SEP}]*/)?)(?:{names}){tail}",
                "$1$2",
                f"{host}: a last path segment {', '.join(last)} is removed (escapes in either hex case)",
            )
        )
        out += slashes
    return out


class _Writer:
    def __init__(self) -> None:
        self.beans: dict[str, Bean] = {}

    def bean(self, id: str, regex: str, format: str, doc: str) -> str:
        if id not in self.beans:
            self.beans[id] = Bean(id, regex, format, doc)
        return id


def export(rules: Sequence[Rule]) -> Export:
    """The crawler-beans.cxml fragment: the policy bean, shared RegexRule beans, one Sheet
    per host with rules and its SurtPrefixesSheetAssociation."""
    rules = as_indexed(rules)
    rs = RuleSet(r for r in rules if r.status == ACTIVE)
    skipped = [Skipped(rid, f"refused by RuleSet: {why}") for rid, why in rs.refused_rules]
    hosts: dict[str, _Host] = {}
    translated: dict[str, tuple[str, str]] = {}  # rule id -> (regex body, format)
    every = _Every()
    for r in rs.rules():
        if is_every_host(r):
            name = str(r.drop_param)
            if "#{" in name or not _xml_ok(name):
                skipped.append(Skipped(r.id, "the parameter name holds '#{' or a character XML 1.0 cannot carry"))
            else:
                every.names.setdefault(name, excepted_hosts(r))
            continue
        if r.canonical_scheme and r.canonical_scheme != "https":
            skipped.append(Skipped(r.id, f"scheme rule to {r.canonical_scheme!r}: RuleSet applies https only"))
            continue
        if r.normalize and not (
            r.normalize in (TRAILING_SLASH, EMPTY_QUERY, BARE_TOKENS) or r.normalize.startswith(LAST_SEGMENT)
        ):
            skipped.append(
                Skipped(
                    r.id,
                    f"path edit {r.normalize!r}: the export writes trailing-slash, bare-tokens, empty-query "
                    "and last-segment edits (a RegexRule format has no case conversion and cannot sort a query)",
                )
            )
            continue
        if not (r.drop_param or r.canonical_scheme or r.canonical_host or r.normalize):
            try:
                translated[r.id] = _translate(r)
            except ValueError as e:
                skipped.append(Skipped(r.id, str(e)))
                continue
        for h in r.hosts:
            st = hosts.setdefault(h.lower(), _Host())
            if r.canonical_host:
                st.move = st.move or r.canonical_host
            elif r.drop_param:
                if r.drop_param not in st.drops:
                    st.drops.append(r.drop_param)
            elif r.canonical_scheme:
                st.https = True
            elif r.normalize:
                if r.normalize not in st.edits:
                    st.edits.append(r.normalize)
            elif all(x.id != r.id for x in st.rewrites):
                st.rewrites.append(r)
    for h, st in hosts.items():
        st.rewrites.sort(key=rule_order)
        st.drops += [n for n in every.of(h) if n not in st.drops]

    w = _Writer()
    sheets: list[tuple[str, list[str]]] = []
    for host in sorted(hosts):
        chain = _sheet(w, host, hosts, translated, every)
        if chain:
            sheets.append((host, chain))
    policy = _policy_beans(w, every)
    return Export(_render(w, sheets, skipped, policy), skipped)


def _policy_beans(w: _Writer, every: _Every) -> list[str]:
    """The every-host beans at the head of the policy's list (hosts without a Sheet)."""
    out = []
    for i, (names, exc) in enumerate(every.groups()):
        bid = w.bean(
            f"dust.every.{i}",
            _drop_regex(names, _none_of(exc)),
            _DROP_FORMAT,
            f"parameter rules of every host: {', '.join(names)}" + (f" (not on {', '.join(exc)})" if exc else ""),
        )
        out += [bid] * _passes(names)
    return out


def _translate(r: Rule) -> tuple[str, str]:
    try:
        body = _body(r.context)
    except PatternError as e:  # RuleSet admitted it: not reached
        raise ValueError(f"context outside the grammar: {e}") from None
    ngroups = re.compile(r.context, re.ASCII).groups
    fmt = _java_format(r, ngroups)
    for what, text in (("context", body), ("transformation", fmt)):
        if "#{" in text:
            raise ValueError(f"the {what} holds '#{{', which Spring reads as an expression in crawler-beans.cxml")
        if any(c in MARKERS for c in text):
            raise ValueError(f"the {what} holds a private-use character the export uses as a marker")
        if not _xml_ok(text):
            raise ValueError(f"the {what} holds a character XML 1.0 cannot carry")
    return body, fmt


def _xml_ok(text: str) -> bool:
    return all(
        c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD or ord(c) >= 0x10000 for c in text
    )


def _prepare_beans(w: _Writer, host: str, st: _Host) -> list[str]:
    """The host's scheme and parameter rules on a working URL (``W SEP RAW``, plain, or
    ``FROM_RAW output``), never on a KEY state: the sheet already chose the host."""
    out = []
    if st.https:
        out.append(
            w.bean(
                "dust.https",
                rf"({_RAW}?)(?i:http)://({_ANY}*)",
                "$1https://$2",
                "scheme rules: http read as https",
            )
        )
    if st.drops:
        bid = w.bean(
            f"dust.drop.{host}",
            _drop_regex(st.drops, rf"(?![{_KEY}{_MOVED}])"),
            _DROP_FORMAT,
            f"parameter rules of {host}: {', '.join(st.drops)}",
        )
        out += [bid] * _passes(st.drops)
    out += _edit_beans(w, host, st.edits, rf"(?![{_KEY}{_MOVED}])", "")
    return out


def _sheet(
    w: _Writer, host: str, hosts: dict[str, _Host], translated: dict[str, tuple[str, str]], every: _Every
) -> list[str]:
    """The rule list of ``host``'s Sheet (bean ids, in order)."""
    st = hosts[host]
    chain: list[str] = []
    here = host
    if st.move:
        chain.append(
            w.bean(
                f"dust.move.{host}",
                rf"((?:(?!://){_ANY})*://(?:[^/?#]*@)?)[^/?#@:]*((?::[^/?#]*)?(?:[/?#]{_ANY}*)?)",
                "$1" + st.move + "$2",
                f"host rule: the URLs of {host} are read on {st.move}",
            )
        )
        here = st.move
        st = hosts.get(here) or _Host(drops=every.of(here))
    prepare = _prepare_beans(w, here, st)
    rewrites = [r for r in st.rewrites if r.id in translated]
    if not rewrites:
        return chain + prepare
    chain.append(w.bean("dust.copy", rf"({_ANY}*)", "$1" + SEP + "$1", "keep the URL as given after SEP"))
    chain += prepare
    for r in rewrites:
        body, fmt = translated[r.id]
        chain.append(w.bean(f"dust.{r.id}", body + _SEP + _ANY + "*", KEY + fmt, f"rewrite rule {r.id}"))
    if st.prepares:
        for r in rewrites:
            body, fmt = translated[r.id]
            chain.append(
                w.bean(
                    f"dust.{r.id}.as-given",
                    rf"[^{_SEP}]*{_SEP}" + body,
                    FROM_RAW + fmt,
                    f"rewrite rule {r.id} on the URL as given",
                )
            )
    chain.append(w.bean("dust.no-rewrite", rf"([^{_SEP}]*){_SEP}{_ANY}*", "$1", "no rewrite rule: the working URL"))
    if st.prepares:
        chain += prepare
        chain.append(w.bean("dust.from-raw", rf"{_RAW}({_ANY}*)", KEY + "$1", "a key from the URL as given"))
    chain += _key_beans(w, here, hosts, every)
    chain.append(w.bean("dust.done", rf"[{_KEY}{_MOVED}]({_ANY}*)", "$1", "the key"))
    return chain


def _key_beans(w: _Writer, here: str, hosts: dict[str, _Host], every: _Every) -> list[str]:
    """The rules of a key's own host (RuleSet._after), for the hosts of ``here``'s site:
    its host rule, else its scheme and parameter rules; on any other host, the rules of
    every host it is not excepted from."""
    site = site_of_host(here)
    peers = sorted(h for h, st in hosts.items() if (st.move or st.prepares) and site_of_host(h) == site)
    moves, schemes, drops = [], [], []
    for h in peers:
        st = hosts[h]
        if st.move:
            moves.append(
                w.bean(
                    f"dust.key-move.{h}",
                    rf"{_KEY}((?:(?!://){_ANY})*://(?:[^/?#]*@)?){_host_re(h)}((?::[^/?#]*)?(?:[/?#]{_ANY}*)?)",
                    MOVED + "$1" + st.move + "$2",
                    f"a key on {h} is read on {st.move}",
                )
            )
        # a key moved here takes this host's scheme and parameter rules, never its move;
        # a host with a move of its own gets them only for keys moved to it
        states = _MOVED if st.move else _KEY + _MOVED
        tag = "moved-" if st.move else ""
        if st.https:
            schemes.append(
                w.bean(
                    f"dust.key-https.{tag}{h}",
                    rf"([{states}])(?i:http)(://(?:[^/?#]*@)?{_host_re(h)}(?::[^/?#]*)?(?:[/?#]{_ANY}*)?)",
                    "$1https$2",
                    f"a key on {h}: http read as https",
                )
            )
        if st.drops:
            bid = w.bean(
                f"dust.key-drop.{tag}{h}",
                _drop_regex(st.drops, f"(?=[{states}]{_auth_is(h)})"),
                _DROP_FORMAT,
                f"a key on {h}: parameters {', '.join(st.drops)}",
            )
            drops += [bid] * _passes(st.drops)
        if st.edits:
            drops += _edit_beans(w, h, st.edits, f"(?=[{states}]{_auth_is(h)})", f"key-{tag}")
    for i, (names, exc) in enumerate(every.groups()):
        bid = w.bean(
            f"dust.key-every.{i}.{site}",
            _drop_regex(names, _none_of(sorted(set(peers) | set(exc)), _KEY + _MOVED)),
            _DROP_FORMAT,
            f"a key on a host of {site} without rules of its own: parameters {', '.join(names)}",
        )
        drops += [bid] * _passes(names)
    return moves + schemes + drops


def surt_prefixes(host: str) -> list[str]:
    """The SURT prefixes of exactly ``host`` (any port or userinfo): Heritrix's SURT form
    reverses the labels (``http://(com,example,www,)/``) and reads https as http."""
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+){3}", host) or host.startswith("["):
        head = f"http://({host}"
    else:
        head = "http://(" + ",".join(reversed(host.split("."))) + ","
    return [head + ")", head + ":", head + "@"]


def _attr(text: str) -> str:
    out = []
    for ch in text:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        elif not (ch.isascii() and ch.isprintable()):
            out.append(f"&#x{ord(ch):X};")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _comment(text: str) -> str:
    return text.replace("--", "- -")


def _render(w: _Writer, sheets: list[tuple[str, list[str]]], skipped: list[Skipped], policy: list[str]) -> str:
    lines = [
        "<!-- dustonline rules for Heritrix 3, written by: dustonline rules export, format heritrix.",
        "     Paste inside <beans> of crawler-beans.cxml. Each host with rules gets a Sheet that",
        f"     replaces {POLICY}.rules for its URIs (SurtPrefixesSheetAssociation); other hosts",
        f"     keep the policy's own rules. The preparer uses the top-level {POLICY} bean",
        "     (autowired); if your profile declares one already, keep yours and delete the one below.",
        f"     {len(sheets)} sheets, {len(w.beans)} RegexRule beans, {len(skipped)} rules skipped. -->",
    ]
    if policy:
        lines[-1:-1] = [
            "     The policy's list is the rules of every host (for hosts without a Sheet), then",
            "     Heritrix's default rules; in a policy of your own, put the dust.every refs first.",
        ]
        lines += [f'<bean id="{POLICY}" class="org.archive.modules.canonicalize.RulesCanonicalizationPolicy">']
        lines += [' <property name="rules">', "  <list>"]
        lines += [f"   <ref bean={_attr(b)}/>" for b in policy]
        lines += [f'   <bean class="org.archive.modules.canonicalize.{c}"/>' for c in DEFAULT_RULES]
        lines += ["  </list>", " </property>", "</bean>", ""]
    else:
        lines += [f'<bean id="{POLICY}" class="org.archive.modules.canonicalize.RulesCanonicalizationPolicy"/>', ""]
    for s in skipped:
        lines.append(f"<!-- skipped {_comment(s.rule_id)}: {_comment(s.reason)} -->")
    if skipped:
        lines.append("")
    for b in w.beans.values():
        lines += [
            f"<!-- {_comment(b.doc)} -->",
            f'<bean id={_attr(b.id)} class="{REGEX_RULE}">',
            f'  <property name="regex" value={_attr(b.regex)}/>',
            f'  <property name="format" value={_attr(b.format)}/>',
            "</bean>",
        ]
    for host, chain in sheets:
        name = f"dust.sheet.{host}"
        lines += ["", f"<!-- {_comment(host)} -->", f'<bean id={_attr(name)} class="org.archive.spring.Sheet">']
        lines += [' <property name="map">', "  <map>", f'   <entry key="{POLICY}.rules">', "    <list>"]
        lines += [f"     <ref bean={_attr(b)}/>" for b in chain]
        lines += ["    </list>", "   </entry>", "  </map>", " </property>", "</bean>"]
        lines += ['<bean class="org.archive.crawler.spring.SurtPrefixesSheetAssociation">']
        lines += [' <property name="surtPrefixes">', "  <list>"]
        lines += [f"   <value>{_attr(p)[1:-1]}</value>" for p in surt_prefixes(host)]
        lines += ["  </list>", " </property>", ' <property name="targetSheetNames">', "  <list>"]
        lines += [f"   <value>{_attr(name)[1:-1]}</value>", "  </list>", " </property>", "</bean>"]
    return "\n".join(lines) + "\n"
