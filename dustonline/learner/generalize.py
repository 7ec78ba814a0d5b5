"""Rules of the same shape from many clusters -> candidate rules (docs/DESIGN.md §6).

The thesis counts identical (context, transformation) pairs. A cluster
{/x?id=7, /x?id=7&sid=9f3a} yields a rule with the literal session value in it, so no
two clusters agree and nothing reaches min_freq. Here a cluster's rule is split into a
*shape* (its parts with literal values abstracted) and its *slot values*; clusters of one
shape form a group, and a slot that shows more than Card_set distinct values across the
group becomes a class: "drop sid whatever its value" (Koppula's generalization, Lei's
ignore operation). Variant slots with few values stay bound: clusters that chose
different values are different candidates, because mapping them to one constant would
merge distinct pages.

Generalization is monotone over a group's life (a slot once free stays free until the
group empties): rule ids and contexts stay stable while evidence accumulates.
"""

from __future__ import annotations

from typing import cast

from ..hashing import short_id
from .induce import AmbiguousRule, alternation, char_bits, class_for, escape, render, segments, skeleton
from .records import Candidate, Contribution, shape_id
from .tokenize import DELIMITERS


def contribution(parts: list[tuple], hosts, generalize: bool = True) -> Contribution:
    shape: list[tuple] = []
    slots: list[tuple] = []
    for p in parts:
        kind = p[0]
        if kind == "V" and generalize and "" not in p[1] and not any(ch in DELIMITERS for v in p[1] for ch in v):
            shape.append(("V",))
            slots.append((p[1], p[2]))
        elif kind == "O" and generalize and len({skeleton(v) for v in p[1]}) == 1:
            # values with punctuation inside a span (a session segment "/(S(9f3a))") are
            # another kind of token than plain words ("/mirror1", "/v1"): one group each,
            # so a class learned for one never drops the other's words on some site
            if any(char_bits(seg) & 4 for v in p[1] for seg in segments(v)):
                shape.append(("S", skeleton(p[1][0]), "x"))
            else:
                shape.append(("S", skeleton(p[1][0])))
            slots.append((p[1],))
        else:
            shape.append(p)
    return Contribution(tuple(shape), tuple(slots), tuple(sorted(set(hosts))))


def _vkey(slot) -> str:
    values, chosen = slot
    return "\x1f".join(values) + "\x1e" + chosen


