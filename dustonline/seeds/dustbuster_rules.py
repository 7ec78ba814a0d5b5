"""DustBuster's rules in the context/transformation contract (rules.py): one Rule per
substitution, and composed rules for the chains the paper's canonization applies (our
contract does not chain). ``translation_gap`` measures what is lost."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..hashing import short_id
from ..rules.ruleset import ACTIVE, Rule, RuleSet
from ..rules.urls import host_of, light_normalize
from .common import common_ends
from .dustbuster_core import (
    _ALNUM,
    BEGIN,
    END,
    SEP,
    DRule,
    Params,
    Record,
    _key,
    _param_re,
    _url_of,
    canonize,
    tokenize,
)

# ---------------------------------------------------------------- translation to the contract

_RX_SPECIAL = set("\\.[]{}()*+?^$|")
_NA = "[^A-Za-z0-9]"


def _esc(s: str) -> str:
    """Escape for a regex Python and Java read alike (no \\Q...\\E, punctuation only)."""
    return "".join("\\" + c if c in _RX_SPECIAL else c for c in s)


def _lit(s: str) -> str:
    """A literal in a transformation: ``$`` is written ``$$``."""
    return s.replace("$", "$$")


@dataclass
class _Piece:
    """A rule's replaced part as a regex fragment: its groups and its replacement."""

    frag: str
    repl: list  # literals and relative group numbers (1-based within frag)
    ngroups: int = 0
    at_start: bool = False  # alpha starts with ^: must be the URL's start
    at_end: bool = False
    lead_alnum: bool = False
    tail_alnum: bool = False


def _piece(r: DRule) -> _Piece:
    if r.kind == "sub":
        at = r.a.split(SEP)[1:-1] if r.a != SEP else []
        core = [t for t in at if t not in (BEGIN, END)]
        text = "".join(core)
        return _Piece(
            _esc(text),
            [_lit(_url_of(r.b))],
            0,
            bool(at) and at[0] == BEGIN,
            bool(at) and at[-1] == END,
            bool(core) and bool(_ALNUM.match(core[0])),
            bool(core) and bool(_ALNUM.match(core[-1])),
        )
    n = _esc(r.name)
    if r.kind == "param-value":
        return _Piece(f"([?&]{n}=)[^&#]*", [1, _lit(r.value)], 1)
    # omit: "?n=v&" -> "?", "&n=v" -> "", "?n=v" (last) -> ""
    return _Piece(f"(?:(\\?){n}=[^&#]*&|&{n}=[^&#]*|\\?{n}=[^&#]*)", [1], 1)


def _gap(before: _Piece | None, after: _Piece | None) -> str:
    """The group between two pieces (or at either end), honouring token boundaries:
    alpha starting (ending) with an alphanumeric token must not touch another one."""
    need_l = before is not None and before.tail_alnum
    need_r = after is not None and after.lead_alnum
    if after is None:
        return f"({_NA}.*|)" if need_l else "(.*)"
    if need_l and need_r:
        return f"({_NA}|{_NA}.*?{_NA})"
    if need_l:
        return f"({_NA}.*?|)"
    if need_r:
        return f"(|.*?{_NA})"
    return "(.*?)"


def _compose(pieces: list[_Piece]) -> tuple[str, str] | None:
    """Context and transformation for pieces in URL order (one piece: a single rule)."""
    if any(pc.at_start for pc in pieces[1:]) or any(pc.at_end for pc in pieces[:-1]):
        return None
    ctx, trans, g = [], [], 0
    prev = None
    for k, pc in enumerate(pieces):
        if not (k == 0 and pc.at_start):
            ctx.append(_gap(prev, pc))
            g += 1
            trans.append(f"${g}")
        ctx.append(pc.frag)
        for x in pc.repl:
            trans.append(f"${g + x}" if isinstance(x, int) else x)
        g += pc.ngroups
        prev = pc
    if not pieces[-1].at_end:
        ctx.append(_gap(prev, None))
        g += 1
        trans.append(f"${g}")
    return "".join(ctx), "".join(trans)


def _rid(hosts: Iterable[str], ctx: str, trans: str) -> str:
    return short_id("r", "\x1d".join(sorted(hosts)) + "\x1e" + ctx + "\x1e" + trans, 5)


def _make(hosts: Iterable[str], ctx: str, trans: str, support: int) -> Rule:
    hosts = sorted(set(hosts))
    return Rule(
        id=_rid(hosts, ctx, trans), hosts=hosts, context=ctx, transformation=trans, support=support, status=ACTIVE
    )


def _position(r: DRule, url: str, after: int) -> tuple[int, int] | None:
    """Where ``r`` would act in ``url`` at or after char ``after`` (the chain's layout)."""
    if r.kind == "sub":
        core = _url_of(r.a)
        i = url.find(core, after) if core else -1
        return (i, i + len(core)) if i >= 0 else None
    m = _param_re(r.name).search(url, after)
    return (m.start(), m.end()) if m else None


