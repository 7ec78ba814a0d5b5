"""The context grammar rules may use, checked by a parser of its own (docs/formats.md,
"Context grammar"), so that no rule from a file or a topic can hang a crawler.

A context is read by recursive descent over the documented grammar (never handed to a
regex engine first): literals, ``\\`` + ASCII punctuation, ``.``, classes ``[...]`` /
``[^...]`` of characters and ranges, capturing ``(...)`` and non-capturing ``(?:...)``
groups, ``|``, a leading ``^`` and a trailing ``$``, and the quantifiers ``?``, ``*``,
``+``, ``{m}``, ``{m,n}`` (each optionally lazy). Everything else (backreferences,
lookaround, named groups, inline flags, ``\\A`` ``\\Z`` ``\\b`` and the letter escapes
other than the ASCII ``\\d \\w \\s`` and their negations, possessive and atomic forms,
class unions and intersections) is refused with the reason.

Why the admitted contexts run in linear time on Python's backtracking ``re``:

1. **Small automaton.** A count ``{m,n}`` (n <= MAX_COUNT) applies to one character
   item only, and a repeated group never matches the empty string, so the position
   automaton (Glushkov) of the context is at most a few times the context's size and
   every cycle in it reads at least one character.
2. **Bounded ambiguity, checked.** A backtracking matcher walks the paths of that
   automaton; the paths alive after reading a prefix of the URL are at most the number of
   automaton paths that read it. ``check`` computes that number for every input at once:
   it explores the reachable multisets of positions (alphabet split into the blocks no
   class tells apart) and refuses the context when any input gives more than
   ``MAX_PATHS`` live paths. The exploration is finite (bounded counts over finitely many
   positions) unless the path count grows without bound, which is exactly the polynomial
   (``[0-9]+[0-9a-z]+``: infinite degree of ambiguity) and exponential (``(a|a)+``,
   ``(a+)+``) cases; those exceed the bound and are refused. ``((?:/[^/]*)*)`` passes:
   each iteration starts with a character the one before cannot take.
3. With at most ``MAX_PATHS`` live paths per position and each failed step of a path
   costing at most the pattern's size, a full match costs O(len(url) * MAX_PATHS *
   len(context)): linear in the URL. A position that accepts every continuation (a
   trailing ``.*``) ends the search there: the engine reports a match on reaching it.

``tests/test_rule_safety.py`` backs this with generated contexts matched against
adversarial URLs of the longest length ``canonicalize`` takes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

MAX_CONTEXT = 8192  # characters
MAX_GROUPS = 200
MAX_DEPTH = 32  # nesting of groups
MAX_COUNT = 100  # largest bound of {m,n}
MAX_PATHS = 64  # live automaton paths on any input
MAX_STATES = 20000  # multisets explored before giving up (refused as too complex)
MAXCP = 0x10FFFF

_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_SPECIAL = frozenset("()[]{}|*+?.^$\\")


class PatternError(ValueError):
    """A context outside the admitted grammar; the message is the reason."""


# ---------------------------------------------------------------- the tree
@dataclass
class Chars:
    """One character from a set of code-point intervals."""

    ivs: tuple[tuple[int, int], ...]


@dataclass
class Seq:
    items: list = field(default_factory=list)


@dataclass
class Alt:
    branches: list


@dataclass
class Group:
    node: object
    index: int | None  # capture number, None for (?:...)


@dataclass
class Repeat:
    node: object
    lo: int
    hi: int | None  # None: unbounded
    lazy: bool


@dataclass
class Parsed:
    root: object
    groups: int
    anchored_start: bool
    anchored_end: bool


def _norm(ivs) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for lo, hi in sorted(ivs):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def _negate(ivs) -> tuple[tuple[int, int], ...]:
    out, nxt = [], 0
    for lo, hi in _norm(ivs):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAXCP:
        out.append((nxt, MAXCP))
    return tuple(out)


_D = ((48, 57),)
_W = _norm([(48, 57), (65, 90), (95, 95), (97, 122)])
_S = ((9, 13), (32, 32))
#: ASCII meanings, as Java and RE2 read them (Python is told re.ASCII)
_SHORTHAND = {"d": _D, "D": _negate(_D), "w": _W, "W": _negate(_W), "s": _S, "S": _negate(_S)}

DOT = Chars(_negate([(10, 10)]))  # what '.' matches in Python, RE2 and Java alike on URLs


# ---------------------------------------------------------------- the parser
class _Parser:
    def __init__(self, text: str):
        self.t = text
        self.i = 0
        self.groups = 0
        self.depth = 0

    def fail(self, why: str, at: int | None = None):
        raise PatternError(f"{why} at {self.i if at is None else at}")

    def peek(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def parse(self) -> Parsed:
        start = end = False
        if self.peek() == "^":
            start = True
            self.i += 1
        root = self.alt()
        if self.peek() == "$":
            end = True
            self.i += 1
        if self.i != len(self.t):
            ch = self.peek()
            self.fail("unbalanced ')'" if ch == ")" else f"'{ch}' is not admitted here")
        return Parsed(root, self.groups, start, end)

    def alt(self):
        branches = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq())
        return branches[0] if len(branches) == 1 else Alt(branches)

    def seq(self) -> Seq:
        s = Seq()
        while self.i < len(self.t) and self.peek() not in "|)":
            if self.peek() == "$" and self.i == len(self.t) - 1:
                break  # the trailing anchor, taken by parse()
            s.items.append(self.item())
        return s

    def item(self):
        at = self.i
        node = self.atom()
        ch = self.peek()
        if ch in ("*", "+", "?", "{"):
            lo, hi = self.quantifier()
            lazy = self.peek() == "?"
            if lazy:
                self.i += 1
            if self.peek() in ("+", "*", "?", "{"):
                self.fail("a quantifier on a quantifier (possessive or nested) is not admitted")
            if hi is not None and hi > 1 and _single_char(node) is None:
                self.fail("a count {m,n} applies to one character or class only", at)
            if hi is None and _nullable(node):
                self.fail("a repeated group that can match the empty string", at)
            node = Repeat(node, lo, hi, lazy)
        return node

    def quantifier(self) -> tuple[int, int | None]:
        ch = self.t[self.i]
        self.i += 1
        if ch == "*":
            return 0, None
        if ch == "+":
            return 1, None
        if ch == "?":
            return 0, 1
        j = self.t.find("}", self.i)
        body = self.t[self.i : j] if j >= 0 else ""
        lo_s, comma, hi_s = body.partition(",")
        if j < 0 or not (lo_s.isascii() and lo_s.isdigit()) or (hi_s and not (hi_s.isascii() and hi_s.isdigit())):
            self.fail("'{' is not a count {m} or {m,n} (write '\\{' for the character)")
        if comma and not hi_s:
            self.fail("an open count {m,} is not admitted; use '*' or '+'")
        lo = int(lo_s)
        hi = int(hi_s) if comma else lo
        if hi > MAX_COUNT or lo > hi:
            self.fail(f"count {{{body}}} must have m <= n <= {MAX_COUNT}")
        self.i = j + 1
        return lo, hi

    def atom(self):
        ch = self.peek()
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.klass()
        if ch == ".":
            self.i += 1
            return DOT
        if ch == "\\":
            if self.t[self.i + 1 : self.i + 2] in _SHORTHAND:
                return Chars(self.shorthand())
            c = self.escape()
            return Chars(((c, c),))
        if ch in ("*", "+", "?", "{"):
            self.fail(f"'{ch}' has nothing to repeat")
        if ch in ("^", "$"):
            self.fail(f"'{ch}' is admitted only at the start ('^') or the end ('$')")
        if ch in ("]", "}"):
            self.fail(f"a bare '{ch}' is not admitted (write '\\{ch}')")
        if ord(ch) < 32 or ord(ch) == 127 or 0xD800 <= ord(ch) <= 0xDFFF:
            self.fail(f"control character {ord(ch):#x}")
        self.i += 1
        return Chars(((ord(ch), ord(ch)),))

    def shorthand(self) -> tuple[tuple[int, int], ...]:
        ivs = _SHORTHAND[self.t[self.i + 1]]
        self.i += 2
        return ivs

    def escape(self) -> int:
        nxt = self.t[self.i + 1] if self.i + 1 < len(self.t) else ""
        if nxt == "":
            self.fail("'\\' at the end")
        if nxt not in _PUNCT:
            what = {
                "Z": "\\Z",
                "A": "\\A",
                "z": "\\z",
                "b": "\\b",
                "B": "\\B",
                "G": "\\G",
                "p": "a Unicode property class",
                "P": "a Unicode property class",
                "k": "a named backreference",
                "Q": "\\Q...\\E quoting",
            }.get(nxt)
            if nxt.isdigit():
                what = "a backreference or octal escape"
            self.fail(f"escape '\\{nxt}' ({what or 'letter and digit escapes differ between engines'}) is not admitted")
        self.i += 2
        return ord(nxt)

    def group(self):
        at = self.i
        self.i += 1
        index = None
        if self.t.startswith("?:", self.i):
            self.i += 2
        elif self.peek() == "?":
            nxt = self.t[self.i + 1 : self.i + 3]
            kind = (
                "lookaround"
                if nxt[:1] in ("=", "!") or nxt in ("<=", "<!")
                else "a named group"
                if nxt[:1] in ("P", "<", "'")
                else "an atomic group"
                if nxt[:1] == ">"
                else "a conditional"
                if nxt[:1] == "("
                else "a comment"
                if nxt[:1] == "#"
                else "inline flags"
            )
            self.fail(f"'(?' starts {kind}, which is not admitted", at)
        else:
            self.groups += 1
            index = self.groups
            if self.groups > MAX_GROUPS:
                self.fail(f"more than {MAX_GROUPS} groups", at)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"groups nested deeper than {MAX_DEPTH}", at)
        node = self.alt()
        self.depth -= 1
        if self.peek() != ")":
            self.fail("'(' is not closed", at)
        self.i += 1
        return Group(node, index)

    def klass(self) -> Chars:
        at = self.i
        self.i += 1
        neg = self.peek() == "^"
        if neg:
            self.i += 1
        ivs: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if ch == "":
                self.fail("'[' is not closed", at)
            if ch == "]" and not first:
                self.i += 1
                break
            if ch == "\\" and self.t[self.i + 1 : self.i + 2] in _SHORTHAND:
                ivs.extend(self.shorthand())
                if self.peek() == "-" and self.t[self.i + 1 : self.i + 2] not in ("]", ""):
                    self.fail("a range from a class shorthand ([\\d-z]: Python refuses it, Java reads it)")
                first = False
                continue
            lo = self.class_char()
            hi = lo
            if self.peek() == "-" and self.t[self.i + 1 : self.i + 2] not in ("]", ""):
                self.i += 1
                hi = self.class_char()
                if hi < lo:
                    self.fail("a range whose end precedes its start", at)
            ivs.append((lo, hi))
            first = False
        return Chars(_negate(ivs) if neg else _norm(ivs))

    def class_char(self) -> int:
        ch = self.peek()
        if ch == "\\":
            return self.escape()
        if ch in ("[", "]"):
            self.fail(f"'{ch}' inside a class (Java reads it as a nested class; write '\\{ch}')")
        if ch == "&" and self.t[self.i + 1 : self.i + 2] == "&":
            self.fail("'&&' inside a class (Java reads it as an intersection)")
        if ord(ch) < 32 or ord(ch) == 127 or 0xD800 <= ord(ch) <= 0xDFFF:
            self.fail(f"control character {ord(ch):#x}")
        self.i += 1
        return ord(ch)


def _nullable(node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Group):
        return _nullable(node.node)
    if isinstance(node, Alt):
        return any(_nullable(b) for b in node.branches)
    if isinstance(node, Seq):
        return all(_nullable(i) for i in node.items)
    return node.lo == 0 or _nullable(node.node)


def _single_char(node) -> Chars | None:
    """The character item ``node`` is, alone or in groups of its own."""
    while isinstance(node, (Group, Seq)):
        if isinstance(node, Seq):
            if len(node.items) != 1:
                return None
            node = node.items[0]
        else:
            node = node.node
    return node if isinstance(node, Chars) else None


# ---------------------------------------------------------------- the automaton
class _Glushkov:
    """Positions (one per character item, a repeat unrolled to its bound), first and
    last sets, and follow sets with multiplicities (two ways to the same position are two
    paths)."""

    def __init__(self, root):
        self.chars: list[tuple[tuple[int, int], ...]] = []
        self.follow: list[list[int]] = []
        nullable, first, last = self.build(root)
        self.nullable, self.first, self.last = nullable, first, last

    def pos(self, ivs) -> int:
        self.chars.append(ivs)
        self.follow.append([])
        return len(self.chars) - 1

    def link(self, last: list[int], first: list[int]) -> None:
        for p in last:
            self.follow[p].extend(first)

    def build(self, n) -> tuple[bool, list[int], list[int]]:
        if isinstance(n, Chars):
            p = self.pos(n.ivs)
            return False, [p], [p]
        if isinstance(n, Group):
            return self.build(n.node)
        fi: list[int]
        la: list[int]
        if isinstance(n, Alt):
            nul, fi, la = False, [], []
            for b in n.branches:
                bn, bf, bl = self.build(b)
                nul, fi, la = nul or bn, fi + bf, la + bl
            return nul, fi, la
        if isinstance(n, Seq):
            nul, fi, la = True, [], []
            for it in n.items:
                inul, ifi, ila = self.build(it)
                self.link(la, ifi)
                fi = fi + ifi if nul else fi
                la = la + ila if inul else ila
                nul = nul and inul
            return nul, fi, la
        assert isinstance(n, Repeat)
        if n.hi is None:  # lo-1 required copies, then one copy that loops
            parts = [self.build(n.node) for _ in range(max(n.lo, 1))]
            _, lfi, lla = parts[-1]
            self.link(lla, lfi)
            nul, fi, la = True, [], []
            for inul, ifi, ila in parts:
                inul = inul or (n.lo == 0)
                self.link(la, ifi)
                fi = fi + ifi if nul else fi
                la = la + ila if inul else ila
                nul = nul and inul
            return nul, fi, la
        # bounded: n copies, the first lo required
        parts = [self.build(n.node) for _ in range(n.hi)]
        nul, fi, la = True, [], []
        for i, (inul, ifi, ila) in enumerate(parts):
            inul = inul or i >= n.lo
            self.link(la, ifi)
            fi = fi + ifi if nul else fi
            la = la + ila if inul else ila
            nul = nul and inul
        return nul, fi, la


def _blocks(chars) -> list[int]:
    """Each position's set of alphabet blocks (as a bit mask); a block is a run of code
    points no position tells apart."""
    cuts = {0, MAXCP + 1}
    for ivs in chars:
        for lo, hi in ivs:
            cuts.add(lo)
            cuts.add(hi + 1)
    edges = sorted(cuts)
    masks = []
    import bisect

    for ivs in chars:
        m = 0
        for lo, hi in ivs:
            a, b = bisect.bisect_left(edges, lo), bisect.bisect_left(edges, hi + 1)
            m |= ((1 << (b - a)) - 1) << a
        masks.append(m)
    return masks


def _max_paths(g: _Glushkov) -> int:
    """The most automaton paths alive after any input (capped just above MAX_PATHS)."""
    masks = _blocks(g.chars)
    universal = {
        p
        for p, ivs in enumerate(g.chars)
        if p in g.last and g.follow[p] == [p] and ivs == DOT.ivs  # a trailing .* / .+
    }
    start: dict[int, int] = {}
    for q in g.first:
        start[q] = start.get(q, 0) + 1
    todo = [start]
    seen: set[frozenset] = set()
    worst = 0
    while todo:
        m = todo.pop()
        key = frozenset(m.items())
        if key in seen:
            continue
        seen.add(key)
        total = sum(m.values())
        worst = max(worst, total)
        if worst > MAX_PATHS:
            return worst
        if len(seen) > MAX_STATES:
            raise PatternError(f"too complex to check (over {MAX_STATES} automaton states)")
        if universal.intersection(m):
            continue  # a match is certain from here: the engine stops
        cands: dict[int, int] = {}
        for p, k in m.items():
            for q in g.follow[p]:
                cands[q] = cands.get(q, 0) + k
        if not cands:
            continue
        # split the blocks by which candidate positions accept them
        parts: list[tuple[int, tuple[int, ...]]] = [(_union(masks, cands), ())]
        for q in cands:
            mq = masks[q]
            nxt: list[tuple[int, tuple[int, ...]]] = []
            for mask, sig in parts:
                a, b = mask & mq, mask & ~mq
                if a:
                    nxt.append((a, (*sig, q)))
                if b:
                    nxt.append((b, sig))
            parts = nxt
        for _, sig in parts:
            if sig:
                todo.append({q: cands[q] for q in sig})
    return worst


def _union(masks, cands) -> int:
    u = 0
    for q in cands:
        u |= masks[q]
    return u


@functools.lru_cache(maxsize=8192)
def check(context: str) -> Parsed:
    """The parsed context, or PatternError with the reason it is refused."""
    if len(context) > MAX_CONTEXT:
        raise PatternError(f"longer than {MAX_CONTEXT} characters")
    parsed = _Parser(context).parse()
    g = _Glushkov(parsed.root)
    paths = _max_paths(g)
    if paths > MAX_PATHS:
        raise PatternError(
            f"ambiguous: some URL is matched along more than {MAX_PATHS} paths at once "
            "(overlapping or nested repeats make backtracking super-linear)"
        )
    return parsed


@functools.lru_cache(maxsize=1 << 16)
def admitted(context: str) -> bool:
    """Whether ``check`` admits ``context``: the learner publishes no rule a subscriber
    would refuse (a few of its renderings, ``([0-9]+)(?:[^/?=&#;:.]+)``, are quadratic)."""
    try:
        check(context)
    except PatternError:
        return False
    return True


# ---------------------------------------------------------------- RE2
def to_re2(parsed: Parsed) -> str:
    """The context in RE2's syntax, written from the parsed tree, so RE2 matches exactly
    what the grammar says: every class as explicit code-point ranges (RE2's ``\\s`` lacks
    ``\\v``, which Python's ASCII ``\\s`` and Java's include), groups numbered as in the
    context, lazy repeats kept. Anchors are left out: both engines full-match."""
    return _re2(parsed.root)


def _re2_cp(c: int) -> str:
    return chr(c) if chr(c).isalnum() and c < 128 else f"\\x{{{c:x}}}"


def _re2(node) -> str:
    if isinstance(node, Chars):
        # surrogates cannot occur in UTF-8 text, and RE2 refuses them in a class
        ivs = [(lo, hi) for lo, hi in _cut_surrogates(node.ivs)]
        if len(ivs) == 1 and ivs[0][0] == ivs[0][1]:
            return _re2_cp(ivs[0][0])
        return "[" + "".join(_re2_cp(lo) if lo == hi else f"{_re2_cp(lo)}-{_re2_cp(hi)}" for lo, hi in ivs) + "]"
    if isinstance(node, Seq):
        return "".join(_re2(i) for i in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_re2(b) for b in node.branches) + ")"
    if isinstance(node, Group):
        return ("(" if node.index is not None else "(?:") + _re2(node.node) + ")"
    assert isinstance(node, Repeat)
    q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((node.lo, node.hi))
    if q is None:
        q = f"{{{node.lo}}}" if node.lo == node.hi else f"{{{node.lo},{node.hi}}}"
    inner = _re2(node.node)
    if not isinstance(node.node, (Chars, Group)):
        inner = "(?:" + inner + ")"
    return inner + q + ("?" if node.lazy else "")


def _cut_surrogates(ivs) -> list[tuple[int, int]]:
    out = []
    for lo, hi in ivs:
        if lo < 0xD800 <= hi or lo <= 0xDFFF < hi or 0xD800 <= lo <= hi <= 0xDFFF:
            if lo < 0xD800:
                out.append((lo, 0xD7FF))
            if hi > 0xDFFF:
                out.append((0xE000, hi))
        else:
            out.append((lo, hi))
    return out