class Group:
    """State of one shape: cluster counts per slot value and per bound-value partition.

    Stored as plain lists/dicts (``to_state``) so any key-value store can hold it.
    """

    def __init__(self, shape, state: dict | None = None):
        if not (type(shape) is tuple and all(type(item) is tuple for item in shape)):
            shape = _tuplify(shape)
        self.shape = shape
        if state is None:
            kinds = ["V" if item[0] == "V" else "O" for item in shape if _is_slot(item)]
            state = {
                "n": 0,
                "slots": [{"k": k, "vals": {}, "free": False, "bits": 0, "segs": None, "hv": {}} for k in kinds],
                "members": {},
                "rev": 0,
            }
        self.st = state

    def to_state(self) -> dict:
        return self.st

    @property
    def n(self) -> int:
        return self.st["n"]

    def _member_key(self, c: Contribution) -> str:
        keys = []
        for slot, val in zip(self.st["slots"], c.slots):
            if slot["k"] == "V":
                keys.append("*" if slot["free"] else _vkey(val))
        return "\x1d".join(keys)

    def _bump(self) -> None:
        """Something a rendered rule depends on changed (values, classes, hosts)."""
        self.st["rev"] = self.st.get("rev", 0) + 1

    def add(self, c: Contribution, card_set: int) -> None:
        st = self.st
        st["n"] += 1
        for slot, val in zip(st["slots"], c.slots):
            if slot["k"] == "V":
                values = val[0]
                bits = slot["bits"]
                for v in values:
                    bits |= char_bits(v)
                if bits != slot["bits"]:
                    slot["bits"] = bits
                    self._bump()
                if not slot["free"]:
                    k = _vkey(val)
                    if k not in slot["vals"]:
                        self._bump()
                    slot["vals"][k] = slot["vals"].get(k, 0) + 1
                    if len(slot["vals"]) > card_set or len(values) > card_set:
                        self._free_variant(slot)
            else:
                self._add_opt(slot, val[0], card_set, c.hosts)
        mk = self._member_key(c)
        mem = st["members"].get(mk)
        if mem is None:
            mem = st["members"][mk] = {"n": 0, "hosts": {}}
            self._bump()
        mem["n"] += 1
        for h in c.hosts:
            if h not in mem["hosts"]:
                self._bump()
            mem["hosts"][h] = mem["hosts"].get(h, 0) + 1

    def remove(self, c: Contribution) -> None:
        st = self.st
        st["n"] -= 1
        for slot, val in zip(st["slots"], c.slots):
            if slot["free"] and slot["k"] == "V":
                continue
            keys = [] if slot["free"] else [_vkey(val)] if slot["k"] == "V" else list(val[0])
            for k in keys:
                left = slot["vals"].get(k, 0) - 1
                if left > 0:
                    slot["vals"][k] = left
                elif slot["vals"].pop(k, None) is not None:
                    self._bump()
            if slot["k"] == "O":
                hv = slot.get("hv", {})
                for h in c.hosts:
                    per = hv.get(h)
                    if per is None:
                        continue
                    for v in val[0]:
                        left = per.get(v, 0) - 1
                        if left > 0:
                            per[v] = left
                        else:
                            per.pop(v, None)
                    if not per:
                        del hv[h]
            if slot["k"] == "O" and slot["segs"] is not None:
                for v in val[0]:
                    for seg, text in zip(slot["segs"], segments(v)):
                        if not seg["free"]:
                            left = seg["vals"].get(text, 0) - 1
                            if left > 0:
                                seg["vals"][text] = left
                            elif seg["vals"].pop(text, None) is not None:
                                self._bump()
        mk = self._member_key(c)
        mem = st["members"].get(mk)
        if mem is not None:
            mem["n"] -= 1
            for h in c.hosts:
                left = mem["hosts"].get(h, 0) - 1
                if left > 0:
                    mem["hosts"][h] = left
                elif mem["hosts"].pop(h, None) is not None:
                    self._bump()
            if mem["n"] <= 0:
                del st["members"][mk]
                self._bump()

    def _free_variant(self, slot: dict) -> None:
        self._bump()
        slot["free"] = True
        slot["vals"] = {}
        idx = [i for i, s in enumerate(self.st["slots"]) if s["k"] == "V"].index(self.st["slots"].index(slot))
        merged: dict[str, dict] = {}
        for mk, mem in self.st["members"].items():
            parts = mk.split("\x1d")
            parts[idx] = "*"
            nk = "\x1d".join(parts)
            tgt = merged.setdefault(nk, {"n": 0, "hosts": {}})
            tgt["n"] += mem["n"]
            for h, c in mem["hosts"].items():
                tgt["hosts"][h] = tgt["hosts"].get(h, 0) + c
        self.st["members"] = merged

    def _add_opt(self, slot: dict, values, card_set: int, hosts=()) -> None:
        """An optional token set becomes a class only when one host shows more than
        Card_set values (a session segment in the path). Many sites with one value each
        (/mirror1 here, /v1 there) stay an alternation of those literals: as a class it
        would also drop /fr/ or /de/ on the same sites, different pages (measured: most of
        the contents the learner lost on a 200k-event stream came from such classes). A
        rule applies only to its hosts, whose values are all in the alternation."""
        hv = slot.setdefault("hv", {})
        for h in hosts:
            per = hv.setdefault(h, {})
            for v in values:
                per[v] = per.get(v, 0) + 1
        wide = slot["free"] or any(len(hv[h]) > card_set for h in hosts)
        for v in values:
            if not slot["free"]:  # a free slot renders from its segments; values would only grow
                if v not in slot["vals"]:
                    self._bump()
                slot["vals"][v] = slot["vals"].get(v, 0) + 1
            segs = segments(v)
            if slot["segs"] is None:
                slot["segs"] = [{"vals": {}, "free": False, "bits": 0} for _ in segs]
            for seg, text in zip(slot["segs"], segs):
                bits = seg["bits"] | char_bits(text)
                if bits != seg["bits"]:
                    seg["bits"] = bits
                    self._bump()
                if not seg["free"]:
                    if slot["free"] and text not in seg["vals"]:
                        self._bump()  # a free slot renders its fixed segments' values
                    seg["vals"][text] = seg["vals"].get(text, 0) + 1
        if wide and not slot["free"] and len(slot["vals"]) > card_set:
            slot["free"] = True
            slot["vals"] = {}
            self._bump()
        if slot["free"] and slot["segs"] is not None:
            for seg in slot["segs"]:
                if not seg["free"] and len(seg["vals"]) > card_set:
                    fine, lits = fine_class(seg["vals"], card_set)
                    if fine is None and lits:
                        continue  # several kinds of value, none many: literals still
                    seg["fine"] = fine
                    if lits:
                        seg["lits"] = lits
                    seg["free"] = True
                    seg["vals"] = {}
                    self._bump()

    def candidates(
        self,
        min_freq: int,
        card_set: int,
        cache: dict | None = None,
        extra: dict[str, int] | None = None,
        view: dict | None = None,
    ) -> list[Candidate]:
        """Members with freq >= min_freq as rules, counting ``extra`` clusters per member
        (other partitions' of this shape, pooled; the rule's freq stays this group's, and
        its validity counts them again: counts.py), rendered with the values and character
        classes other partitions saw as well (``view``, as ``view()`` gives them).
        ``cache`` maps (shape, member, rev, view revision) to a rendered rule: rendering
        only runs when something it depends on changed."""
        out = []
        sid = shape_id(self.shape)
        rev = (self.st.get("rev", 0), view["rev"]) if view else self.st.get("rev", 0)
        for mk, mem in self.st["members"].items():
            n = mem["n"]
            if n + (extra.get(mk, 0) if extra else 0) < min_freq:
                continue
            key = (sid, mk, rev)
            hit = cache.get(key) if cache is not None else None
            if hit is None:
                rparts = self._parts(mk.split("\x1d") if mk else [], view)
                rctx: str | None
                try:
                    rctx, rtrans = render(rparts, card_set)
                except AmbiguousRule:
                    rctx = None
                rid = short_id("r", sid + "\x1d" + mk)
                hit = (rid, rctx, rtrans if rctx else None, tuple(sorted(mem["hosts"])), tuple(rparts))
                if cache is not None:
                    if len(cache) > 50_000:
                        cache.clear()
                    cache[key] = hit
            rid, context, transformation, hosts, parts = hit
            if context is not None:  # render's contexts start with "^": never "", so a transformation is there
                out.append(Candidate(rid, context, cast(str, transformation), n, hosts, parts))
        return out

    def view(self) -> dict[str, int]:
        """What rendering reads besides the member keys, as names a worker group pools
        (``bits`` ORed, values united): a slot's character bits ("b i" or "b i.j" for a
        segment of an optional slot) and the values of a slot or segment still bound
        ("o i NUL value", "s i.j NUL value"); and what freed (``_pooled_slot``): an
        optional slot ("f i"), a segment with its fine skeleton ("f i.j NUL skeleton",
        "" for a plain class) and its literals ("l i.j NUL value")."""
        out: dict[str, int] = {}
        for i, slot in enumerate(self.st["slots"]):
            if slot["k"] == "V":
                if slot["bits"]:
                    out[f"b{i}"] = slot["bits"]
                continue
            if slot["free"]:
                out[f"f{i}"] = 1
            else:
                for v in slot["vals"]:
                    out[f"o{i}\x00{v}"] = 1
            for j, seg in enumerate(slot["segs"] or ()):
                if seg["bits"]:
                    out[f"b{i}.{j}"] = seg["bits"]
                if seg["free"]:
                    out[f"f{i}.{j}\x00" + "\x1f".join(seg.get("fine") or ())] = 1
                    for v in seg.get("lits") or ():
                        out[f"l{i}.{j}\x00{v}"] = 1
                else:
                    for v in seg["vals"]:
                        out[f"s{i}.{j}\x00{v}"] = 1
        return out

    def _parts(self, vkeys: list[str], view: dict | None = None) -> list[tuple]:
        parts: list[tuple] = []
        slots = iter(self.st["slots"])
        vk = iter(vkeys)
        bits = view["bits"] if view else {}
        si = -1  # the slot's index, as view() names it
        for item in self.shape:
            if not _is_slot(item):
                parts.append(tuple(item))
                continue
            slot = next(slots)
            si += 1
            if item[0] == "V":
                key = next(vk)
                if slot["free"]:
                    parts.append(("G", class_for(slot["bits"] | bits.get(f"b{si}", 0))))
                else:
                    values, chosen = key.split("\x1e")
                    parts.append(("V", tuple(values.split("\x1f")), chosen))
            else:
                if view:
                    slot = _pooled_slot(slot, view["vals"], si)
                vals = slot["vals"]
                if view and not slot["free"] and view["vals"].get(f"o{si}"):
                    vals = {**vals, **dict.fromkeys(view["vals"][f"o{si}"], 0)}
                parts.append(("O", tuple(sorted(vals)), _opt_regex(item[1], slot, vals, view, si)))
        return parts


