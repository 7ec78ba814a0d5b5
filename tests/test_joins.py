"""A site on two registered domains learned in one shard (learner/joins.py)."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from dustonline import OnlineLearner
from dustonline.config import ConfigError, config_from_dict
from dustonline.evaluation.generator import GenConfig, generate
from dustonline.events.event import FetchEvent
from dustonline.events.routing import partition_for
from dustonline.learner.joins import MAX_SPREAD, Joins
from dustonline.learner.parallel import ParallelLearner
from dustonline.learner.partitioned import PartitionedLearner
from dustonline.rules.ruleset import ACTIVE, RETIRED, RuleSet, encode_rule
from dustonline.rules.urls import host_of, site_of_host

SHARDS = 4


def _domains(n: int) -> list[str]:
    """``n`` registered domains on ``n`` different shards of ``SHARDS``."""
    out: list[str] = []
    taken: set[int] = set()
    for i in range(1000):
        d = f"site{i}.com"
        s = partition_for(d.encode(), SHARDS)
        if s not in taken:
            out.append(d)
            taken.add(s)
        if len(out) == n:
            return out
    raise AssertionError("not enough shards")


def _ev(domain: str, path: str, digest: str, ts: float = 1.0) -> FetchEvent:
    return FetchEvent(url=f"http://{domain}/{path}", ts=ts, digest=digest)


def _see(j: Joins, *events: FetchEvent) -> None:
    for ev in events:
        j.see(ev, site_of_host(host_of(ev.url)))


def test_a_domain_joins_after_sharing_enough_digests_and_the_smaller_side_moves():
    a, b = _domains(2)
    j = Joins(SHARDS, join_after=3)
    _see(j, *(_ev(a, f"p{i}", f"d{i}") for i in range(10)))  # a: 10 events
    _see(j, _ev(b, "x0", "d0"), _ev(b, "x1", "d1"))
    assert j.decide() == []  # two shared digests: not yet
    _see(j, _ev(b, "x1", "d1"))  # the same digest again counts once
    assert j.decide() == []
    _see(j, _ev(b, "x2", "d2"))
    [m] = j.decide()
    assert (m.site, m.src, m.dst) == (b, partition_for(b.encode(), SHARDS), partition_for(a.encode(), SHARDS))
    assert j.shard(b) == j.shard(a) and j.joined == 1 and j.partner == {b: a}
    _see(j, *(_ev(b, f"y{i}", f"d{i}") for i in range(5)))  # together now: nothing more to decide
    assert j.decide() == []


def test_joins_do_not_depend_on_how_the_domains_events_interleave_within_a_round():
    """A worker group's partitions see their own domains' events in order, never the
    interleaving across partitions: a round's joins must come from what it saw alone."""
    domains = _domains(SHARDS)
    extra = [f"more{i}.com" for i in range(6)]
    per_domain = {d: [_ev(d, f"p{i}", f"c{(i * 7 + k) % 9}") for i in range(12)] for k, d in enumerate(domains + extra)}
    outcomes = set()
    for seed in range(6):
        rng = random.Random(seed)
        queues = {d: list(evs) for d, evs in per_domain.items()}
        order = []
        while any(queues.values()):
            d = rng.choice([d for d, q in queues.items() if q])
            order.append(queues[d].pop(0))
        j = Joins(SHARDS, join_after=2)
        _see(j, *order)
        outcomes.add(tuple((m.site, m.src, m.dst) for m in j.decide()))
    assert len(outcomes) == 1 and next(iter(outcomes))


def test_joins_restored_from_a_checkpoint_decide_as_the_ones_never_stopped():
    a, b, c = _domains(3)
    first = [_ev(a, f"p{i}", f"a{i}") for i in range(9)] + [_ev(b, "x0", "a0"), _ev(c, "y0", "a1")]
    rest = [_ev(b, "x1", "a1"), _ev(c, "y1", "a2"), _ev(b, "x2", "a2"), _ev(c, "y2", "a3")]
    whole = Joins(SHARDS, join_after=3)
    _see(whole, *first)
    assert whole.decide() == []
    _see(whole, *rest[:2])
    saved = whole.dump()  # a checkpoint within a round
    _see(whole, *rest[2:])
    again = Joins(SHARDS, join_after=3)
    again.restore(saved)
    _see(again, *rest[2:])
    moves = whole.decide()
    assert moves and again.decide() == moves and again.partner == whole.partner and again.moved == whole.moved


