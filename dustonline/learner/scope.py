"""Query parameter names dropped on every host: the scope beyond one site (docs/formats.md).

A name proven on a few sites (transfer.py) lets a new site drop it after one cluster of
its own evidence; its first URL with the name is keyed before that evidence exists. A
name dropped on many sites and vetoed on few (``utm_source``, ``fbclid``, a session id)
is more than that: a crawler can drop it on a host the learner has never seen. Such a
name is published as one rule of every host (``hosts: ["*"]``) with the hosts where it
was vetoed listed in ``except_hosts``.

- **When**: the share of sites that vetoed the name has a one-sided upper bound, at the
  config's ``confidence`` (Clopper-Pearson), of at most ``1 - confidence``: at 0.875, 16
  sites and no veto, or more sites for each veto. The bound is over sites that showed
  the name as an alias, which is why a host that adopts it must still be checked.
- **First sight**: a validation URL with the name on a host of a site that has not
  dropped or vetoed it makes the site adopt it there and then (params.py), with the
  collision check of any adoption, so a site whose pages depend on the name vetoes it
  at its first collision, and the host joins ``except_hosts``.
- **Query names only**: path edits (a trailing slash, the path's case) hold or not per
  server, and a server where they do not hold shows no evidence about them before
  they are tried: lowercasing every host's paths merged 133 contents on a fresh
  seed of the generator, and the local edits gave mixed results (docs/history.md).

Published as ``g-`` rules; a name that stops meeting the bound retires its rule, and the
sites that adopted it on no evidence of their own drop it too (params.py).
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..hashing import short_id
from ..rules.ruleset import ACTIVE, EVERY_HOST, RETIRED, Rule
from ..state.store import Store
from .changes import RuleChanges
from .lifecycle import Clock
from .records import ScopeRec

MAX_EXCEPT = 1024  # excepted hosts kept per name; a name vetoed on more is no rule of every host


def every_rule_id(name: str) -> str:
    return short_id("g", "every\x1d" + name)


@lru_cache(maxsize=4096)
def veto_bound(vetoed: int, sites: int, alpha: float) -> float:
    """One-sided upper confidence bound (Clopper-Pearson, level ``1 - alpha``) on the
    share of sites that veto, having seen ``vetoed`` of ``sites``."""
    if sites <= 0:
        return 1.0
    if vetoed >= sites:
        return 1.0
    lo, hi = vetoed / sites, 1.0

    base = math.lgamma(sites + 1)

    def cdf(p: float) -> float:  # in logs: the binomial coefficients of thousands of sites overflow a float
        lp, lq = math.log(p), math.log1p(-p)
        return sum(
            math.exp(base - math.lgamma(k + 1) - math.lgamma(sites - k + 1) + k * lp + (sites - k) * lq)
            for k in range(vetoed + 1)
        )

    for _ in range(50):
        mid = (lo + hi) / 2
        if cdf(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def is_query_name(cls: str) -> bool:
    """A transfer class that is a query parameter's name (not the scheme, a pair of
    hosts, a path edit or a token shape, which all start with ``=``)."""
    return bool(cls) and not cls.startswith("=")


class EveryHost:
    def __init__(self, store: Store, changes: RuleChanges, clock: Clock, confidence: float):
        self.recs = store.table("pevery", type=ScopeRec)
        self.changes = changes
        self.clock = clock
        self.alpha = 1.0 - confidence
        # names whose rule is active, read for every URL with a query
        self.active: set[str] = {name for name, r in self.recs.items() if r.status == ACTIVE}

    def holds(self, active: int, vetoed: int) -> bool:
        return active > 0 and veto_bound(vetoed, active + vetoed, self.alpha) <= self.alpha

    def judge(self, name: str, active: int, vetoed: int) -> bool | None:
        """The name's site counts changed: True when its rule became active, False when it
        retired, None when nothing changed."""
        if not is_query_name(name):
            return None
        rec = self.recs.get(name)
        holds = self.holds(active, vetoed) and not (rec is not None and rec.full)
        if holds == (name in self.active):
            return None
        rec = rec or ScopeRec()
        rec.status = ACTIVE if holds else RETIRED
        rec.support = active
        self._publish(name, rec, fresh=holds)
        if holds:
            self.active.add(name)
        else:
            self.active.discard(name)
        return holds

    def vetoed(self, name: str, hosts: list[str]) -> None:
        """The name was vetoed on a site whose hosts are these: they are excepted."""
        if not is_query_name(name):
            return
        rec = self.recs.get(name)
        if rec is None:
            rec = ScopeRec()
        fresh = sorted(set(hosts) - set(rec.except_hosts))
        if not fresh or rec.full:
            return
        rec.except_hosts = sorted(rec.except_hosts + fresh)
        if len(rec.except_hosts) > MAX_EXCEPT:  # vetoed far too often to hold anyway
            rec.except_hosts, rec.full = [], True  # an active rule retires at the next judge
            self.recs[name] = rec
            return
        if rec.status == ACTIVE:
            self._publish(name, rec, fresh=False)
        else:
            self.recs[name] = rec

    def excepted(self, name: str, host: str) -> bool:
        rec = self.recs.get(name)
        return rec is not None and host in rec.except_hosts

    def _publish(self, name: str, rec: ScopeRec, fresh: bool) -> None:
        rec.version += 1
        rec.updated = self.clock.now
        self.recs[name] = rec
        self.changes.add(self.rule(name, rec), fresh)

    @staticmethod
    def rule(name: str, rec: ScopeRec) -> Rule:
        return Rule(
            id=every_rule_id(name),
            hosts=[EVERY_HOST],
            context="",
            transformation="",
            drop_param=name,
            except_hosts=list(rec.except_hosts),
            support=rec.support,
            freq=rec.support,
            version=rec.version,
            status=rec.status,
            updated=rec.updated,
        )

    def rules(self) -> list[Rule]:
        return [self.rule(name, rec) for name, rec in self.recs.items() if rec.status == ACTIVE]
