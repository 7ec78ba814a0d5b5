"""A pattern-tree rule (source node -> target node, one operation per target key) as
crawler rules (rules.py): a regex context matching the source pattern, a transformation
building the target URL.

- context: the source pattern's keys in URL order; literal values escaped, '*' values
  capture groups, keys some members lack optional (host labels, path segments);
- transformation: the target's keys in URL order; keep writes the literal, replace the
  source key's group ($N), ignore drops the key (a host label, a path segment with its
  slash, or a query parameter);
- query parameters: the pattern is over keys, a regex over positions. A source node gets
  one rule per parameter order its training URLs use (the ``max_query_orders`` most
  frequent), all writing the target's most frequent order. The loss: a URL whose order,
  or set of present optional parameters, was never seen in training is not matched.

``measure`` computes a candidate's support and fpr (eq. 3) on the site's training URLs
by applying exactly these rules, so what is validated is what crawlers run.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from ..rules.ruleset import ACTIVE, Rule, rule_order
from ..rules.urls import light_normalize
from .patterntree import DEFAULT_PARAMS, IGNORE, KEEP, REPLACE, STAR, Candidate, Node, Params, key_order, target_rule

_SCHEME = r"([a-zA-Z][a-zA-Z0-9+.\-]*)"
_LABEL = r"([^./?#:@]+)"
_SEGMENT = r"([^/?#]*)"
_VALUE = r"([^&#]*)"


def _esc(s: str) -> str:
    return re.escape(s)


def _query_orders(node: Node, kvs: list, limit: int) -> list[tuple]:
    c = Counter(kvs[i].query_order for i in node.members)
    return [q for q, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def context_of(node: Node, order: tuple) -> tuple[str, dict]:
    """The regex of ``node``'s pattern with query keys in ``order``, and key -> group."""
    groups: dict = {}
    out: list[str] = []

    def cap(key: str, rx: str) -> str:
        groups[key] = len(groups) + 1
        return rx

    p, opt = node.pattern, node.optional
    keys = sorted(p, key=key_order)
    s = p.get("scheme", STAR)
    out.append((cap("scheme", _SCHEME) if s is STAR else _esc(s)) + "://")
    labels = [k for k in keys if k.startswith("auth_")]
    lead = True  # leftmost optional labels carry their own dot: (?:www\.)?
    for k in labels:
        rx = cap(k, _LABEL) if p[k] is STAR else _esc(p[k])
        if lead and k in opt:
            out.append(f"(?:{rx}\\.)?")
        elif lead:
            out.append(rx)
            lead = False
        else:
            out.append(f"(?:\\.{rx})?" if k in opt else "\\." + rx)
    for k in (k for k in keys if k.startswith("path_")):
        if p[k] is STAR:
            rx = "/" + cap(k, _SEGMENT)
            out.append(f"(?:{rx})?" if k in opt else rx)
        else:
            out.append("/" + _esc(p[k]))
    for n, k in enumerate(order):
        sep = "\\?" if n == 0 else "&"
        name = _esc(k[1:].split("#")[0])
        if p.get(k, STAR) is STAR:
            out.append(f"{sep}{name}(?:={cap(k, _VALUE)})?")
        else:
            out.append(f"{sep}{name}" + (f"={_esc(p[k])}" if p[k] else "=?"))
    return "".join(out), groups


def transformation_of(c: Candidate, groups: dict, target_order: tuple) -> str:
    """The target URL from the operations, ``$N`` for replaced values."""
    t = c.target.pattern

    def piece(key: str) -> str | None:
        op, arg = c.ops.get(key, (IGNORE, None))
        if op == KEEP:
            return arg.replace("$", "$$")
        if op == REPLACE:
            if arg in groups:
                return f"${groups[arg]}"
            v = c.source.pattern.get(arg, STAR)
            return None if v is STAR else v.replace("$", "$$")
        return None

    keys = sorted(t, key=key_order)
    scheme = piece("scheme") if "scheme" in t else None
    host = [x for k in keys if k.startswith("auth_") if (x := piece(k)) is not None]
    path = [x for k in keys if k.startswith("path_") if (x := piece(k)) is not None]
    qkeys = list(target_order) + [k for k in keys if k.startswith("?") and k not in target_order]
    query = []
    for k in qkeys:
        x = piece(k)
        if x is not None:
            query.append(k[1:].split("#")[0] + "=" + x)
    url = f"{scheme or 'http'}://{'.'.join(host)}" + ("/" + "/".join(path) if path else "/")
    return url + ("?" + "&".join(query) if query else "")


def rule_id(hosts: list[str], context: str, transformation: str) -> str:
    h = hashlib.sha1("\x1f".join([",".join(hosts), context, transformation]).encode()).hexdigest()
    return "r-" + h[:12]


def to_rules(c: Candidate, kvs: list, params: Params = DEFAULT_PARAMS) -> list[Rule]:
    """One Rule per parameter order of the source node seen in training."""
    hosts = sorted({kvs[i].host for i in c.source.members})
    torders = _query_orders(c.target, kvs, 1)
    torder = torders[0] if torders else ()
    out = []
    for q in _query_orders(c.source, kvs, params.max_query_orders):
        ctx, groups = context_of(c.source, q)
        trans = transformation_of(c, groups, torder)
        out.append(
            Rule(
                id=rule_id(hosts, ctx, trans),
                hosts=hosts,
                context=ctx,
                transformation=trans,
                support=c.support,
                fpr=round(c.fpr, 6),
                freq=len(c.source.members),
                status=ACTIVE,
            )
        )
    return out


def measure(c: Candidate, kvs: list, clusters: list, params: Params = DEFAULT_PARAMS) -> tuple[int, int, float]:
    """(URLs the rule normalizes, support pairs, fpr) on the site's training URLs (§5.2.3,
    eq. 3), together with the target's own rule when c ignores some of its keys (a
    rule into t writes t's format; without it, t's URLs would keep the ignored values
    and never meet the URLs moved onto them). A URL the rules leave as it is (not matched, or matched and written back
    unchanged) is not normalized by it; pairs are counted in every form holding a URL
    the rule changed. The first count is the rule's support (§5.3), so a target's own
    rule (patterntree.unify_targets), which changes few of its URLs, ranks after the
    rules that move other nodes' URLs onto it."""
    rules = to_rules(c, kvs, params)
    tr = target_rule(c)
    if tr is not None:  # the target's URLs in the same format: an ignored key is '*' there (§3)
        rules += [r for r in to_rules(tr, kvs, params) if r.id not in {x.id for x in rules}]
    # RuleSet.explain on URLs normalized already: the first rule of the host, by support
    compiled = [r.compile() for r in sorted(rules, key=rule_order)]
    forms: dict = {}
    moved = 0
    for i, kv in enumerate(kvs):
        key = kv.url
        for cr in compiled:
            if kv.host in cr.rule.hosts:
                out = cr.apply(kv.url)
                if out is not None:
                    key = light_normalize(out)
                    break
        hit = key != kv.url
        moved += hit
        forms.setdefault(key, []).append((clusters[i], hit))
    nsupp = nfpp = 0
    for members in forms.values():
        if len(members) < 2 or not any(m for _, m in members):
            continue
        n = len(members)
        same = Counter(cid for cid, _ in members)
        nsupp += n * (n - 1) // 2
        nfpp += n * (n - 1) // 2 - sum(k * (k - 1) // 2 for k in same.values())
    return moved, nsupp, (nfpp / nsupp if nsupp else 0.0)