def _pooled_slot(slot: dict, pooled: dict, si: int) -> dict:
    """The optional slot as one learner of the whole group would hold it: freed where
    another partition's group freed it (a host there showed more than Card_set values),
    and each freed segment with the fine skeleton any partition chose (one with
    punctuation over a plain class: the narrower) and every literal kept beside it.
    Without this, a partition whose own hosts show few values kept an alternation that
    grew by every value pooled, re-counted at every round, where one learner has a class."""
    free = slot["free"] or bool(pooled.get(f"f{si}"))
    if not free or slot["segs"] is None:
        return slot
    segs = []
    for j, seg in enumerate(slot["segs"]):
        names = set(pooled.get(f"f{si}.{j}") or ())
        if seg["free"]:
            names.add("\x1f".join(seg.get("fine") or ()))
        if not names:
            segs.append(seg)  # bound everywhere: every partition's values, as before
            continue
        # freed here or elsewhere: the same skeleton and literals wherever it renders
        chosen = max(names)
        fine = tuple(chosen.split("\x1f")) if chosen else None
        lits = set(seg.get("lits") or ()) | set(pooled.get(f"l{si}.{j}") or ())
        if fine is not None:
            lits.update(v for v in [*seg["vals"], *(pooled.get(f"s{si}.{j}") or ())] if fine_skeleton(v) != fine)
        segs.append({"vals": {}, "free": True, "bits": seg["bits"], "fine": fine, "lits": sorted(lits)})
    return {**slot, "free": True, "vals": {}, "segs": segs}


