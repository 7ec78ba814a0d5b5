"""Consensus -> rule (thesis §4.2.1.1-4.2.1.2), as structured parts rather than strings.

Parts keep what a string would lose: which pieces are literal values of variant or
irrelevant token sets. That is what lets rules of the same shape learned on different
clusters be merged and generalized (generalize.py, docs/DESIGN.md §6).

Part kinds:
  ("L", text)            literal in context and transformation (invariant delimiters)
  ("C", lazy)            a capture: context ``([^/?=&#;:.]+)``, transformation ``$N``
  ("T", regex)           a typed capture (letters, digits, literal punctuation), ``$N``
  ("V", values, chosen)  variant span: context ``(?:v1|v2)``, transformation ``chosen``
  ("O", values)          irrelevant run: context ``(?:v1|v2)?``, nothing in transformation

Splitting follows the thesis: subsequences between the delimiters / ? = & # ; : . ; an
all-invariant subsequence is one capture. Two refinements, both so that one
duplicate-causing thing is one part whatever its value: a subsequence that holds a variant
set becomes one variant part, so a session id is one value rather than a column per
token; and runs of irrelevant sets are merged into one optional part ("/index.html").
"""

from __future__ import annotations

from collections import Counter

from .align import GAP, Consensus
from .tokenize import DELIMITERS

SEG = "[^/?=&#;:.]+"
_INV, _VAR, _IRR = 0, 1, 2


def classify(col: dict[str, int]) -> int:
    if GAP in col:
        return _IRR
    return _INV if len(col) == 1 else _VAR


def _punct(col: dict[str, int]) -> bool:
    """A column of delimiters (and gaps) only."""
    for t in col:
        if t and t not in DELIMITERS:
            return False
    return True


def _noise(puncts: list[bool], kinds: list[int]) -> float:
    """The share of token sets that vary. A set is a delimiter or a run of the word
    tokens between two: tokenization splits ``06381D3C67F8`` into digit and letter runs,
    and a session id counted token by token outweighed the page's whole path."""
    sets = varying = 0
    in_word = word_varies = False
    for punct, kind in zip(puncts, kinds):
        if punct:
            if in_word:
                sets += 1
                varying += word_varies
                in_word = False
            sets += 1
            varying += kind != _INV
        else:
            if not in_word:
                in_word, word_varies = True, False
            word_varies = word_varies or kind != _INV
    if in_word:
        sets += 1
        varying += word_varies
    return varying / sets if sets else 0.0


def parts_of(cons: Consensus, max_noise: float = 1.0) -> list[tuple] | None:
    """Parts of the rule for one aligned cluster, or None when it teaches nothing:
    identical URLs (no set varies) or noise (more than ``max_noise`` of the sets vary,
    the mark of unrelated URLs sharing one body, such as soft-404 pages)."""
    cols = cons.cols
    kinds = [_IRR if GAP in c else _INV if len(c) == 1 else _VAR for c in cols]  # classify, inlined
    if _VAR not in kinds and _IRR not in kinds:
        return None
    puncts = [_punct(c) for c in cols]
    if _noise(puncts, kinds) > max_noise:
        return None
    rows = cons.rows
    parts: list[tuple] = []
    pcols: list[list[int]] = []  # the columns of each part
    span: list[int] = []
    for ci, kind in enumerate(kinds):
        if kind == _INV and puncts[ci]:  # an invariant delimiter
            _span_parts(span, kinds, cols, rows, parts, pcols)
            span = []
            tok = next(iter(cols[ci]))
            if parts and parts[-1][0] == "L":
                parts[-1] = ("L", parts[-1][1] + tok)
                pcols[-1].append(ci)
            else:
                parts.append(("L", tok))
                pcols.append([ci])
        else:
            span.append(ci)
    _span_parts(span, kinds, cols, rows, parts, pcols)
    parts, pcols = _join_variants(parts, pcols, rows)
    return _written_as_target(parts, pcols, rows, kinds)