def test_joins_saved_round_by_round_load_as_they_were_and_write_a_round_not_all():
    """A checkpoint writes the digests of the rounds since the last one (a journal),
    and all of them again only when the journal has outgrown them: a worker group's
    partition checkpoints every few thousand events, and a million digests written
    each time were 1.5 MB a checkpoint at 120k. Loaded at any save, the joins are the
    ones never stopped, digests forgotten at the cap included."""
    from dustonline.state.store import memory_store

    domains = _domains(SHARDS) + [f"more{i}.com" for i in range(8)]
    rng = random.Random(5)
    whole = Joins(SHARDS, join_after=4, max_digests=300)
    whole.journal_min = 40
    table = memory_store().table("joins")
    bases = 0
    for r in range(60):
        _see(whole, *(_ev(rng.choice(domains), f"p{r}-{i}", f"c{rng.randrange(900)}") for i in range(25)))
        whole.decide()
        _see(whole, _ev(domains[0], f"q{r}", f"c{r}"))  # a round begun: saved as it stands
        was = whole._saved
        whole.save(table, "digests")
        now = whole._saved
        # one record more (the round's digests), or the journal folded into a whole
        assert (now.first, now.after) == (was.first, was.after + 1) or (now.gen, now.first) == (was.gen + 1, was.after)
        bases += now.gen != was.gen
        again = Joins(SHARDS, join_after=4, max_digests=300)
        assert again.load(table, "digests")
        assert again.dump() == whole.dump()
    assert whole.joined and bases >= 3  # joins happened, and the journal was folded into a whole
    # from a save on, the loaded joins decide as the ones never stopped
    more = [_ev(rng.choice(domains), f"z{i}", f"c{rng.randrange(900)}") for i in range(200)]
    for j in (whole, again):
        _see(j, *more)
    assert again.decide() == whole.decide() and again.dump() == whole.dump()
    assert not Joins(SHARDS, 3).load(memory_store().table("joins"), "digests")


class _Log(dict):
    """A table that remembers itself after every write: what a reader of a log (the
    transfer topic) stopped at any record would hold."""

    def __init__(self):
        super().__init__()
        self.states: list[dict] = []

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.states.append(dict(self))

    def __delitem__(self, key):
        super().__delitem__(key)
        self.states.append(dict(self))


def test_joins_saved_to_a_log_load_at_any_record_as_before_or_after_the_save():
    """The coordinator saves its joins to the transfer topic record by record (pool.py):
    a coordinator taking over after a crash mid-save reads the records up to anywhere.
    It loads either the joins as saved before or as saved now, never a mix, folds of
    the journal into a whole included."""
    domains = _domains(SHARDS) + [f"more{i}.com" for i in range(8)]
    rng = random.Random(9)
    j = Joins(SHARDS, join_after=4, max_digests=100)
    j.journal_min = 40
    log = _Log()
    before = None
    folds = 0
    for r in range(40):
        _see(j, *(_ev(rng.choice(domains), f"p{r}-{i}", f"c{rng.randrange(900)}") for i in range(25)))
        j.decide()
        log.states = []
        gen = j._saved.gen
        j.save(log, "joins")
        folds += j._saved.gen != gen
        after = j.dump()
        for state in log.states:
            again = Joins(SHARDS, join_after=4, max_digests=100)
            loaded = again.load(state, "joins")
            assert (again.dump() if loaded else None) in (before, after)
        before = after
    assert folds >= 3


def test_a_save_cut_off_before_its_deletes_leaves_records_no_head_names():
    """The coordinator sends a save's deletes after its head (pool.py); cut off in
    between, the transfer topic keeps records that the head no longer names. Those are
    what ``saved_keys`` leaves out, so a coordinator that takes over finds and deletes
    them; after a complete save there are none."""
    domains = _domains(SHARDS) + [f"more{i}.com" for i in range(8)]
    rng = random.Random(3)
    j = Joins(SHARDS, join_after=4, max_digests=100)
    j.journal_min = 40
    log = _Log()
    left = 0
    for r in range(40):
        _see(j, *(_ev(rng.choice(domains), f"p{r}-{i}", f"c{rng.randrange(900)}") for i in range(25)))
        j.decide()
        log.states = []
        j.save(log, "joins")
        assert set(log) - {"joins"} == j.saved_keys("joins")
        cut = next(s for s in log.states if s.get("joins") == log["joins"])  # the head written, no delete yet
        again = Joins(SHARDS, join_after=4, max_digests=100)
        assert again.load(cut, "joins") and again.saved_keys("joins") == j.saved_keys("joins")
        assert set(cut) - {"joins"} - again.saved_keys("joins") == set(cut) - set(log)  # exactly the deletes
        left += len(set(cut) - set(log))
    assert left  # some saves folded the journal and had records to delete