def single_rule(r: DRule, recs: list[Record]) -> Rule | None:
    """The contract Rule of one DUST rule, for the site's hosts (rules are site-specific,
    §3); None when it changes no training URL."""
    c = _compose([_piece(r)])
    if c is None or not any(r.apply(x.url, x.key) != x.url for x in recs):
        return None
    return _make({host_of(x.url) for x in recs}, c[0], c[1], r.support)


def _side_by_side(chain: Sequence[int], rules: Sequence[DRule], url: str) -> tuple[str, str] | None:
    """The chain's rules acting at separate places of ``url``: one context with every
    rule's alpha in URL order, one transformation writing every beta."""
    spans: list[tuple[int, int, int]] = []
    for i in chain:
        pos = _position(rules[i], url, 0)
        while pos is not None and any(a < pos[1] and pos[0] < b for a, b, _ in spans):
            pos = _position(rules[i], url, pos[0] + 1)
        if pos is None:
            return None
        spans.append((pos[0], pos[1], i))
    return _compose([_piece(rules[i]) for _, _, i in sorted(spans)])


def _merged(chain: Sequence[int], rules: Sequence[DRule], url: str, final: str) -> tuple[str, str] | None:
    """The chain's rules acting on overlapping places (a later alpha made by an earlier
    beta): one substitution alpha* -> beta*, the tokens where ``url`` and its canonical
    form differ, widened so that it holds every alpha of the chain where it acted (its
    context, ``^`` and ``$`` included)."""
    if any(rules[i].kind != "sub" for i in chain):
        return None
    t0, tn = tokenize(url), tokenize(final)
    cp, cs = common_ends(t0, tn)
    u = url
    for i in chain:  # replay: where each alpha sat when it acted
        k = _key(tokenize(u))
        pos = k.find(rules[i].a)
        if pos < 0:
            return None
        q, n = k.count(SEP, 0, pos), rules[i].a.count(SEP) - 1
        cp, cs = min(cp, q), min(cs, k.count(SEP) - 1 - q - n)
        u = rules[i].apply(u)
    a, b = t0[cp : len(t0) - cs], tn[cp : len(tn) - cs]
    if not a:
        return None
    return _compose([_piece(DRule("sub", _key(a), _key(b)))])


def composed_rules(rules: Sequence[DRule], singles: Sequence[Rule], recs: list[Record], p: Params) -> list[Rule]:
    """One rule per MA chain of ``canonize`` on the training URLs (module docstring, 5.).

    Kept when, on every training URL it matches, it gives a URL of that URL's Fig. 6 path
    (so never a key the valid rules could not reach) and on at least one exactly the
    canonical form. Its support is set above every single rule's, and a longer chain's
    above a shorter one's, so that RuleSet tries the most complete composition first."""
    chains: dict[tuple[int, ...], list[str]] = defaultdict(list)
    paths: dict[str, set[str]] = {}
    canon: dict[str, str] = {}
    for x in recs:
        tr: list[int] = []
        path: list[str] = []
        canon[x.url] = light_normalize(canonize(x.url, rules, p.MA, tr, path))
        paths[x.url] = {light_normalize(v) for v in path}
        if 2 <= len(tr) <= p.max_chain:
            chains[tuple(tr)].append(x.url)
    site_hosts = {host_of(x.url) for x in recs}
    base = max([len(recs)] + [r.support for r in singles]) + 1
    out: dict[str, Rule] = {}
    for chain in sorted(chains):
        for url in chains[chain][:3]:  # a few instances: the first may be atypical
            c = _side_by_side(chain, rules, url) or _merged(chain, rules, url, canon[url])
            if c is None:
                continue
            cr = Rule(id="t", hosts=[], context=c[0], transformation=c[1]).compile()
            hits = 0
            for x in recs:
                y = cr.apply(x.url)
                if y is None:
                    continue
                y = light_normalize(y)
                if y == canon[x.url]:
                    hits += 1
                elif y not in paths[x.url]:
                    hits = -1
                    break
            if hits > 0:
                r = _make(site_hosts, c[0], c[1], base * (len(chain) - 1) + hits)
                out[r.id] = r
                break
    return list(out.values())


def translation_gap(rules: Sequence[DRule], contract: Sequence[Rule], urls: Iterable[str], MA: int = 10) -> dict:
    """How often the translated RuleSet (no chaining) keys a URL differently from Fig. 6."""
    rs = RuleSet(contract)
    n = diff = 0
    for u in urls:
        n += 1
        diff += rs.canonicalize(u) != light_normalize(canonize(u, rules, MA))
    return {"urls": n, "different": diff, "share": diff / n if n else 0.0}
