"""The learner's stored records, typed. Field names are the stored layout: a struct
encodes as the map (or, ``array_like``, the list) the learner wrote before these types
existed, so state directories written then still load.

Every struct of the learner is here, apart from the modules that use it, so those modules
can be compiled (setup.py): mypyc compiles a class into a native one, and msgspec's
structs must stay msgspec's."""

from __future__ import annotations

from collections.abc import Sequence

import mmh3
import msgspec

from ..rules.rule import RETIRED

CANDIDATE = "candidate"  # a parameter name's status before it is active or vetoed (ParamEv)


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
    malformed: int = 0  # URLs it gives a key no crawler could fetch (an empty path segment or host label it made)
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


class Contribution(msgspec.Struct, array_like=True, frozen=True):
    """What one cluster teaches: its rule's shape, the values of its slots, its hosts."""

    shape: tuple
    slots: tuple
    hosts: tuple[str, ...]

    @property
    def shape_id(self) -> str:
        return shape_id(self.shape)


class Candidate(msgspec.Struct, frozen=True):
    id: str
    context: str
    transformation: str
    freq: int
    hosts: tuple[str, ...]
    parts: tuple = ()  # what it was rendered from (permute.py folds orders into these)


def shape_id(shape: tuple) -> str:
    return f"{mmh3.hash64(msgspec.msgpack.encode(shape), signed=False)[0]:016x}"


class ParamObs(msgspec.Struct, array_like=True, gc=False):
    """What a cluster's URLs showed of each parameter name (table ``pobs``, by cluster)."""

    site: str
    blind: int = 0  # URLs without a query that came before any was observed (path unknown)
    paths: dict[str, int] = {}  # address (site NUL path) -> URLs observed with it
    seen: dict[str, list] = {}  # address NUL name -> [URLs with it, up to MAX_VALUES values]
    varied: list[str] = []  # "site NUL name" it counts as evidence for (once each)
    noisy: bool = False  # too many paths: evidence withdrawn, nothing more observed


class ParamEv(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One name on one site (table ``pev``, key ``site NUL name``)."""

    n: int = 0  # clusters in the window in which it varied
    hosts: list[str] = []  # where it varied: the rule's scope
    status: str = CANDIDATE  # candidate, active, vetoed
    version: int = 0  # last published version
    updated: float = 0.0
    pub: list[str] = []  # hosts as last published
    support: int = 0  # n as last published
    target: str = ""  # a pair of hosts: the one the other moves to, while active
    shape: str = ""  # its values' token shape when it first varied (a second transfer class)
    # the first two values it varied with (BARE for ``?name``): one_value; state written
    # before this field reads as none, and its names are judged as they were then
    values: list[str] = []


class ScopeRec(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One every-host name (table ``pevery``, key the name)."""

    status: str = RETIRED
    version: int = 0
    updated: float = 0.0
    support: int = 0  # sites that dropped it, when last published
    except_hosts: list[str] = []  # hosts of the sites that vetoed it, sorted
    full: bool = False  # more than MAX_EXCEPT hosts vetoed it: never of every host (bounded state)


class Move(msgspec.Struct, frozen=True):
    """Registered domain ``site`` learns on shard ``dst`` from now on; it learned on
    ``src`` (joins.py)."""

    site: str
    src: int
    dst: int


class RoundSeen(msgspec.Struct, frozen=True):
    """What ``Joins`` reads of one round's events on one partition: the (digest hash,
    domain) pairs, and the events per domain, both sorted."""

    pairs: list[tuple[int, str]]
    events: list[tuple[str, int]]


class JoinsSaved(msgspec.Struct, array_like=True):
    """What a ``Joins.save`` head names (joins.py): the digests whole, as ``chunks``
    records of generation ``gen``, then journal records ``first`` to ``after`` (not
    included), ``entries`` pairs in all. A list in the head, as before this type."""

    gen: int = 0
    chunks: int = 0
    first: int = 0
    after: int = 0
    entries: int = 0

    def keys(self, key: str) -> set[str]:
        base = {f"{key}/base/{self.gen}/{i}" for i in range(self.chunks)}
        return base | {f"{key}/journal/{n}" for n in range(self.first, self.after)}