def _written_as_target(parts: list[tuple], pcols: list[list[int]], rows, kinds) -> list[tuple] | None:
    """Every variant is written as one row of the cluster has it: the row with the fewest
    optional tokens (which the rule drops), then the most common combination of variant
    values. Chosen one variant at a time, the key could be a URL no site serves
    ("/news=15379" from "/news.php?id=15379" ~ "/news/15379"). None when the rule would
    keep a parameter's name and drop the value the target has (``?id=&``): a key no
    site serves, for any value."""
    vparts = [i for i, p in enumerate(parts) if p[0] == "V"]
    irrelevant = [c for c, k in enumerate(kinds) if k == _IRR]

    def combo(row) -> tuple[str, ...]:
        return tuple("".join(row[c] for c in pcols[i]) for i in vparts)

    counts = Counter(combo(r) for r in rows)
    target = min(rows, key=lambda r: (sum(1 for c in irrelevant if r[c] != GAP), -counts[combo(r)], combo(r)))
    if _drops_a_value(parts, pcols, target):
        return None
    out = list(parts)
    for i, value in zip(vparts, combo(target)):
        out[i] = ("V", parts[i][1], value)
    return out


def _drops_a_value(parts: list[tuple], pcols: list[list[int]], target) -> bool:
    """An optional part between a literal that ends a name (``=``) and one that starts
    the next part (``&``, ``#``) or the URL's end, holding a value in ``target``."""
    for i, p in enumerate(parts):
        if p[0] != "O" or i == 0 or parts[i - 1][0] != "L" or not parts[i - 1][1].endswith("="):
            continue
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        if (nxt is None or (nxt[0] == "L" and nxt[1][:1] in ("&", "#"))) and any(target[c] != GAP for c in pcols[i]):
            return True
    return False


def _join_variants(parts: list[tuple], pcols: list[list[int]], rows) -> tuple[list[tuple], list[list[int]]]:
    """Variant parts separated only by delimiters ("2.83.4" ~ "3.8.0": three variant
    tokens) become one variant part of the values the rows show whole. As three parts,
    the rule would accept every combination of the tokens' values, and map versions,
    languages or mirrors that were never seen as duplicates ("2.8.4")."""
    out: list[tuple] = []
    ocols: list[list[int]] = []
    i = 0
    while i < len(parts):
        j = i
        if parts[i][0] == "V":
            while j + 2 < len(parts) and parts[j + 1][0] == "L" and parts[j + 2][0] == "V":
                j += 2
        if j == i:
            ocols.append(pcols[i])
            out.append(parts[i])
        else:
            cs = [c for k in range(i, j + 1) for c in pcols[k]]
            ocols.append(cs)
            texts = ["".join(r[c] for c in cs) for r in rows]
            counts = Counter(texts)
            chosen = min(counts, key=lambda v: (-counts[v], v))
            out.append(("V", tuple(sorted(counts)), chosen))
        i = j + 1
    return out, ocols


def _span_parts(span, kinds, cols, rows, parts, pcols) -> None:
    if not span:
        return
    ks = [kinds[c] for c in span]
    if all(k == _INV for k in ks):
        parts.append(("C", False))
        pcols.append(list(span))
        return
    if _VAR not in ks:
        # invariant runs capture, irrelevant runs are optional
        chunks = [("opt" if irr else "var", cs) for irr, cs in _runs(span, lambda c: kinds[c] == _IRR)]
    else:
        chunks = _variant_chunks(span, kinds, cols)
    for idx, (kind, cs) in enumerate(chunks):
        if kind == "opt":
            vals = {"".join(r[c] for c in cs) for r in rows} - {""}
            parts.append(("O", tuple(sorted(vals))))
        elif kind == "cap":
            parts.append(("T", typed(cols, cs)))
        elif all(kinds[c] == _INV for c in cs):
            followed_by_opt = idx + 1 < len(chunks) and chunks[idx + 1][0] == "opt"
            parts.append(("C", followed_by_opt))
        else:
            texts = ["".join(r[c] for c in cs) for r in rows]
            counts = Counter(texts)
            chosen = min(counts, key=lambda v: (-counts[v], v))
            parts.append(("V", tuple(sorted(counts)), chosen))
        pcols.append(list(cs))


def _is_delim_col(col) -> bool:
    return all(t in DELIMITERS for t in col if t)


