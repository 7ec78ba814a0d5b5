"""The rolling window bounds the learner's state: once the window evicts, no table and no
in-memory structure keeps growing with the stream (benchmarks/bench_state.py measures
the same at scale, with RocksDB; this counts keys, so it is exact and fast)."""

import pytest

from dustonline import OnlineLearner, memory_store
from dustonline.config import config_from_dict
from dustonline.evaluation.generator import DISCOVERY_SHARE, GenConfig, generate
from dustonline.state.chunklog import CHUNK

DAY = 86400.0
WINDOW = 2 * DAY
WINDOWS = 7
# tables that remember something on purpose past the window: the versions and count
# epochs of dropped candidates (a rule learned again continues its versions), and
# parameter vetoes (a collision is evidence for good); each grows with rule ids or
# names, not with URLs
REMEMBERING = {"ver", "epoch"}


def table_keys(store) -> dict[str, int]:
    store.flush()
    counts: dict[str, int] = {}
    for key in store._b.d.keys():
        name = key.partition(b"\x00")[0].decode()
        counts[name] = counts.get(name, 0) + 1
    return counts


def memory(learner) -> dict[str, int]:
    """Sizes of what the learner holds in memory beside the tables' bounded caches."""
    return {
        "host urls": learner.host_urls.size,
        "simhash blocks": sum(len(s) for s in learner.index.blocks.slots if s) // 8,
        "candidates": len(learner.book),
        "pending redirects": learner.redirects.count,
        "open window chunks": len(learner.window.by_time.open) + len(learner.window.by_arrival.open),
        "open simhash chunks": len(getattr(getattr(learner.index, "by_time", None), "open", ())),
    }


@pytest.fixture(scope="module")
def snapshots():
    """Keys per table and in-memory sizes at the end of each window of a stream spanning
    WINDOWS windows of event time, with pages discovered all along (the generator
    discovers in the first 70% of its duration: the stream is cut there)."""
    cfg = config_from_dict({"window": {"seconds": WINDOW, "sweep_every": DAY / 4}})
    span = WINDOWS * WINDOW
    gen = GenConfig(seed=3, sites=3, pages=3600, duration=span / DISCOVERY_SHARE)
    learner = OnlineLearner(cfg, memory_store())
    end, edge = gen.start_ts + span, gen.start_ts + WINDOW
    out = []
    for ev, _truth in generate(gen):
        if ev.ts >= end:
            break
        if ev.ts >= edge:
            out.append((learner.summary(), table_keys(learner.store), memory(learner)))
            edge += WINDOW
        learner.learn_one(ev)
    out.append((learner.summary(), table_keys(learner.store), memory(learner)))
    return out


def test_the_stream_evicts_and_arrives_all_along(snapshots):
    first, last = snapshots[0][0], snapshots[-1][0]
    assert len(snapshots) == WINDOWS
    assert last["evicted_urls"] > 2 * last["urls"]  # most URLs ever seen have left
    assert last["new_urls"] - snapshots[-2][0]["new_urls"] > first["new_urls"] / 2  # still arriving


def test_every_table_stays_bounded_after_the_first_window(snapshots):
    """Each table's keys at the end are within 25% (and a few keys) of what it held after
    window 2, when the window first evicted. Without expiry, the simhash and hint tables
    kept every simhash and canonical hint ever seen, and a site's arrival log one entry
    per URL it ever held."""
    (_, early, _), (_, late, _) = snapshots[1], snapshots[-1]
    grown = {
        name: (early.get(name, 0), n)
        for name, n in late.items()
        if name not in REMEMBERING and n > 1.25 * early.get(name, 0) + 10
    }
    assert grown == {}
    # the arrival log: at most twice the URLs held, plus an open chunk a site
    arrival = late.get("url-by-arrival", 0) * CHUNK
    assert arrival <= 2 * snapshots[-1][0]["urls"] + 2 * CHUNK * late["site"]


def test_remembered_rule_ids_grow_slower_than_the_stream(snapshots):
    """The versions of dropped candidates are kept on purpose; they must grow with the
    rule ids the stream teaches, far slower than the URLs it brings."""
    (s2, early, _), (s7, late, _) = snapshots[1], snapshots[-1]
    for name in REMEMBERING:
        assert late.get(name, 0) - early.get(name, 0) < (s7["new_urls"] - s2["new_urls"]) / 100


def test_memory_stays_bounded_after_the_first_window(snapshots):
    (_, _, early), (_, _, late) = snapshots[1], snapshots[-1]
    grown = {k: (early[k], v) for k, v in late.items() if v > 1.25 * early[k] + 10}
    assert grown == {}


def test_a_reopened_learner_has_the_simhash_blocks_of_the_live_one(monkeypatch):
    """Expiry takes simhashes out of full slots, where others had been pushed out: the
    blocks replayed at open must still be the live ones (each entry remembers the slots
    it was pushed out of), or a restarted worker finds other near-duplicates."""
    from dustonline.learner import clusters

    monkeypatch.setattr(clusters, "MAX_PER_BLOCK", 2)  # slots full all the time
    cfg = config_from_dict({"window": {"seconds": WINDOW, "sweep_every": DAY / 4}})
    gen = GenConfig(seed=4, sites=3, pages=1500, duration=4 * WINDOW / DISCOVERY_SHARE)
    store = memory_store()
    learner = OnlineLearner(cfg, store)
    expired = 0
    for i, (ev, _truth) in enumerate(generate(gen)):
        learner.learn_one(ev)
        if i % 700 == 699:
            learner.checkpoint()
            again = OnlineLearner(cfg, store)
            assert again.index.blocks.slots == learner.index.blocks.slots
            assert again.index.adds == learner.index.adds
            expired = learner.summary()["evicted_clusters"]
    assert expired > 500  # the last reopening came after many clusters left