def _is_slot(item) -> bool:
    """("V",) is a variant slot, ("S", skeleton[, "x"]) an optional slot; longer items are concrete."""
    return item == ("V",) or item[0] == "S"


def _opt_regex(skel, slot: dict, vals=None, view: dict | None = None, si: int = 0) -> str:
    if not slot["free"]:
        return alternation(slot["vals"] if vals is None else vals, optional=True)
    out, j = [], 0
    for item in skel:
        if item != "*":
            out.append(escape(item))
            continue
        seg = slot["segs"][j]
        bits = seg["bits"] | (view["bits"].get(f"b{si}.{j}", 0) if view else 0)
        svals = seg["vals"]
        if view and not seg["free"] and view["vals"].get(f"s{si}.{j}"):
            svals = {**svals, **dict.fromkeys(view["vals"][f"s{si}.{j}"], 0)}
        j += 1
        if seg["free"] and seg.get("fine"):
            # "(S(9f3a))": the punctuation every value had stays literal, so the class
            # cannot match a plain word ("/fr") on the same site; the words seen beside
            # it ("/v1": fine_class) stay literals
            alnum = class_for(bits & 3 or 3)
            cls = "".join(alnum if t == "*" else escape(t) for t in seg["fine"])
            lits = sorted(seg.get("lits") or (), key=lambda v: (-len(v), v))
            out.append("(?:" + "|".join([cls] + [escape(v) for v in lits]) + ")" if lits else cls)
        elif seg["free"]:
            out.append(class_for(bits))
        else:
            ordered = sorted(svals, key=lambda v: (-len(v), v))
            out.append(escape(ordered[0]) if len(ordered) == 1 else "(?:" + "|".join(escape(v) for v in ordered) + ")")
    return "(?:" + "".join(out) + ")?"


def fine_class(vals, card_set: int) -> tuple[tuple[str, ...] | None, list[str]]:
    """What a segment with more than ``card_set`` values generalizes to: the fine skeleton
    of its values and the values of other skeletons, to keep as literals; (None, []) for
    a plain class (one skeleton without punctuation: many words). A session segment seen
    beside a mirror directory (``(S(9f3a))``, ``(S(77b0))``, ..., ``v1``) keeps its
    punctuation: as a plain class it also matched ``/fr``, another page. When no
    skeleton holds more than ``card_set`` values, (None, the values): stay literals."""
    by: dict[tuple[str, ...], list[str]] = {}
    for v in vals:
        by.setdefault(fine_skeleton(v), []).append(v)
    if len(by) == 1:
        (only,) = by
        return (only if len(only) > 1 else None), []
    top = max(by, key=lambda sk: (len(by[sk]), sk))
    if len(by[top]) <= card_set:
        return None, sorted(vals)
    if len(top) == 1:
        return None, []  # many plain words: a plain class, as with one skeleton
    return top, sorted(v for sk, vs in by.items() if sk != top for v in vs)


def fine_skeleton(text: str) -> tuple[str, ...]:
    """Punctuation kept, alphanumeric runs abstracted: "(S(9f3a))" -> ('(', '*', '(', '*', ')', ')')."""
    out: list[str] = []
    run = False
    for ch in text:
        if ch.isascii() and ch.isalnum():
            if not run:
                out.append("*")
                run = True
        else:
            out.append(ch)
            run = False
    return tuple(out)


def _tuplify(x):
    """Shapes come back from a store as nested lists, or half-converted: make them tuples."""
    if isinstance(x, (list, tuple)):
        return tuple(_tuplify(i) for i in x)
    return x
