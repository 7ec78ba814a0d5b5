"""The synthetic stream: deterministic, internally consistent, and with the promised mix."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import statistics
from collections import Counter, defaultdict

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustonline.evaluation.generator import (
    DEFAULT_FAMILIES,
    FAMILIES,
    GenConfig,
    drift_info,
    generate,
    generate_labeled,
    parse_families,
    site_layout,
    write_layout,
    write_stream,
)
from dustonline.events.event import check_url, event_from_dict
from dustonline.rules.urls import site_of_host

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
    for e, _t, label in stream:
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
    for _e, t, label in stream:
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
    assert families == {f.name for f in DEFAULT_FAMILIES}  # the later ones are opt-in (GenConfig.families)
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
    for i, (_e, t, label) in enumerate(stream):
        if label == "main":
            position[t] = i
        elif label.startswith("alias:"):
            gaps.append(i - position[t])
    assert statistics.median(gaps) > 100


def test_site_order_keeps_the_pages_and_groups_sites():
    crawl = list(generate_labeled(SMALL))
    by_site = list(
        generate_labeled(GenConfig(seed=SMALL.seed, sites=SMALL.sites, pages=SMALL.pages, fetch_order="site"))
    )
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
    cfg = GenConfig(
        seed=seed,
        sites=sites,
        pages=sites * per_site,
        dup_rate=dup_rate,
        noise=noise,
        duration=3 * 86400,
        fetch_order=order,
    )
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


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    sites=st.integers(1, 8),
    per_site=st.integers(5, 150),
    families=st.sets(st.sampled_from([f.name for f in FAMILIES]), min_size=1),
    drift=st.integers(0, 2),
    drift_at=st.floats(0.05, 0.65),
    order=st.sampled_from(["crawl", "site"]),
)
def test_contract_holds_with_families_and_drift(seed, sites, per_site, families, drift, drift_at, order):
    base = GenConfig(
        seed=seed,
        sites=sites,
        pages=sites * per_site,
        duration=3 * 86400,
        fetch_order=order,
        families=tuple(sorted(families | ({"slug", "www"} if drift else set()))),
    )
    slug_styles = ("/p/<id>/<slug>", "/<section>/<slug>-<id>.html")
    drift = min(drift, sum(s["style"] in slug_styles for s in site_layout(base)))
    cfg = GenConfig(**{**base.__dict__, "drift_sites": drift, "drift_at": drift_at})
    assert len(drift_info(cfg)) == drift
    truth_of, truths_of, mains, used = {}, defaultdict(set), 0, set()
    for e, t, label in generate_labeled(cfg):
        check_url(e.url)
        assert truth_of.setdefault(e.url, t) == t, e.url
        mains += label == "main"
        if label.startswith("alias:"):
            used.update(label[6:].split("+"))
        if _ok(e):
            truths_of[e.digest].add(t)
    assert mains == cfg.pages
    assert used <= set(cfg.families)
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
    expected = list(generate_labeled(SMALL))
    assert n == len(events) == len(truths) == len(expected)
    assert events == [e for e, _, _ in expected]  # simhash survives the hex round trip
    assert truths == [{"url": e.url, "truth": t, "kind": k} for e, t, k in expected]


def test_default_stream_is_pinned():
    """The committed sample data and the tests' figures come from the default stream: new
    knobs left at their defaults (or the default families named) must not change it."""

    def fingerprint(cfg):
        h = hashlib.sha256()
        for e, t in generate(cfg):
            h.update(repr((e.url, e.ts, e.status, e.digest, e.simhash, e.canonical, e.length, t)).encode())
        return h.hexdigest()

    assert fingerprint(SMALL) == "a4742a0474b29c748787503e57bb6d1d7616906495252a0e3db20098bd332de4"
    named = GenConfig(
        seed=SMALL.seed,
        sites=SMALL.sites,
        pages=SMALL.pages,
        families=tuple(f.name for f in DEFAULT_FAMILIES),
        drift_sites=0,
    )
    assert fingerprint(named) == fingerprint(SMALL)


# --------------------------------------------------------------------------- families knob


def _families_used(cfg):
    return {
        name for _, _, label in generate_labeled(cfg) if label.startswith("alias:") for name in label[6:].split("+")
    }


def test_families_restrict_what_sites_use():
    cfg = GenConfig(seed=2, sites=10, pages=2000, families=("www", "tracking", "trailing_slash"))
    assert _families_used(cfg) == {"www", "tracking", "trailing_slash"}
    assert all(set(s["families"]) <= set(cfg.families) for s in site_layout(cfg))
    only = GenConfig(seed=2, sites=10, pages=2000, families=("param_order",))  # most styles have no 2 params
    assert _families_used(only) == {"param_order"}
    assert any(not s["families"] for s in site_layout(only))  # such sites simply have no DUST


def test_opt_in_families_keep_the_contract():
    """Other domains, mirror hosts and session-id path segments: only when asked for."""
    cfg = GenConfig(seed=6, sites=8, pages=2000, families=("domain", "mirror_host", "session_path", "www"))
    stream = list(generate_labeled(cfg))
    assert _families_used(cfg) == set(cfg.families)
    layout = {s["host"]: s for s in site_layout(cfg)}
    truth_of, digests = {}, defaultdict(set)
    main_hosts = {s["site"]: h for h, s in layout.items()}  # a truth is "<site>:<id>"
    for e, t, label in stream:
        assert truth_of.setdefault(e.url, t) == t, e.url
        if _ok(e):
            digests[e.digest].add(t)
        host = _host(e.url)
        if label == "alias:domain":
            site = layout[main_hosts[t.split(":")[0]]]
            assert site_of_host(host) != site["site"] and host in site["hosts"]  # another registered domain
        elif label == "alias:mirror_host":
            assert host.split(".", 1)[0] in ("mirror", "mirror2", "www2") and site_of_host(host) == t.split(":")[0]
        elif label == "alias:session_path":
            assert "/(S(" in e.url
    assert all(len(ts) == 1 for ts in digests.values())


def test_families_all_and_parse():
    assert parse_families("all") == tuple(f.name for f in FAMILIES)
    assert parse_families(" www, slug ,www") == ("www", "slug")
    assert parse_families(None) is None


@pytest.mark.parametrize("bad", [("www", "bogus"), "nope", ""])
def test_unknown_family_is_a_clear_error(bad):
    with pytest.raises(ValueError) as err:
        next(generate(GenConfig(sites=2, pages=100, families=bad)))
    msg = str(err.value)
    assert all(f.name in msg for f in FAMILIES)
    if bad:
        assert "bogus" in msg or "nope" in msg


# --------------------------------------------------------------------------- concept drift

# one drifting site of each URL style the slug family has
DRIFT_P = GenConfig(seed=4, sites=5, pages=4000, drift_sites=1)  # /p/<id>/<slug>
DRIFT_SLUG = GenConfig(seed=5, sites=6, pages=4000, drift_sites=1)  # /<section>/<slug>-<id>.html

# the slug of a post-drift URL has 5 words (older slugs 1-4), on style "slug" before -<year>.html
_NEW_STYLE = re.compile(r"/(?:[a-z]+-){4}[a-z]+(?:-\d+\.html)?(?=[/;?]|$)")
_SLUG = re.compile(r"(?:[a-z]+-)*[a-z]+(?=(?:-\d+\.html)?$)")


def _rule_key(url: str) -> str:
    """What a "drop the slug" rule keeps of a main URL: /p/<n>/ or /<section>/-<n>.html."""
    return _SLUG.sub("", url.split("://", 1)[1].split("/", 1)[1], count=1)


@pytest.fixture(scope="module", params=[DRIFT_P, DRIFT_SLUG], ids=["p", "slug"])
def drift(request):
    cfg = request.param
    (info,) = drift_info(cfg)
    hosts = set(info["hosts"])
    stream = list(generate_labeled(cfg))
    mine = [(e, t, label) for e, t, label in stream if _host(e.url) in hosts]
    return cfg, info, stream, mine


def test_drift_is_described_but_not_in_the_stream(drift, tmp_path):
    cfg, info, _, _ = drift
    assert info["drift_ts"] == cfg.start_ts + cfg.drift_at * cfg.duration
    assert info["family"] == "slug" and info["families_after"] and "slug" not in info["families_after"]
    assert info["before"] in ("/p/<id>/<slug>", "/<section>/<slug>-<id>.html")
    layout = site_layout(cfg)
    drifting = [s for s in layout if "drift" in s]
    assert [s["drift"] for s in drifting] == [info] and drifting[0]["hosts"] == info["hosts"]
    assert "slug" in drifting[0]["families"]
    assert drift_info(GenConfig()) == [] and not any("drift" in s for s in site_layout(GenConfig()))
    # the files a learner reads say nothing of it; the layout file does
    ev, tr, lay = tmp_path / "ev.jsonl", tmp_path / "tr.jsonl", tmp_path / "layout.json"
    write_stream(cfg, ev, tr)
    keys = {k for line in ev.read_bytes().splitlines() for k in msgspec.json.decode(line)}
    assert keys <= {"url", "ts", "status", "digest", "simhash", "canonical", "length"}
    assert {k for line in tr.read_bytes().splitlines() for k in msgspec.json.decode(line)} == {"url", "truth", "kind"}
    write_layout(cfg, lay)
    doc = json.loads(lay.read_text())
    assert doc["drift"] == [info] and doc["sites"] == layout and doc["config"]["drift_sites"] == 1


def test_drift_happens_at_drift_at(drift):
    cfg, info, _, mine = drift
    t = info["drift_ts"]
    before = [e for e, _, _ in mine if e.ts < t]
    after = [(e, label) for e, _, label in mine if e.ts >= t]
    assert not any(_NEW_STYLE.search(e.url) for e in before)
    new = [e for e, _ in after if _NEW_STYLE.search(e.url)]
    assert sum(label == "main" for e, label in after if _NEW_STYLE.search(e.url)) >= 30
    assert len(new) >= 0.3 * len(after)  # a validator soon sees the new pages
    assert not any("slug" in label for _, label in after)  # old slug aliases stop resolving
    assert any(label.startswith("alias:") and _NEW_STYLE.search(e.url) for e, label in after)  # other DUST goes on


def test_post_drift_pages_sharing_the_old_rule_key_are_distinct(drift):
    _, info, _, mine = drift
    truths_of_key = defaultdict(set)
    for e, t, label in mine:
        if label == "main" and e.ts >= info["drift_ts"]:
            truths_of_key[_rule_key(e.url)].add(t)
    assert max(len(ts) for ts in truths_of_key.values()) >= 3
    assert sum(len(ts) > 1 for ts in truths_of_key.values()) >= 2


def test_before_the_drift_the_slug_is_irrelevant(drift):
    _, info, _, mine = drift
    main_truth = {}
    checked = 0
    for e, t, label in mine:
        if e.ts >= info["drift_ts"]:
            break
        if label == "main":
            main_truth[_rule_key(e.url)] = t
        elif label == "alias:slug":
            assert main_truth[_rule_key(e.url)] == t  # another slug, the same page
            checked += 1
    assert checked >= 10


def test_drift_stream_keeps_the_contract(drift):
    cfg, _, stream, _ = drift
    truth_of, digests, first = {}, defaultdict(set), {}
    for e, t, label in stream:
        assert truth_of.setdefault(e.url, t) == t, e.url  # post-drift URLs are new URLs
        first.setdefault(t, label)
        if _ok(e):
            digests[e.digest].add(t)
        check_url(e.url)
    assert all(len(ts) == 1 for ts in digests.values())
    assert sum(label == "main" for label in first.values()) == cfg.pages


def test_drift_is_deterministic():
    assert _dump(DRIFT_P) == _dump(DRIFT_P)
    assert drift_info(DRIFT_P) == drift_info(DRIFT_P)
    assert _dump(DRIFT_P) != _dump(GenConfig(seed=4, sites=5, pages=4000))


def test_drift_in_site_order_is_within_the_site_slice():
    cfg = GenConfig(seed=0, sites=50, pages=20000, drift_sites=2, drift_at=0.4, fetch_order="site")
    infos = drift_info(cfg)
    assert len(infos) == 2
    for info in infos:
        hosts = set(info["hosts"])
        times = [e.ts for e, _, label in generate_labeled(cfg) if _host(e.url) in hosts and label == "main"]
        lo, hi = min(times), max(times)
        assert lo < info["drift_ts"] < hi
        assert 0.4 < (info["drift_ts"] - lo) / (hi - lo) < 0.7  # discovery covers 70% of the slice


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"drift_sites": 1, "drift_at": 0.0}, "drift_at"),
        ({"drift_sites": 1, "drift_at": 0.8}, "drift_at"),
        ({"drift_sites": -1}, "drift_sites"),
        ({"drift_sites": 40}, "slug URL style"),
        ({"drift_sites": 1, "families": ("www",)}, "'slug'"),
        ({"drift_sites": 1, "families": ("slug",)}, "besides 'slug'"),
    ],
)
def test_bad_drift_configs(kw, words):
    with pytest.raises(ValueError, match=words):
        drift_info(GenConfig(seed=0, sites=50, pages=20000, **kw))


# --------------------------------------------------------------------------- the CLI knobs


def test_cli_generate_knobs(tmp_path, capsys):
    from dustonline.cli import main

    ev, tr, lay = tmp_path / "ev.jsonl", tmp_path / "tr.jsonl", tmp_path / "layout.json"
    assert (
        main(
            [
                "generate",
                str(ev),
                str(tr),
                "--seed",
                "4",
                "--sites",
                "5",
                "--pages",
                "4000",
                "--dup-rate",
                "0.5",
                "--noise",
                "0.03",
                "--families",
                "www,slug,trailing_slash",
                "--drift-sites",
                "1",
                "--drift-at",
                "0.4",
                "--layout",
                str(lay),
            ]
        )
        == 0
    )
    cfg = GenConfig(
        seed=4,
        sites=5,
        pages=4000,
        dup_rate=0.5,
        noise=0.03,
        families=("www", "slug", "trailing_slash"),
        drift_sites=1,
        drift_at=0.4,
    )
    assert [msgspec.json.decode(line)["truth"] for line in tr.read_bytes().splitlines()] == [
        t for _, t in generate(cfg)
    ]
    assert json.loads(lay.read_text())["drift"] == drift_info(cfg)
    # the older form, --events/--truth, still works and gives the default stream
    ev2, tr2 = tmp_path / "ev2.jsonl", tmp_path / "tr2.jsonl"
    ev3, tr3 = tmp_path / "ev3.jsonl", tmp_path / "tr3.jsonl"
    assert (
        main(["generate", "--events", str(ev2), "--truth", str(tr2), "--sites", "8", "--pages", "1500", "--seed", "3"])
        == 0
    )
    write_stream(SMALL, ev3, tr3)
    assert ev2.read_bytes() == ev3.read_bytes() and tr2.read_bytes() == tr3.read_bytes()


def test_cli_generate_bad_family(tmp_path, capsys):
    from dustonline.cli import main

    ev, tr = tmp_path / "ev.jsonl", tmp_path / "tr.jsonl"
    assert main(["generate", str(ev), str(tr), "--families", "www,bogus"]) == 2
    err = capsys.readouterr().err
    assert "bogus" in err and all(f.name in err for f in FAMILIES)
    assert not ev.exists()


# --------------------------------------------------------------------------- a learner sees the drift


@pytest.mark.parametrize(
    "cfg, config_file",
    [
        (DRIFT_P, "configs/default.yaml"),
        (DRIFT_SLUG, "configs/default.yaml"),
        (GenConfig(seed=0, sites=50, pages=20000, drift_sites=1), None),  # shipped defaults, a big site
    ],
    ids=["p-small-site", "slug-small-site", "slug-defaults"],
)
def test_online_learner_retires_the_slug_rule_after_the_drift(cfg, config_file):
    """The "drop the slug" rule learned before the redesign merges distinct pages after
    it: validation clusters must contradict it and the learner retire it, soon."""
    from pathlib import Path

    from dustonline import OnlineLearner
    from dustonline.config import load_config
    from dustonline.rules.ruleset import CompiledRule

    (info,) = drift_info(cfg)
    hosts, t_drift = set(info["hosts"]), info["drift_ts"]
    stream = list(generate(cfg))
    config = load_config(Path(__file__).resolve().parents[1] / config_file) if config_file else None
    learner = OnlineLearner(config)
    changes = []  # (events of the drifting site since the drift, published rule)
    since = 0
    for e, _ in stream:
        if e.ts >= t_drift and _host(e.url) in hosts:
            since += 1
        changes += [(since, r) for r in learner.learn_one(e)]
    changes += [(since, r) for r in learner.flush()]
    post = [(e.url, t) for e, t in stream if e.ts >= t_drift and _host(e.url) in hosts and _ok(e)]

    def merges_distinct_pages(canon) -> bool:
        truths = defaultdict(set)
        for url, t in post:
            truths[canon(url)].add(t)
        return any(len(ts) > 1 for ts in truths.values())

    at_drift = {}  # rules of the site as subscribers hold them when the drift happens
    for _, r in changes:
        if r.updated < t_drift and hosts & set(r.hosts):
            at_drift[r.id] = r
    slug_rules = []
    for r in at_drift.values():
        rule, its_hosts = CompiledRule(r), set(r.hosts)
        if r.status == "active" and merges_distinct_pages(
            lambda u, rule=rule, its_hosts=its_hosts: (rule.apply(u) if _host(u) in its_hosts else None) or u
        ):
            slug_rules.append(r.id)
    assert slug_rules, "no rule dropping the slug was active when the drift came"
    for rid in slug_rules:
        since_drift, last = [(n, r) for n, r in changes if r.id == rid][-1]
        assert last.status == "retired" and last.updated >= t_drift and last.fpr > 0, last
        assert since_drift <= 300, (rid, since_drift)  # a few hundred events of the site at most
    assert not merges_distinct_pages(learner.ruleset().canonicalize)
