"""The synthetic stream: deterministic, internally consistent, and with the promised mix."""

from __future__ import annotations

import gzip
import statistics
from collections import Counter, defaultdict

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustonline.events import check_url, event_from_dict
from dustonline.generate import FAMILIES, GenConfig, generate, generate_labeled, site_layout, write_stream

SMALL = GenConfig(seed=3, sites=8, pages=1500)


@pytest.fixture(scope="module")
def stream():
    """The default configuration on seed 0, with labels."""
    return list(generate_labeled(GenConfig()))


def _ok(event) -> bool:
    return 200 <= event.status < 300


def _hamming(a: int, b: int) -> int:
    return bin(a ^ b).count("1")


def _host(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]


# --------------------------------------------------------------------------- determinism

def _dump(cfg: GenConfig) -> list:
    return [(e.to_json(), t) for e, t in generate(cfg)]


def test_same_seed_same_stream():
    assert _dump(SMALL) == _dump(SMALL)


def test_different_seed_different_stream():
    other = GenConfig(seed=4, sites=SMALL.sites, pages=SMALL.pages)
    assert _dump(SMALL) != _dump(other)


def test_generate_is_generate_labeled_without_labels():
    assert [(e, t) for e, t, _ in generate_labeled(SMALL)] == list(generate(SMALL))


# --------------------------------------------------------------------------- ground truth

def test_distinct_truths_never_share_a_digest(stream):
    truths_of = defaultdict(set)
    for e, t, _ in stream:
        if _ok(e):
            truths_of[e.digest].add(t)
    shared = {d: ts for d, ts in truths_of.items() if len(ts) > 1}
    assert not shared


def test_same_truth_same_digest_except_print_pages(stream):
    digests = defaultdict(set)
    simhash_of = {}
    print_digests = set()
    for e, t, label in stream:
        if not _ok(e):
            continue
        digests[t].add(e.digest)
        assert simhash_of.setdefault(e.digest, e.simhash) == e.simhash  # exact dup: same sketch
        if "print" in label:
            print_digests.add(e.digest)
    assert print_digests, "no near-duplicate print pages in the stream"
    for t, ds in digests.items():
        if len(ds) == 1:
            continue
        assert len(ds) == 2, (t, ds)
        plain, near = sorted(ds, key=lambda d: d in print_digests)
        assert near in print_digests and plain not in print_digests
        assert 1 <= _hamming(simhash_of[plain], simhash_of[near]) <= 2


def test_print_pages_are_near_duplicates_only(stream):
    for e, t, label in stream:
        if "print" in label:
            assert "print=1" in e.url or "/print/" in e.url


def test_first_fetch_of_a_page_is_its_main_url(stream):
    first = {}
    for e, t, label in stream:
        first.setdefault(t, (e, label))
    page_truths = [t for t, (_, label) in first.items() if label == "main"]
    assert len(page_truths) == GenConfig().pages
    for t in page_truths:
        e, _ = first[t]
        assert e.status == 200
        assert "sid=" not in e.url and "utm_" not in e.url and "print" not in e.url
    # every later event of a page carries the page's truth, so a split by first
    # appearance puts all of a page's URLs on one side
    labels_by_truth = defaultdict(set)
    for e, t, label in stream:
        labels_by_truth[t].add(label.split(":")[0])
    aliased = [t for t in page_truths if "alias" in labels_by_truth[t]]
    assert len(aliased) > 0.25 * len(page_truths)


def test_url_to_truth_is_a_function(stream):
    truth_of = {}
    for e, t, _ in stream:
        assert truth_of.setdefault(e.url, t) == t, e.url


# --------------------------------------------------------------------------- the mix

def test_stream_mixes_families_traps_and_errors(stream):
    urls = [e.url for e, _, _ in stream]
    assert any(not _host(u).startswith("www.") for u in urls)
    assert any("sid=" in u for u in urls)
    assert any("PHPSESSID=" in u or ";jsessionid=" in u for u in urls)
    assert any("utm_source=" in u for u in urls)
    assert any("page=2" in u or "page=3" in u for u in urls)
    assert any("/print/" in u or "print=1" in u for u in urls)
    statuses = Counter(e.status for e, _, _ in stream)
    assert {404, 500, 301} <= set(statuses)
    assert 0.003 < sum(n for s, n in statuses.items() if s != 200) / len(stream) < 0.03
    assert any(e.canonical for e, _, _ in stream)


def test_every_family_and_trap_occurs_on_seed_0(stream):
    labels = Counter(label for _, _, label in stream)
    families = {name for label in labels if label.startswith("alias:") for name in label[6:].split("+")}
    assert families == {f.name for f in FAMILIES}
    kinds = {label for label in labels if label.startswith("trap:")}
    assert kinds == {"trap:pagination", "trap:sort", "trap:lang", "trap:soft404", "trap:image"}
    traps = sum(n for label, n in labels.items() if label.startswith("trap:"))
    assert 0.01 < traps / len(stream) < 0.04