def test_a_content_on_many_domains_joins_none_of_the_later_ones():
    """A shared library or pixel is on many sites: past ``MAX_SPREAD`` domains a digest
    stops counting."""
    domains = _domains(SHARDS)
    extra = [f"more{i}.com" for i in range(MAX_SPREAD + 2)]
    j = Joins(SHARDS, join_after=1)
    everyone = domains + extra
    for d in everyone:
        _see(j, _ev(d, "jquery.js", "lib"))
    moved = {m.site for m in j.decide()}
    # the first MAX_SPREAD domains of the round, in its own order (by name), and no other
    assert moved and moved <= set(sorted(everyone)[:MAX_SPREAD]) and len(moved) < MAX_SPREAD


def test_digests_forgotten_past_the_cap_join_nothing():
    """At the cap the oldest quarter goes (a round's digests come in by hash, so each
    event here is a round of its own, to know which are oldest)."""
    a, b = _domains(2)
    j = Joins(SHARDS, join_after=2, max_digests=8)

    def one_by_one(*events):
        for ev in events:
            _see(j, ev)
            assert j.decide() == []

    one_by_one(*(_ev(a, f"p{i}", f"d{i}") for i in range(8)), _ev(a, "q", "e0"))  # e0 drops d0 and d1
    one_by_one(_ev(b, "x0", "d0"), _ev(b, "x1", "d1"))  # new to it now (and d1 drops d2, d3)
    _see(j, _ev(b, "y6", "d6"), _ev(b, "y7", "d7"))  # still remembered: two shared
    assert [m.site for m in j.decide()] == [b]


def test_joined_domains_move_together():
    a, b, c = _domains(3)
    j = Joins(SHARDS, join_after=2)
    _see(j, *(_ev(a, f"p{i}", f"a{i}") for i in range(20)))
    _see(j, *(_ev(b, f"p{i}", f"a{i}") for i in range(2)))  # b joins a
    assert [m.site for m in j.decide()] == [b]
    _see(j, *(_ev(c, f"p{i}", f"c{i}") for i in range(50)))
    _see(j, *(_ev(b, f"q{i}", f"c{i}") for i in range(2)))  # {a, b} (24 events) meets c (50)
    moves = j.decide()
    assert sorted(m.site for m in moves) == [a, b] and {m.dst for m in moves} == {j.shard(c)}
    assert j.shard(a) == j.shard(b) == j.shard(c)


def _www_site(domain: str, n: int, digest_prefix: str, ts: float) -> list[FetchEvent]:
    out = []
    for i in range(n):
        out.append(FetchEvent(url=f"http://{domain}/page/{i}", ts=ts + i, digest=f"{digest_prefix}{i}"))
        out.append(FetchEvent(url=f"http://www.{domain}/page/{i}", ts=ts + i, digest=f"{digest_prefix}{i}"))
    return out


def test_take_site_hands_over_its_urls_and_retires_its_rules_only():
    a, b = "alpha.com", "beta.com"
    lrn = OnlineLearner(config_from_dict({}))
    lrn.learn_many(_www_site(a, 12, "a", 1.0) + _www_site(b, 12, "b", 100.0))
    hosts = {h for r in lrn.rules() for h in r.hosts}
    assert any(site_of_host(h) == b for h in hosts) and any(site_of_host(h) == a for h in hosts)
    before = {r.id: r for r in lrn.rules() if all(site_of_host(h) == a for h in r.hosts)}
    urls = lrn.summary()["urls"]
    fetches, changes = lrn.take_site(b)
    assert changes and all(r.status == RETIRED or r.id not in before for r in changes)
    assert lrn.summary()["urls"] == urls - 24
    # one fetch per URL held, in arrival order; URLs of one content keep one digest
    assert [ev.url for ev in fetches] == [ev.url for ev in _www_site(b, 12, "b", 100.0)]
    assert [ev.digest for ev in fetches] == [ev.digest for ev in _www_site(b, 12, "b", 100.0)]
    assert lrn.take_site(b) == ([], [])
    left = {h for r in lrn.rules() for h in r.hosts}
    assert left and all(site_of_host(h) == a for h in left)
    assert {r.id: r for r in lrn.rules()} == before


