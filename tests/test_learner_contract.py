"""One contract for every learner, as river's ``check_estimator``: each learning method
``dustonline eval`` compares (online, and the batch ones behind seeds/refit.py), and the
partitioned learner, on one small deterministic stream.

The contract (learner/protocol.py): the object is a ``Learner``; ``learn_one``,
``learn_many`` and ``flush`` return lists of rule changes; ``rules()`` is the active rule
set in ``rule_order`` with unique ids; the changes, applied in order by newest version
wins (``RuleBook``, as a crawler applies the rules topic), give exactly ``rules()``; the
same events give byte-identical rules on a fresh instance; ``summary()`` is a dict and
``close()`` can be called. The broken learners at the end show that each check can fail.
"""

from __future__ import annotations

import itertools

import msgspec
import pytest

from dustonline.config import Config
from dustonline.evaluation.generator import GenConfig, generate
from dustonline.evaluation.methods import METHODS
from dustonline.learner.partitioned import PartitionedLearner
from dustonline.learner.protocol import Learner
from dustonline.rules.book import RuleBook
from dustonline.rules.ruleset import ACTIVE, RETIRED, Rule, rule_order
from dustonline.seeds.dustlin import learn as dustlin
from dustonline.seeds.refit import RefitLearner

CFG = Config().check()
_enc = msgspec.json.Encoder()

LEARNERS = {m.name: m.make for m in METHODS.values() if m.kind != "static"}
LEARNERS["partitioned-2"] = lambda cfg: PartitionedLearner(cfg, 2)


@pytest.fixture(scope="module")
def events():
    # 6 sites, 2,500 events: every learner finds rules, and most change or retire some
    # between the phases below
    return [ev for ev, _ in generate(GenConfig(seed=7, sites=6, pages=1500))]


# --------------------------------------------------------------------------- the contract
def _changes(where: str, out) -> list[Rule]:
    assert type(out) is list, f"{where}: returns {type(out).__name__}, not a list of rule changes"
    assert all(isinstance(r, Rule) for r in out), f"{where}: returns something that is not a Rule"
    return out


def _encoded(rules: list[Rule]) -> list[bytes]:
    return [_enc.encode(r) for r in rules]


def check_rules(learner, changes: list[Rule], where: str) -> list[Rule]:
    """``rules()`` is a list of active Rules in ``rule_order``, ids unique, and what the
    changes published so far add up to."""
    rules = learner.rules()
    assert type(rules) is list and all(isinstance(r, Rule) for r in rules), f"rules() after {where}: not a list of Rule"
    assert all(r.status == ACTIVE for r in rules), f"rules() after {where}: holds a rule not active"
    assert rules == sorted(rules, key=rule_order), f"rules() after {where}: not in rule_order"
    assert len({r.id for r in rules}) == len(rules), f"rules() after {where}: ids not unique"
    book = RuleBook()
    for r in changes:
        book.update(r)
    held = sorted(book.rules(), key=rule_order)
    assert _encoded(held) == _encoded(rules), (
        f"rules() after {where}: not what its changes give applied by newest version wins "
        f"({len(held)} rules from the changes, {len(rules)} from rules())"
    )
    return rules


def run(learner, events) -> tuple[list[Rule], list[Rule]]:
    """Learn the stream in three phases (learn_one, flush, learn_many, learn_one, flush),
    checking the rules after each; the changes and the final rules."""
    n = len(events)
    a, b = n // 3, 2 * n // 3
    changes: list[Rule] = []
    for ev in events[:a]:
        changes += _changes("learn_one", learner.learn_one(ev))
    check_rules(learner, changes, "learn_one")
    changes += _changes("flush", learner.flush())
    check_rules(learner, changes, "flush")
    changes += _changes("learn_many", learner.learn_many(events[a:b]))
    check_rules(learner, changes, "learn_many")
    for ev in events[b:]:
        changes += _changes("learn_one", learner.learn_one(ev))
    changes += _changes("flush", learner.flush())
    return changes, check_rules(learner, changes, "the last flush")


def check_learner(make, events) -> list[Rule]:
    """The whole contract on ``make(config)``; the final rules."""
    learner = make(CFG)
    assert isinstance(learner, Learner), f"{type(learner).__name__} is not a Learner"
    _, rules = run(learner, events)
    summary = learner.summary()
    assert isinstance(summary, dict), f"summary() returns {type(summary).__name__}, not a dict"
    learner.close()

    again = make(CFG)
    _, rules2 = run(again, list(events))
    again.close()
    assert _encoded(rules2) == _encoded(rules), "not deterministic: the same events give other rules"
    return rules


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_learner_keeps_the_contract(name, events):
    rules = check_learner(LEARNERS[name], events)
    assert rules, f"{name} learned no rule: the stream checks nothing"