def _variant_chunks(span, kinds, cols):
    """Chunks of a span that holds a variant set, as (kind, columns):
    - "opt": irrelevant runs that start or end with a delimiter ("www.", ".ustreas", "&sid=...");
    - "cap": invariant runs at the edge of a variant chunk, cut where the boundary is
      punctuation: the page id of a slug (old-title-7 ~ new-title-7 keeps "-7") or of an
      alias path (/story?id=7 ~ /story_7.html keeps "7");
    - "var": the rest, one variant value."""
    chunks: list[tuple[str, list[int]]] = []
    for is_irr, run in _runs(span, lambda c: kinds[c] == _IRR):
        if is_irr and (_is_delim_col(cols[run[0]]) or _is_delim_col(cols[run[-1]])):
            chunks.append(("opt", run))
        elif chunks and chunks[-1][0] == "var":
            chunks[-1][1].extend(run)
        else:
            chunks.append(("var", list(run)))
    out: list[tuple[str, list[int]]] = []
    for kind, cs in chunks:
        if kind == "opt" or all(kinds[c] == _INV for c in cs):
            out.append((kind, cs))
            continue
        a = 0
        while a < len(cs) and kinds[cs[a]] == _INV:
            a += 1
        b = len(cs)
        while b > a and kinds[cs[b - 1]] == _INV:
            b -= 1
        head, mid, tail = cs[:a], cs[a:b], cs[b:]
        if head and not _punct_boundary(cols[head[-1]], cols[mid[0]]):
            mid, head = head + mid, []
        if tail and not _punct_boundary(cols[tail[0]], cols[mid[-1]]):
            mid, tail = mid + tail, []
        out.extend(c for c in (("cap", head), ("var", mid), ("cap", tail)) if c[1])
    return out


def _punct_boundary(inv_col, var_col) -> bool:
    """An invariant run may be cut from a variant one where either side of the cut is
    punctuation: then the cut is where a URL's grammar puts it, not mid-word."""
    (tok,) = inv_col
    return not tok.isalnum() or all(not t.isalnum() for t in var_col if t)


def typed(cols, cs) -> str:
    """The thesis' per-token generalization: letters, digits, literal punctuation."""
    out = []
    for c in cs:
        (tok,) = cols[c]
        out.append("[a-zA-Z]+" if tok.isalpha() else "[0-9]+" if tok.isdigit() else escape(tok))
    return "".join(out)


def _runs(span, pred):
    """Maximal runs of columns with equal ``pred``, as (pred, columns)."""
    out: list[tuple[bool, list[int]]] = []
    for c in span:
        p = pred(c)
        if out and out[-1][0] == p:
            out[-1][1].append(c)
        else:
            out.append((p, [c]))
    return out


# ---------------------------------------------------------------- rendering

_CLASS_BY_BITS = {1: "[0-9]+", 2: "[a-zA-Z]+", 3: "[0-9a-zA-Z]+"}


def char_bits(text: str) -> int:
    """1 digits, 2 ASCII letters, 4 anything else (within a span: no delimiters)."""
    bits = 0
    for ch in text:
        if ch.isascii() and ch.isdigit():
            bits |= 1
        elif ch.isascii() and ch.isalpha():
            bits |= 2
        else:
            bits |= 4
    return bits


def class_for(bits: int) -> str:
    return _CLASS_BY_BITS.get(bits, SEG)


def escape(text: str) -> str:
    """Backslash before ASCII punctuation only: valid in Python re, RE2 and Java alike."""
    return "".join("\\" + ch if ch.isascii() and not ch.isalnum() and ch != "_" else ch for ch in text)


def escape_repl(text: str) -> str:
    """Transformation literals: ``$`` is the only special character (``$$`` = literal $)."""
    return text.replace("$", "$$")


def alternation(values, optional: bool) -> str:
    vals = sorted({v for v in values if v}, key=lambda v: (-len(v), v))
    if not vals:
        return ""
    body = "|".join(escape(v) for v in vals)
    group = f"(?:{body})"
    return group + "?" if optional or "" in values else group