@pytest.fixture(scope="module")
def two_domain_sites():
    """Sites that also answer on another registered domain (the generator's ``domain``
    family), and the groups of URLs with one content that span two domains."""
    events = [ev for ev, _ in generate(GenConfig(seed=1, sites=6, pages=1200, families=("domain",), dup_rate=0.5))]
    by_digest = defaultdict(set)
    for ev in events:
        if ev.teaches and ev.digest:
            by_digest[ev.digest].add(ev.url)
    spans = [g for g in by_digest.values() if len({site_of_host(host_of(u)) for u in g}) > 1]
    assert len(spans) > 300
    return events, spans


def _merged_share(rules, spans) -> float:
    rs = RuleSet(rules)
    return sum(len({rs.canonicalize(u) for u in g}) == 1 for g in spans) / len(spans)


def test_shards_learn_a_site_on_two_domains_once_they_join_as_one_learner_does(two_domain_sites):
    """Without joins each domain is a site of its own shard and none of the pairs that
    span them is merged; with them, as many as one learner merges."""
    events, spans = two_domain_sites
    one = OnlineLearner(config_from_dict({}))
    one.learn_many(events)
    base = _merged_share(one.rules(), spans)
    assert base > 0.95
    shares = {}
    for join_after in (0, 3):
        lrn = PartitionedLearner(config_from_dict({"learning": {"shards": SHARDS, "join_after": join_after}}), 1)
        lrn.learn_many(events)
        shares[join_after] = _merged_share(lrn.rules(), spans)
        s = lrn.summary()
        assert s["events"] == len(events)  # URLs handed over at joins are not input
        if join_after:
            assert s["joined"] >= 3 and s["relearned"] > 0
            # each moved domain's rules come from the shard it joined, none from the one it left
            moved = lrn.group.moved
            for rid, partials in lrn.merger._partials.items():
                for shard, r in partials.items():
                    if r.status == ACTIVE:
                        for h in r.hosts:
                            d = site_of_host(h)
                            assert d not in moved or moved[d] == int(shard), (rid, h, shard)
    assert shares[0] < 0.2 and shares[3] >= base - 0.01


def test_shards_in_processes_join_what_one_process_joins(two_domain_sites):
    """The parent decides the joins and tells every process: the rules of one process,
    byte for byte, pooling and joining every 500 events."""
    events, _ = two_domain_sites
    cfg = config_from_dict({"learning": {"shards": SHARDS, "join_after": 3, "pool_every": 500}})
    one = PartitionedLearner(cfg, 1)
    one.learn_many(events)
    want = [encode_rule(r) for r in one.rules()]
    lrn = ParallelLearner(cfg, 1, 2)
    try:
        lrn.learn_many(events)
        assert [encode_rule(r) for r in lrn.rules()] == want
        got, base = lrn.summary(), one.summary()
        keys = ("events", "urls", "clusters", "candidates", "joined", "relearned")
        assert {k: got[k] for k in keys} == {k: base[k] for k in keys} and base["joined"] >= 3
    finally:
        lrn.close()


def _round_of_joins(pool_every: int) -> tuple[str, str, list[FetchEvent]]:
    """Two domains on two shards whose URLs share 8 digests in the first round (``b``,
    with fewer events, joins ``a``'s shard there), then 5 more of ``b`` and filler of ``a``
    up to the second round."""
    a, b = _domains(2)
    first = [_ev(a, f"p{i}", f"d{i}") for i in range(12)] + [_ev(b, f"x{i}", f"d{i}") for i in range(8)]
    later = [_ev(b, f"y{i}", f"e{i}") for i in range(5)] + [_ev(a, f"q{i}", f"f{i}") for i in range(15)]
    assert len(first) == len(later) == pool_every
    return a, b, first + later


def _learn(lrn: PartitionedLearner, events: list[FetchEvent]) -> None:
    for ev in events:  # (learn_many derives at its end, as the end of an input)
        lrn.learn_one(ev)


def _learner_events(lrn: PartitionedLearner, domain: str) -> int:
    return lrn.learners[partition_for(domain.encode(), SHARDS)].stats.events


