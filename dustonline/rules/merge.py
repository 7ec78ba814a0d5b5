"""One rule set from the rule changes of many partition learners (DustLin-MR's reduce).

A worker group learns each partition of the pages topic on its own, so one rule id can
come from several partitions: a rule of one URL shape validated on the sites of each.
The merged rule applies to the union of the hosts that validated it. No partition's
hosts are given a context that partition did not validate: when partitions disagree on
the context of an id (a free slot's class learned from different values), the context
with the most support wins and only the hosts that learned it get the rule.

Versions: a merged record's version is the sum of the latest versions of its partials.
Each partition's versions only grow (learner.py keeps them across drops), so the sum
grows with every change, and it is the same number for the same partials whatever order
they arrived in: a replay, or a worker that restarts and re-sends, publishes nothing a
subscriber would take for new. Pure and Kafka-free: the worker (stream/merge.py) keeps
the state in a Faust table, ``dustonline learn --partitions`` in memory.
"""

from __future__ import annotations

import msgspec

from .ruleset import ACTIVE, RETIRED, Rule, rule_order

_enc = msgspec.json.Encoder()
_dec = msgspec.json.Decoder(dict[str, Rule])
_dec_all = msgspec.json.Decoder(dict[str, dict[str, Rule]])


def merge(partials: dict[str, Rule]) -> Rule:
    """The merged record of one rule id from its latest partial per partition."""
    version = sum(r.version for r in partials.values())
    active = sorted(((int(p), r) for p, r in partials.items() if r.status == ACTIVE), key=lambda pr: pr[0])
    if not active:
        last = max(partials.values(), key=lambda r: (r.updated, r.version))
        return Rule(
            id=last.id,
            hosts=sorted({h for r in partials.values() for h in r.hosts}),
            context=last.context,
            transformation=last.transformation,
            drop_param=last.drop_param,
            canonical_scheme=last.canonical_scheme,
            canonical_host=last.canonical_host,
            normalize=last.normalize,
            except_hosts=last.except_hosts,
            subsumed_by=last.subsumed_by,
            support=0,
            fpr=0.0,
            freq=0,
            version=version,
            status=RETIRED,
            updated=max(r.updated for r in partials.values()),
        )
    by_sig: dict[tuple, list[tuple[int, Rule]]] = {}
    for p, r in active:
        sig = (
            r.context,
            r.transformation,
            r.drop_param or "",
            r.canonical_scheme or "",
            r.canonical_host or "",
            r.normalize or "",
            r.subsumed_by or "",
        )
        by_sig.setdefault(sig, []).append((p, r))

    def strength(item) -> tuple:
        members = item[1]
        return (sum(r.support for _, r in members), -min(p for p, _ in members))

    (context, transformation, name, scheme, host, edit, subsumed), members = max(by_sig.items(), key=strength)
    rules = [r for _, r in members]
    support = sum(r.support for r in rules)
    # a rule of every host: excepted wherever a partition vetoed it, active or not
    excepted = sorted({h for r in partials.values() for h in r.except_hosts or ()})
    bad_pairs = sum(r.fpr * r.support for r in rules)
    return Rule(
        id=rules[0].id,
        hosts=sorted({h for r in rules for h in r.hosts}),
        context=context,
        transformation=transformation,
        drop_param=name or msgspec.UNSET,
        canonical_scheme=scheme or msgspec.UNSET,
        canonical_host=host or msgspec.UNSET,
        normalize=edit or msgspec.UNSET,
        except_hosts=excepted if excepted else msgspec.UNSET,
        subsumed_by=subsumed or msgspec.UNSET,
        support=support,
        fpr=round(bad_pairs / support, 6) if support else 0.0,
        freq=sum(r.freq for r in rules),
        version=version,
        status=ACTIVE,
        updated=max(r.updated for r in rules),
    )


class RuleMerger:
    """Latest partial per (rule id, partition) -> merged rule changes to publish."""

    def __init__(self):
        self._partials: dict[str, dict[str, Rule]] = {}

    def apply(self, partition: int, rule: Rule, partials: dict[str, Rule] | None = None) -> Rule | None:
        """One partial; returns the merged record to publish, or None if nothing changed
        (an old or repeated partial). ``partials`` is the id's stored state, for callers
        that keep it elsewhere (a Faust table); it is updated in place."""
        if partials is None:
            partials = self._partials.setdefault(rule.id, {})
        key = str(partition)
        cur = partials.get(key)
        if cur is not None and cur.version >= rule.version:
            return None
        partials[key] = rule
        return merge(partials)

    def apply_all(self, partials: list[tuple[int, Rule]]) -> list[Rule]:
        """(partition, partial) pairs in order; returns the merged records that changed."""
        out = []
        for partition, rule in partials:
            m = self.apply(partition, rule)
            if m is not None:
                out.append(m)
        return out

    @staticmethod
    def again(partition: int, rule: Rule, partials: dict[str, Rule]) -> Rule | None:
        """The merged record of a partial that ``apply`` turned down because it is the one
        stored: a consumer that stores before it publishes (the worker's table, written at
        once) and is killed in between re-reads the partial and must publish it again.
        None for an older partial. Subscribers ignore a version they have."""
        if partials.get(str(partition)) != rule:
            return None
        return merge(partials)

    def rules(self) -> list[Rule]:
        merged = (merge(p) for p in self._partials.values())
        return sorted((r for r in merged if r.status == ACTIVE), key=rule_order)

    def dump(self) -> bytes:
        """Every partial, for a checkpoint (``learn --partitions --state``)."""
        return _enc.encode(self._partials)

    def restore(self, raw: bytes) -> None:
        self._partials = _dec_all.decode(raw)


def encode_partials(partials: dict[str, Rule]) -> bytes:
    return _enc.encode(partials)


def decode_partials(raw: bytes | None) -> dict[str, Rule]:
    return _dec.decode(raw) if raw else {}