def render(parts: list[tuple], card_set: int) -> tuple[str, str]:
    """Parts -> (context, transformation). Variant and irrelevant sets with more than
    ``card_set`` values become a type class (thesis: Card_set), not captured: their
    values do not change the page, so they must not reach the canonical form."""
    ctx = ["^"]
    out = []
    ncap = 0
    folded: set[int] = set()  # optional parts that took the "/" after them
    for i, p in enumerate(parts):
        kind = p[0]
        if kind == "L":
            text = p[1][1:] if i - 1 in folded else p[1]  # its "/" went into the optional segment
            ctx.append(escape(text))
            out.append(escape_repl(text))
        elif kind == "C":
            ncap += 1
            ctx.append(f"({SEG}?)" if p[1] else f"({SEG})")
            out.append(f"${ncap}")
        elif kind == "T":
            ncap += 1
            ctx.append(f"({p[1]})")
            out.append(f"${ncap}")
        elif kind == "V":
            values, chosen = p[1], p[2]
            if len(values) > card_set and "" not in values:
                bits = 0
                for v in values:
                    bits |= char_bits(v)
                ctx.append(f"(?:{class_for(bits)})")
                out.append("")
            else:
                ctx.append(alternation(values, optional=False))
                out.append(escape_repl(chosen))
        elif kind == "O":
            rx = p[2] if len(p) > 2 else _opt_regex(p[1], card_set)
            if _whole_segment(parts, i) and rx.startswith("(?:") and rx.endswith(")?"):
                rx = "(?:" + rx[:-1] + "\\/)?"
                folded.add(i)
            ctx.append(rx)
        elif kind == "G":  # generalized variant (generalize.py): class, dropped
            ctx.append(f"(?:{p[1]})")
        else:
            raise ValueError(f"unknown part {p!r}")
    ctx.append("$")
    for prev, nxt in zip(out, out[1:]):
        # "$1" + "0..." would read as $10 when there are 10+ captures (Java semantics)
        if prev[:1] == "$" and prev[1:].isdigit() and nxt[:1].isdigit() and int(prev[1:] + nxt[0]) <= ncap:
            raise AmbiguousRule(f"${prev[1:]} followed by literal {nxt[:8]!r}")
    return "".join(ctx), "".join(out)


def _whole_segment(parts: list[tuple], i: int) -> bool:
    """Is optional part ``i`` a whole path segment ("/a/(?:latest)?/b")? Dropped, it would
    leave "//" in the key, another URL than any the rule was learned from, so its group
    takes the "/" after it ("/a/(?:latest/)?b")."""
    return (
        0 < i < len(parts) - 1
        and parts[i - 1][0] == "L"
        and parts[i - 1][1].endswith("/")
        and parts[i + 1][0] == "L"
        and parts[i + 1][1].startswith("/")
    )


class AmbiguousRule(ValueError):
    """A transformation that a crawler could not read unambiguously; the rule is skipped."""


def _opt_regex(values, card_set: int) -> str:
    if len(values) <= card_set:
        return alternation(values, optional=True)
    return "(?:" + generalize_values(values) + ")?"


def skeleton(value: str) -> tuple[str, ...]:
    """Delimiters kept, the text between them abstracted: "&sid=9f3a" -> ('&', '*', '=', '*')."""
    out: list[str] = []
    cur = False
    for ch in value:
        if ch in DELIMITERS:
            out.append(ch)
            cur = False
        elif not cur:
            out.append("*")
            cur = True
    return tuple(out)


def segments(value: str) -> list[str]:
    """The texts that ``skeleton`` abstracts, in order."""
    segs: list[str] = []
    cur: list[str] = []
    for ch in value:
        if ch in DELIMITERS:
            if cur:
                segs.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        segs.append("".join(cur))
    return segs


def generalize_values(values) -> str:
    """A regex for many values of one skeleton: stable segments stay literal (the key
    ``sid``), varying ones become a class (its value). Mixed skeletons: any text."""
    skels = {skeleton(v) for v in values}
    if len(skels) != 1:
        return "[^#]*"
    (skel,) = skels
    segvals = [segments(v) for v in values]
    out, si = [], 0
    for item in skel:
        if item != "*":
            out.append(escape(item))
            continue
        col = {sv[si] for sv in segvals}
        si += 1
        if len(col) == 1:
            out.append(escape(next(iter(col))))
        else:
            bits = 0
            for v in col:
                bits |= char_bits(v)
            out.append(class_for(bits))
    return "".join(out)
