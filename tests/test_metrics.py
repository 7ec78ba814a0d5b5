"""The seeds' metrics on cases small enough to compute by hand (docs/DESIGN.md §5)."""

import pytest

from dustonline.evaluation.metrics import KeyStats, evaluate, evaluate_keys

# five URLs, three pages X, Y, Z; keys k1..k3 as some rule set would give them
TRUTH = {"a": "X", "b": "X", "c": "Y", "d": "Z", "e": "Y"}
KEYS = {"a": "k1", "b": "k1", "c": "k2", "d": "k2", "e": "k3"}


def test_hand_computed_case():
    m = evaluate(TRUTH, KEYS.__getitem__, n_rules=2)
    assert (m.urls, m.contents, m.keys) == (5, 3, 3)
    assert m.compression == pytest.approx(1 - 3 / 5)  # Lei Eq. 1, Koppula's ReductionRatio
    # correct merges: b onto a (both X); d onto c is wrong (Z onto Y); e is alone under k3
    assert m.coverage == pytest.approx(1 / (5 - 3))
    assert m.wrong_merges == 1
    # a crawler fetches the first URL of each key: a (X), c (Y), e (Y): Z is never fetched
    assert (m.lost, m.lost_rate) == (1, pytest.approx(1 / 3))
    # pairs under one key: (a,b) true, (c,d) false -> Koppula's normalization precision 1/2
    assert m.np == pytest.approx(0.5)
    # Koppula's AvgReductionPerRule: |U_orig| * ReductionRatio / |R|
    assert m.arr == pytest.approx(5 * 0.4 / 2)
    # Lei Eq. 2 with C_norm = the 2 contents still fetched, N_norm = 3 keys
    assert m.dup_reduction == pytest.approx(1 - (1 - 2 / 3) / (1 - 3 / 5))


def test_thesis_coverage_and_lei_dup_reduction_differ_as_written():
    """N=10 URLs of C=5 pages; a rule set merges 3 true duplicates and nothing else."""
    truth = {f"u{i}": f"p{i % 5}" for i in range(10)}  # every page twice
    merged = {"u5": "u0", "u6": "u1", "u7": "u2"}
    m = evaluate(truth, lambda u: merged.get(u, u))
    assert m.keys == 7 and m.lost == 0 and m.np == 1.0
    assert m.coverage == pytest.approx(1 - (7 - 5) / (10 - 5))  # thesis Eq. 2.3: 0.6
    assert m.dup_reduction == pytest.approx(1 - (1 - 5 / 7) / (1 - 5 / 10))  # Lei Eq. 2: 0.43
    assert m.compression == pytest.approx(0.3)


def test_identity_and_merge_everything_are_the_extremes():
    ident = evaluate(TRUTH, lambda u: u)
    assert (ident.coverage, ident.lost, ident.np, ident.compression) == (0.0, 0, 1.0, 0.0)
    assert evaluate({"a": "X", "b": "Y"}, lambda u: u).coverage is None  # no duplicates to find
    one = evaluate(TRUTH, lambda u: "k")
    # everything under one key: only a is fetched; Y and Z are lost; 2 of 10 pairs are true
    assert one.lost == 2 and one.np == pytest.approx(2 / 10)
    assert one.coverage == pytest.approx(2 / 2)  # b and e each had a true duplicate under k


def test_fetch_order_decides_what_is_lost():
    """The first URL of a key is the one fetched: the same keys lose different pages."""
    first_z = {"d": "Z", "c": "Y", "a": "X"}
    first_y = {"c": "Y", "d": "Z", "a": "X"}
    key = {"a": "a", "c": "k", "d": "k"}.__getitem__
    assert evaluate(first_z, key).lost == 1 and evaluate(first_y, key).lost == 1
    assert evaluate_keys([("k", "Z"), ("k", "Y")]).lost == 1


def test_incremental_equals_batch_at_every_prefix():
    ks = KeyStats()
    items = list(TRUTH.items())
    outcomes = []
    for i, (u, t) in enumerate(items):
        outcomes.append(ks.add(KEYS[u], t))
        assert ks.metrics() == evaluate(dict(items[: i + 1]), KEYS.__getitem__)
    assert outcomes == [None, True, None, False, None]  # new key, true merge, new, wrong merge, new
