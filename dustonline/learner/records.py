"""The learner's stored records, typed. Field names are the stored layout: a struct
encodes as the map (or, ``array_like``, the list) the learner wrote before these types
existed, so state directories written then still load."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .generalize import Contribution


class Stats(msgspec.Struct):
    events: int = 0
    ignored: int = 0  # non-2xx, empty payload, no content evidence
    new_urls: int = 0
    new_clusters: int = 0
    refreshed: int = 0
    evicted_urls: int = 0
    evicted_clusters: int = 0
    alignments: int = 0  # URLs added to a cluster sample (aligned when rules are derived)
    rule_changes: int = 0


class URLRec(msgspec.Struct, array_like=True, gc=False):
    """A URL in the window (table ``url``, key ``host NUL url``): a list on disk, as it
    was; written once per URL, so small matters more than self-describing."""

    cluster: str
    seen: float  # last fetched (event time): the window evicts by it
    seq: int  # arrival number within its site: the per-site cap evicts by it
    validates: bool  # in a validation cluster (holdout.py)


class ClusterRec(msgspec.Struct, array_like=True, gc=False):
    """A dup-cluster as stored. A struct, not a dict: the read cache holds many of these
    (slots instead of a hash table each), and they hold no cycles, so the collector need
    not track them."""

    n: int = 0  # URLs in the window
    rows: list[str] | None = None  # the sample's URLs, newest first; aligned when rules are derived
    first: str | None = None  # the only URL while k == 1
    k: int = 0  # URLs sampled (<= K)
    hosts: list[str] = []
    noise: bool = False
    contrib: Contribution | None = None
    digests: list[str] = []
    kv: list | None = None  # its parameter-order and case evidence (kvrules.py)
    # a hash of the sample (as prepared) and hosts ``contrib`` was derived from: a host's
    # renaming re-derives all its clusters, and most read as before (induction.py)
    seen: int = 0


class Target(msgspec.Struct):
    """A rule re-targeted to the keys an older rule gives its pages (retarget.py)."""

    context: str
    transformation: str
    by: list[str]  # the rule whose keys it takes
    hosts: list[str]  # where the URLs show it (the rule keeps its own form elsewhere)


class CandRec(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A candidate rule (table ``cand``): the rule as learned, its validation counts and
    its publication state."""

    id: str
    group: str  # the shape group (or kv: key) it was derived from
    context: str
    transformation: str
    hosts: list[str]
    freq: int  # clusters that taught it
    nsupp: int = 0  # validation pairs it would merge (thesis Nsupp)
    nci: int = 0  # of those, pairs of one cluster (thesis Nci)
    malformed: int = 0  # URLs it gives a key no crawler could fetch (an empty path segment it made)
    version: int = 0  # last published version
    status: str = "candidate"  # candidate, active, redundant
    updated: float = 0.0  # event time of its last publication
    epoch: int = 0  # count epoch: its counts' keys in table vcount
    tver: int = 0  # last published version of its re-targeted part (<id>~t)
    since: int | None = None  # event count when it last became active (incumbency)
    pub: list | None = None  # [support, fpr, freq] as last published
    target: Target | None = None

    def as_dict(self) -> dict:
        """The record as a dict of builtins, unset optional fields left out."""
        d = msgspec.structs.asdict(self)
        for k in ("since", "pub", "target"):
            if d[k] is None:
                del d[k]
        if self.target is not None:
            d["target"] = msgspec.structs.asdict(self.target)
        return d


class GroupRec(msgspec.Struct):
    """A shape group (table ``group``): its generalization state and its candidates."""

    shape: Sequence  # a tuple as built, a list as read back (msgspec: an array either way)
    st: dict
    cands: list[str] = []


class KVRec(msgspec.Struct):
    """Parameter-order or letter-case evidence of one key (table ``kv``, kvrules.py)."""

    n: int = 0
    hosts: dict[str, int] = {}
    orders: dict[str, int] = {}
    bits: list[int] = []
    used: list | None = None  # the shape variants were last derived from


class LearnerMeta(msgspec.Struct):
    """The coordinator's own state (table ``meta``, key ``learner``), saved at checkpoints."""

    clock: float = 0.0
    next_sweep: float | None = None
    stats: Stats = msgspec.field(default_factory=Stats)
    dirty_clusters: list[str] = []
    dirty_groups: list[str] = []
    dirty_targets: list[list] = []
    dirty_rules: list[str] = []
    logs: dict = {}