def test_a_joined_domains_events_wait_for_the_next_round_where_its_new_shard_learns_them():
    """A worker group's partition cannot learn another partition's events as they come,
    only at a point both logs have: so every layout learns a joined domain's events at
    the next round, by the shard it arrives on, in arrival order."""
    cfg = config_from_dict({"learning": {"shards": SHARDS, "join_after": 3, "pool_every": 20}})
    a, b, events = _round_of_joins(20)
    lrn = PartitionedLearner(cfg, 1)
    _learn(lrn, events[:20])
    assert lrn.group.moved == {b: partition_for(a.encode(), SHARDS)}
    joined = _learner_events(lrn, a)
    assert joined == 12 + 8  # its own, and the 8 URLs handed over
    _learn(lrn, events[20:25])  # b's: held
    assert _learner_events(lrn, a) == joined and _learner_events(lrn, b) == 8
    assert [ev.url for _, ev in lrn.group.held[partition_for(a.encode(), SHARDS)]] == [ev.url for ev in events[20:25]]
    _learn(lrn, events[25:39])
    assert _learner_events(lrn, a) == joined + 14
    lrn.learn_one(events[39])  # the round: held events learned first
    assert _learner_events(lrn, a) == joined + 15 + 5 and not lrn.group.held
    assert lrn.summary()["events"] == 40


def test_held_events_of_a_joined_domain_survive_a_checkpoint(tmp_path):
    """``learn --state`` checkpoints between rounds: what a joined shard has not learned
    yet is in the checkpoint, and a resumed run pools at the same points."""
    from dustonline.state.store import rocks_store

    cfg = config_from_dict({"learning": {"shards": SHARDS, "join_after": 3, "pool_every": 20}})
    a, b, events = _round_of_joins(20)

    def opened():
        store = rocks_store(tmp_path / "state")
        return PartitionedLearner(cfg, 1, lambda s: store.namespace(f"{s}/", SHARDS), root=store)

    whole = PartitionedLearner(cfg, 1)
    whole.learn_many(events)
    whole.flush()
    first = opened()
    _learn(first, events[:25])
    first.checkpoint()
    first.close()
    again = opened()
    assert len(again.group.held[partition_for(a.encode(), SHARDS)]) == 5 and again.group.events == 25
    _learn(again, events[25:])
    again.flush()
    assert [encode_rule(r) for r in again.group.announce()] == [encode_rule(r) for r in whole.group.announce()]
    assert _learner_events(again, a) == _learner_events(whole, a)
    again.close()


def test_partitions_reporting_their_rounds_join_what_one_router_joins(two_domain_sites):
    """A worker group's coordinator sees no event, only each partition's round
    (``RoundInputs``): taken in with ``Joins.add``, they decide the joins one router
    decides from the events themselves, round by round."""
    from dustonline.learner.joins import RoundInputs

    events, _ = two_domain_sites
    parts = 3
    one, group = Joins(SHARDS, join_after=3), Joins(SHARDS, join_after=3)
    inputs = [RoundInputs() for _ in range(parts)]
    decided: list[tuple[list, list]] = []
    for i, ev in enumerate(events, 1):
        site = site_of_host(host_of(ev.url))
        one.see(ev, site)
        inputs[partition_for(site.encode(), parts)].see(ev, site)
        if i % 500 == 0 or i == len(events):
            for p in reversed(range(parts)):  # the order they report in does not matter
                group.add(inputs[p].take())
            decided.append((one.decide(), group.decide()))
    assert sum(len(a) for a, _ in decided) >= 3
    assert [a for a, _ in decided] == [b for _, b in decided]
    assert one.moved == group.moved


def test_a_partitions_round_inputs_survive_a_checkpoint():
    from dustonline.learner.joins import RoundInputs

    a, b = _domains(2)
    r = RoundInputs()
    for ev in (_ev(a, "x", "d1"), _ev(b, "y", "d1"), _ev(a, "z", "d2")):
        r.see(ev, site_of_host(host_of(ev.url)))
    again = RoundInputs()
    again.restore(r.dump())
    assert again.take() == r.take() and r.take().pairs == []


