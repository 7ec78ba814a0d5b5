"""End to end on a generated multi-site stream with known duplicate groups.

The learner sees the fetches of the first 70% of pages (by first appearance); the rules
it learned then canonicalize URLs of the other 30%, pages it never saw. They must merge
most duplicates and merge almost no distinct pages.
"""

import pytest

from dustonline import OnlineLearner, RuleSet, learn
from dustonline.evaluation.generator import GenConfig, generate, split_by_page
from dustonline.evaluation.metrics import evaluate


@pytest.fixture(scope="module")
def split():
    train_events, rest = split_by_page(list(generate(GenConfig(seed=11, sites=40, pages=15000))), 0.7)
    held_out = {}
    for ev, t in rest:
        if 200 <= ev.status < 300:
            held_out.setdefault(ev.url, t)
    return train_events, held_out


@pytest.fixture(scope="module")
def online(split):
    learner = OnlineLearner()  # the shipped defaults (thesis thresholds)
    learner.learn_many(split[0])
    return learner


def test_online_rules_merge_most_duplicates_of_unseen_pages(online, split):
    _, held_out = split
    rs = online.ruleset()
    m = evaluate(held_out, rs.canonicalize, len(rs))
    base = evaluate(held_out, RuleSet().canonicalize)
    assert m.urls > 5000 and m.urls - m.contents > 1500  # plenty of DUST to find
    assert base.coverage == 0.0  # light normalization alone merges none of it
    assert m.coverage >= 0.70, m  # most duplicates merged (measured 0.78)
    assert m.np >= 0.995, m  # almost every merged pair is a true duplicate (measured 1.0)
    assert m.lost_rate <= 0.002, m  # almost no distinct page lost (measured 0)
    assert 10 <= len(rs) <= 200


def test_traps_do_not_become_rules(online, split):
    """Pagination, sort, language paths, soft-404 and shared images differ in content."""
    _, held_out = split
    rs = online.ruleset()
    by_key = {}
    for url, truth in held_out.items():
        by_key.setdefault(rs.canonicalize(url), set()).add(truth)
    merged_distinct = [truths for truths in by_key.values() if len(truths) > 1]
    assert len(merged_distinct) <= 3, merged_distinct[:3]


def test_batch_dustlin_on_the_same_data_is_comparable(online, split):
    train_events, held_out = split
    batch = RuleSet(learn(train_events))
    m_batch = evaluate(held_out, batch.canonicalize)
    m_online = evaluate(held_out, online.ruleset().canonicalize)
    assert m_online.coverage >= 0.95 * m_batch.coverage
    assert m_online.lost <= m_batch.lost