def test_traps_have_their_own_truth(stream):
    page_of_main = {}
    soft404_urls = defaultdict(set)
    for e, t, label in stream:
        if label == "main":
            page_of_main[t] = e.url
        elif label in ("trap:pagination", "trap:sort", "trap:lang"):
            base = t.rsplit("/", 1)[0]
            assert base in page_of_main and t != base  # a different content than its page
        elif label == "trap:soft404":
            soft404_urls[t].add(e.url)
    assert soft404_urls and max(len(u) for u in soft404_urls.values()) > 3  # one body, many URLs


def test_duplicate_share(stream):
    truth_of = {e.url: t for e, t, _ in stream if _ok(e)}
    n, c = len(truth_of), len(set(truth_of.values()))
    assert 0.15 <= (n - c) / n <= 0.6


def test_sites_are_heavy_tailed():
    layout = site_layout(GenConfig())
    pages = [s["pages"] for s in layout]
    assert sum(pages) == GenConfig().pages
    assert min(pages) >= 20
    assert max(pages) > 5 * statistics.median(pages)
    assert len({s["host"] for s in layout}) == len(layout)
    assert all(1 <= len(s["families"]) <= 4 for s in layout)


# --------------------------------------------------------------------------- validity and order

def test_times_urls_and_hints_are_valid(stream):
    cfg = GenConfig()
    last = cfg.start_ts
    for e, _, _ in stream:
        assert last <= e.ts <= cfg.start_ts + cfg.duration
        last = e.ts
        check_url(e.url)
        if e.canonical is not None:
            check_url(e.canonical)


def test_alias_fetches_are_not_adjacent_to_their_page(stream):
    position = {}
    gaps = []
    for i, (e, t, label) in enumerate(stream):
        if label == "main":
            position[t] = i
        elif label.startswith("alias:"):
            gaps.append(i - position[t])
    assert statistics.median(gaps) > 100


def test_site_order_keeps_the_pages_and_groups_sites():
    crawl = list(generate_labeled(SMALL))
    by_site = list(generate_labeled(GenConfig(seed=SMALL.seed, sites=SMALL.sites, pages=SMALL.pages,
                                              fetch_order="site")))
    mains = lambda s: [t for _, t, label in s if label == "main"]  # noqa: E731
    assert sorted(mains(crawl)) == sorted(mains(by_site))
    hosts = [t.split(":")[0] for t in mains(by_site)]
    switches = sum(a != b for a, b in zip(hosts, hosts[1:]))
    assert switches == SMALL.sites - 1
    times = [e.ts for e, _, _ in by_site]
    assert times == sorted(times)


def test_bad_fetch_order():
    with pytest.raises(ValueError):
        next(generate(GenConfig(fetch_order="random")))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    sites=st.integers(1, 6),
    per_site=st.integers(1, 80),
    dup_rate=st.floats(0, 1),
    noise=st.floats(0, 0.3),
    order=st.sampled_from(["crawl", "site"]),
)
def test_contract_holds_for_any_config(seed, sites, per_site, dup_rate, noise, order):
    cfg = GenConfig(seed=seed, sites=sites, pages=sites * per_site, dup_rate=dup_rate, noise=noise,
                    duration=3 * 86400, fetch_order=order)
    last = cfg.start_ts
    truths_of = defaultdict(set)
    mains = 0
    for e, t, label in generate_labeled(cfg):
        assert last <= e.ts <= cfg.start_ts + cfg.duration
        last = e.ts
        check_url(e.url)
        mains += label == "main"
        if _ok(e):
            truths_of[e.digest].add(t)
    assert mains == cfg.pages
    assert all(len(ts) == 1 for ts in truths_of.values())


# --------------------------------------------------------------------------- files

@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_write_stream_round_trip(tmp_path, suffix):
    ev_path, tr_path = tmp_path / f"events.jsonl{suffix}", tmp_path / f"truth.jsonl{suffix}"
    n = write_stream(SMALL, ev_path, tr_path)
    opener = gzip.open if suffix else open
    with opener(ev_path, "rb") as f:
        events = [event_from_dict(msgspec.json.decode(line)) for line in f]
    with opener(tr_path, "rb") as f:
        truths = [msgspec.json.decode(line) for line in f]
    expected = list(generate(SMALL))
    assert n == len(events) == len(truths) == len(expected)
    assert events == [e for e, _ in expected]  # simhash survives the hex round trip
    assert truths == [{"url": e.url, "truth": t} for e, t in expected]