# --------------------------------------------------------------------------- the checks can fail
def _fit(events, cfg):
    return dustlin(events, cfg, "dustlin")


class Wrapped:
    """A good learner (DustLin refitted) passed through; the broken ones below override
    one method each."""

    def __init__(self, cfg):
        self.inner = RefitLearner(_fit, cfg)

    def learn_one(self, ev):
        return self.inner.learn_one(ev)

    def learn_many(self, events):
        return self.inner.learn_many(events)

    def flush(self):
        return self.inner.flush()

    def rules(self):
        return self.inner.rules()

    def summary(self):
        return self.inner.summary()

    def close(self):
        self.inner.close()


class NoClose(Wrapped):
    close = None  # type: ignore[assignment]  # (None blocks a protocol member, as for __hash__)


class TupleChanges(Wrapped):
    def learn_one(self, ev):
        return tuple(super().learn_one(ev))


class IdsForChanges(Wrapped):
    def learn_many(self, events):
        return [r.id for r in super().learn_many(events)]


class Unordered(Wrapped):
    def rules(self):
        return super().rules()[::-1]


class DuplicateIds(Wrapped):
    def rules(self):
        rules = super().rules()
        return rules + rules[-1:]


class KeepsRetired(Wrapped):
    """rules() keeps the rules it retired."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.gone: dict[str, Rule] = {}

    def flush(self):
        out = super().flush()
        self.gone.update((r.id, r) for r in out if r.status == RETIRED)
        return out

    def learn_many(self, events):
        out = super().learn_many(events)
        self.gone.update((r.id, r) for r in out if r.status == RETIRED)
        return out

    def rules(self):
        return sorted(super().rules() + list(self.gone.values()), key=rule_order)


class SilentRetirement(Wrapped):
    """Retires rules without publishing the retirement."""

    def flush(self):
        return [r for r in super().flush() if r.status == ACTIVE]

    def learn_many(self, events):
        return [r for r in super().learn_many(events) if r.status == ACTIVE]


class StaleVersions(Wrapped):
    """Publishes every change as version 1: a changed rule looks old to a subscriber."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.inner = RefitLearner(
            lambda evs, cfg: [msgspec.structs.replace(r, support=r.support + len(evs)) for r in _fit(evs, cfg)], cfg
        )

    def _v1(self, out):
        return [msgspec.structs.replace(r, version=1) for r in out]

    def flush(self):
        return self._v1(super().flush())

    def learn_many(self, events):
        return self._v1(super().learn_many(events))

    def rules(self):
        return self._v1(super().rules())


_instances = itertools.count()


class Nondeterministic(Wrapped):
    """Stamps its rules with a per-instance number."""

    def __init__(self, cfg):
        super().__init__(cfg)
        n = next(_instances)
        self.inner = RefitLearner(
            lambda evs, cfg: [msgspec.structs.replace(r, updated=float(n)) for r in _fit(evs, cfg)], cfg
        )


class SummaryNotDict(Wrapped):
    def summary(self):
        return list(super().summary().items())


class CloseFails(Wrapped):
    def close(self):
        raise RuntimeError("close failed")


def test_the_learner_they_break_keeps_the_contract(events):
    assert check_learner(Wrapped, events)


BROKEN = [
    (NoClose, AssertionError, "is not a Learner"),
    (TupleChanges, AssertionError, "learn_one: returns tuple"),
    (IdsForChanges, AssertionError, "learn_many: returns something that is not a Rule"),
    (Unordered, AssertionError, "not in rule_order"),
    (DuplicateIds, AssertionError, "ids not unique"),
    (KeepsRetired, AssertionError, "holds a rule not active"),
    (SilentRetirement, AssertionError, "not what its changes give"),
    (StaleVersions, AssertionError, "not what its changes give"),
    (Nondeterministic, AssertionError, "not deterministic"),
    (SummaryNotDict, AssertionError, "summary\\(\\) returns list"),
    (CloseFails, RuntimeError, "close failed"),
]


@pytest.mark.parametrize("broken, error, message", BROKEN, ids=[b.__name__ for b, _, _ in BROKEN])
def test_each_check_catches_a_broken_learner(broken, error, message, events):
    with pytest.raises(error, match=message):
        check_learner(broken, events)