def _group_by_the_log(cfg, events: list[FetchEvent], parts: int):
    """A worker group of ``parts`` partitions joining by DESIGN.md §4's protocol, in one
    process: per partition a log of its events and round markers (one every
    ``pool_every`` events and one at the end, as a replay places them); at a marker a
    partition reads its joined domains' events from their home partitions' logs, derives
    and reports; the coordinator pools the counts and decides the joins from the
    reports; the source of a move hands over, the destination learns. Returns the
    partitions' groups and the merged rules."""
    from dustonline.events.routing import partition_of_host
    from dustonline.learner.shards import POOL_ROUNDS, ShardGroup, shard_count, shards_of
    from dustonline.learner.shared import others_of
    from dustonline.rules.merge import RuleMerger

    total = shard_count(cfg, parts)
    every = cfg.learning.pool_every
    groups = [
        ShardGroup(cfg, shards_of(p, parts, total), total, lambda s: None, False, partitions=parts)
        for p in range(parts)
    ]
    logs: list[list] = [[] for _ in range(parts)]  # FetchEvent, or the round number of a marker
    rounds = 0
    for i, ev in enumerate(events, 1):
        logs[partition_of_host(host_of(ev.url), parts)].append(ev)
        if i % every == 0 or i == len(events):
            rounds += 1
            for log in logs:
                log.append(rounds)
    merger, coordinator, at = RuleMerger(), Joins(total, cfg.learning.join_after), [0] * parts
    for r in range(1, rounds + 1):
        marks = [log.index(r, at[p]) for p, log in enumerate(logs)]
        counts: dict[int, dict] = {}
        for p, g in enumerate(groups):
            for ev in logs[p][at[p] : marks[p]]:
                merger.apply_all(g.learn_one(ev))
            at[p] = marks[p] + 1
            assert g.reports is not None
            for site, start in sorted(g.reports.incoming.items()):
                h = g.reports.home(site)
                seg = [(o, e) for o, e in enumerate(logs[h][: marks[h]]) if o >= start and isinstance(e, FetchEvent)]
                g.hold(
                    (partition_of_host(host_of(e.url), total), e)
                    for _, e in seg
                    if site_of_host(host_of(e.url)) == site
                )
                g.reports.incoming[site] = marks[h] + 1
            merger.apply_all(g.flush())
            counts.update(g.shared_counts())
            coordinator.add(g.reports.inputs.take())
        others = others_of([counts.get(s, {}) for s in range(total)])
        for g in groups:
            merger.apply_all(g.pool({s: others[s] for s in g.shards}))
            merger.apply_all(g.flush())
        for m in coordinator.decide():
            src, dst = groups[m.src % parts], groups[m.dst % parts]
            handed, changes = src.take(m)
            merger.apply_all(changes)
            merger.apply_all(dst.give(m, handed))
            for g in groups:
                g.moved_here(m, dict(enumerate(marks)))
    for _ in range(POOL_ROUNDS - 1):  # the end: pooled while the counts change
        counts = {}
        for g in groups:
            counts.update(g.shared_counts())
        others = others_of([counts.get(s, {}) for s in range(total)])
        changed = [g.pool({s: others[s] for s in g.shards}) for g in groups]
        for g, ch in zip(groups, changed):
            merger.apply_all(ch)
            merger.apply_all(g.flush())
    return groups, merger.rules()


@pytest.mark.parametrize("parts", [2, 4])
def test_a_worker_groups_protocol_joins_and_learns_what_learn_does(two_domain_sites, parts):
    """DESIGN.md §4's protocol, the logs in memory: each partition learns its own events,
    skips a joined domain's and reads them at the next round from the domain's home
    partition; the rules are `learn`'s with shards, byte for byte, and so is what each
    shard learned."""
    events, _ = two_domain_sites
    cfg = config_from_dict({"learning": {"shards": SHARDS, "join_after": 3, "pool_every": 500}})
    ref = PartitionedLearner(cfg, parts)
    ref.learn_many(events)
    groups, rules = _group_by_the_log(cfg, events, parts)
    assert ref.summary()["joined"] >= 3
    assert [encode_rule(r) for r in rules] == [encode_rule(r) for r in ref.rules()]
    for p, g in enumerate(groups):
        want, got = ref.partition_summary(p), g.summary()
        assert {k: got[k] for k in ("events", "urls", "clusters", "relearned")} == {
            k: want[k] for k in ("events", "urls", "clusters", "relearned")
        }


def test_a_negative_join_after_is_a_config_error():
    with pytest.raises(ConfigError, match="learning.join_after must be >= 0"):
        config_from_dict({"learning": {"join_after": -1}}).check()


def test_a_saved_head_names_its_records_in_the_list_it_always_had():
    """``JoinsSaved`` encodes as the list of five ints heads held before it was a type:
    saved state and transfer topics written then still load."""
    import msgspec

    from dustonline.learner.records import JoinsSaved

    assert msgspec.msgpack.encode(JoinsSaved(3, 2, 7, 9, 40)) == msgspec.msgpack.encode([3, 2, 7, 9, 40])
    assert JoinsSaved(3, 2, 7, 9, 40).keys("k") == {"k/base/3/0", "k/base/3/1", "k/journal/7", "k/journal/8"}
