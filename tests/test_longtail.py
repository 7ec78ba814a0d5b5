"""The long-tail workload (evaluation/longtail.py): generator.py's ground-truth contract,
determinism, a long tail of site sizes, composed aliases, case traps and redirects."""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import pytest

from dustonline.evaluation import longtail as lt
from dustonline.evaluation.generator import write_stream
from dustonline.evaluation.prequential import load_truth
from dustonline.events.event import EMPTY_DIGEST, check_url, event_from_dict

ROOT = Path(__file__).resolve().parent.parent
MIXED = lt.LongtailConfig(seed=11, sites=150, case_sensitive_share=0.2, redirect_share=0.4)


@pytest.fixture(scope="module")
def stream():
    return list(lt.generate_labeled(MIXED))


@pytest.fixture(scope="module")
def layout():
    return lt.site_layout(MIXED)


def _ok(e) -> bool:
    return 200 <= e.status < 300


def _host(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]


def _site_of(layout: list[dict]) -> dict[str, str]:
    return {h: s["site"] for s in layout for h in s["hosts"]}


# --------------------------------------------------------------------------- the contract


def test_events_are_in_time_order_and_valid(stream):
    last = 0.0
    for e, _, _ in stream:
        assert e.ts >= last
        last = e.ts
        check_url(e.url)
        if e.canonical:
            check_url(e.canonical)
    assert len(stream) > 20000


def test_url_to_truth_is_a_function(stream):
    truth_of = {}
    for e, t, _ in stream:
        assert truth_of.setdefault(e.url, t) == t, e.url


def test_digests_follow_truths(stream):
    """Every page body is exact: one digest (and simhash) per truth among 2xx events, and
    no digest shared by two truths; non-2xx bodies are never a page's."""
    digests, truths, sims = defaultdict(set), defaultdict(set), {}
    for e, t, _ in stream:
        if _ok(e):
            digests[t].add(e.digest)
            truths[e.digest].add(t)
            assert sims.setdefault(e.digest, e.simhash) == e.simhash
    assert all(len(d) == 1 for d in digests.values())
    assert all(len(t) == 1 for t in truths.values())
    page_digests = set(truths)
    bad = [e for e, _, _ in stream if not _ok(e) and e.digest in page_digests]
    assert not bad
    assert any(not _ok(e) and e.digest == EMPTY_DIGEST for e, _, _ in stream)
    assert any(not _ok(e) and e.digest not in (EMPTY_DIGEST, None) for e, _, _ in stream)


def test_first_event_of_a_page_is_its_main_url(stream):
    first = {}
    for e, t, label in stream:
        first.setdefault(t, (e, label))
    pages = [t for t, (_, label) in first.items() if label == "main"]
    assert len(pages) > 10000
    for t in pages:
        e, _ = first[t]
        assert _ok(e)
    # an alias URL always comes after its page's main URL; so do its redirects
    for t, (e, label) in first.items():
        assert label == "main" or label.startswith(("trap:", "error:404")), (t, e.url, label)
    mains = {t: e.url for e, t, label in stream if label == "main"}
    for e, t, label in stream:
        if label.startswith(("alias:", "redirect:")):
            assert t in mains and mains[t] != e.url


def test_labels_are_what_the_truth_file_says(stream):
    heads = Counter(label.split(":")[0] for _, _, label in stream)
    assert set(heads) == {"main", "alias", "trap", "redirect", "error"}
    for e, _, label in stream:
        head = label.split(":")[0]
        assert (head == "redirect") == (300 <= e.status < 400)
        assert (head == "error") == (not 200 <= e.status < 400)


# --------------------------------------------------------------------------- determinism


def _dump(cfg):
    return [(msgspec.json.encode(e.to_json()), t, k) for e, t, k in lt.generate_labeled(cfg)]


def test_same_settings_same_stream():
    cfg = lt.LongtailConfig(seed=3, sites=40)
    assert _dump(cfg) == _dump(lt.LongtailConfig(seed=3, sites=40))


def test_stream_is_pinned():
    """The held-out settings (configs/eval/heldout.yaml) name workloads by knobs, so the
    generator must not change under them: a change here makes new held-out workloads, and
    needs new held-out settings (see the file's header), not a new fingerprint alone."""
    h = hashlib.sha256()
    for e, t, k in lt.generate_labeled(lt.LongtailConfig(seed=3, sites=40)):
        h.update(repr((e.url, e.ts, e.status, e.digest, e.simhash, e.canonical, e.length, t, k)).encode())
    assert h.hexdigest() == "e004f049943afe731a7f7c11d526121c31bdc16b193d184a5f1cb417f514bb9e"


def test_other_seed_other_stream():
    assert _dump(lt.LongtailConfig(seed=3, sites=40)) != _dump(lt.LongtailConfig(seed=4, sites=40))


def test_a_site_does_not_change_when_sites_are_added():
    """Each site draws from its own generator: the first 30 sites of a 40-site workload
    are those of the 30-site one, event for event."""

    def by_site(cfg):
        site_of = _site_of(lt.site_layout(cfg))
        out = defaultdict(list)
        for e, t, k in lt.generate_labeled(cfg):
            out[site_of[_host(e.url)]].append((e, t, k))
        return out

    small, big = by_site(lt.LongtailConfig(seed=5, sites=30)), by_site(lt.LongtailConfig(seed=5, sites=40))
    assert len(big) == 40 and len(small) == 30
    for site, events in small.items():
        assert big[site] == events


def test_generate_is_generate_labeled_without_labels():
    cfg = lt.LongtailConfig(seed=2, sites=20)
    assert list(lt.generate(cfg)) == [(e, t) for e, t, _ in lt.generate_labeled(cfg)]


def test_time_slices_do_not_change_the_stream(monkeypatch):
    """The stream is cut in slices to keep sites' state in the caches; the cut is invisible."""
    cfg = lt.LongtailConfig(seed=8, sites=60)
    whole = _dump(cfg)
    monkeypatch.setattr(lt, "BATCH_EVENTS", 500)
    assert _dump(cfg) == whole


# --------------------------------------------------------------------------- the long tail


def test_site_sizes_are_long_tailed():
    """Default knobs: most sites small (median 60-150 events, a fifth or more with 20-60),
    a few large (thousands of events)."""
    cfg = lt.LongtailConfig(seed=21, sites=300)
    site_of = _site_of(lt.site_layout(cfg))
    per_site = Counter(site_of[_host(e.url)] for e, _, _ in lt.generate_labeled(cfg))
    sizes = sorted(per_site.values())
    assert len(sizes) == 300
    median = statistics.median(sizes)
    assert 60 <= median <= 150, median
    assert sum(20 <= n <= 60 for n in sizes) >= 0.2 * len(sizes)
    assert sizes[int(0.9 * len(sizes))] >= 3 * median
    assert sizes[-1] >= 1000
    assert sizes[0] < 20


def test_size_knobs():
    cfg = lt.LongtailConfig(seed=1, sites=200, median_pages=20, size_sigma=0.5, max_pages=40)
    pages = [s["pages"] for s in lt.site_layout(cfg)]
    assert max(pages) <= 40 and min(pages) >= lt.MIN_PAGES
    assert 15 <= statistics.median(pages) <= 25


# --------------------------------------------------------------------------- families and names


def test_every_family_and_trap_occurs(stream):
    fams = {f for _, _, k in stream if k.startswith("alias:") for f in k[6:].split("+")}
    assert fams == {f.name for f in lt.LT_FAMILIES}
    traps = {k[5:] for _, _, k in stream if k.startswith("trap:")}
    assert traps == {"pagination", "sort", "dir", "lang", "soft404", "shared_asset", "case_twin"}
    statuses = {e.status for e, _, k in stream if k.startswith("error:")}
    assert {404, 500, 503, 403, 410} <= statuses


def test_sites_have_their_own_mix_and_names(layout, stream):
    mixes = Counter(tuple(s["families"]) for s in layout)
    assert len(mixes) >= 40  # random subsets, not a few fixed ones
    assert len({s["platform"] for s in layout}) >= 10
    assert len({s["session"] for s in layout}) >= 8
    params = Counter(k for e, _, label in stream if label.startswith("alias:") for k in _params(e.url))
    sessions = {
        "PHPSESSID",
        "sid",
        "SID",
        "s",
        "sessionid",
        "sess_id",
        "osCsid",
        "zenid",
        "JSESSIONID",
        "ASP.NET_SessionId",
        "CFTOKEN",
    }
    assert len(sessions & set(params)) >= 6, sessions & set(params)
    trackers = {
        "utm_source",
        "gclid",
        "fbclid",
        "msclkid",
        "mc_cid",
        "_ga",
        "yclid",
        "igshid",
        "ref",
        "src",
        "_hsenc",
        "share",
        *lt.CAMPAIGN_PARAMS,
    }
    assert len(trackers & set(params)) >= 10, trackers & set(params)
    urls = [e.url for e, _, _ in stream]
    assert any(";jsessionid=" in u for u in urls)
    assert any(re.search(r"/\(S\([a-z0-5]{24}\)\)/", u) for u in urls)
    assert any(re.search(r"//(img|cdn-?|static|i)\d\.", u) for u in urls)
    assert any(u.endswith("?") for u in urls)
    index_file = {s["site"]: s["index_file"] for s in layout}
    site_of = _site_of(layout)
    n = 0
    for e, _, k in stream:
        if "index" in k.partition(":")[2].split("+"):
            n += 1
            assert e.url.split("?")[0].split(";")[0].endswith("/" + index_file[site_of[_host(e.url)]])
    assert n > 0
    assert len({s["index_file"] for s in layout}) >= 6


def _params(url: str) -> list[str]:
    q = url.partition("?")[2]
    return [kv.split("=", 1)[0] for kv in q.split("&")] if q else []


def test_aliases_compose(stream):
    """Several families on one URL, and several alias URLs per page, in per-site amounts."""
    widths = Counter(len(k[6:].split("+")) for _, _, k in stream if k.startswith("alias:"))
    assert widths[1] > widths[2] > widths[3] > 0
    assert widths[4] > 0
    aliases = defaultdict(set)
    for e, t, k in stream:
        if k.startswith(("alias:", "redirect:")):
            aliases[t].add(e.url)
    counts = Counter(min(len(u), 5) for u in aliases.values())
    assert counts[1] > counts[2] > counts[4] > 0 and counts[5] > 0


def test_no_url_repeats_a_parameter(stream):
    """Added parameters (sessions, tracking, defaults, traps) never reuse a name the URL has:
    the server would read only one of them, and the truth would be a guess."""
    for e, _, _ in stream:
        names = _params(e.url)
        assert len(names) == len(set(names)), e.url


def test_alias_urls_differ_from_the_main_url(stream):
    mains = {t: e.url for e, t, k in stream if k == "main"}
    for e, t, k in stream:
        if k.startswith("alias:"):
            assert e.url != mains[t]


def test_traps_change_content(stream):
    """Trap URLs next to a page (pagination, sort, directories, languages) are other pages;
    soft-404s and shared assets repeat one body under many URLs."""
    pages = {t for _, t, k in stream if k == "main"}
    own = defaultdict(set)
    for e, t, k in stream:
        if k in ("trap:pagination", "trap:sort", "trap:dir", "trap:lang", "trap:case_twin"):
            assert t not in pages or k == "trap:case_twin"
        if k in ("trap:soft404", "trap:shared_asset"):
            own[t].add(e.url)
    assert max(len(u) for u in own.values()) >= 5
    assert any(t.startswith("lib:") and len({_host(u) for u in urls}) > 3 for t, urls in own.items())


# --------------------------------------------------------------------------- case


def test_case_sensitive_ids_differ_only_by_case(stream, layout):
    """On case-sensitive sites, pages whose ids differ only in letter case are distinct: a
    canonicalizer that lowercases paths merges them."""
    sensitive = {s["site"] for s in layout if s["case"] == "sensitive"}
    assert len(sensitive) >= 10
    site_of = _site_of(layout)
    by_lower = defaultdict(set)
    twins = 0
    for e, t, k in stream:
        if k in ("main", "trap:case_twin") and _ok(e):
            by_lower[e.url.lower()].add(t)
        if k == "trap:case_twin":
            twins += 1
            assert site_of[_host(e.url)] in sensitive
    assert twins >= 50
    merged = [ts for ts in by_lower.values() if len(ts) > 1]
    assert len(merged) == twins  # each twin collides with exactly one other page, no other page does
    assert all(len(ts) == 2 for ts in merged)
    # and they never get the case family, which only case-insensitive servers have
    assert all("case" not in s["families"] for s in layout if s["case"] == "sensitive")


def test_case_insensitive_aliases_differ_only_by_case(stream):
    mains = {t: e.url for e, t, k in stream if k == "main"}
    seen = 0
    for e, t, k in stream:
        if k == "alias:case":
            seen += 1
            assert e.url.lower() == mains[t].lower() and e.url != mains[t]
    assert seen >= 20


# --------------------------------------------------------------------------- redirects


def _strip(url: str) -> str:
    """A URL without what a redirect of these sites changes: scheme, www, a trailing slash."""
    rest = url.split("://", 1)[1]
    rest = rest[4:] if rest.startswith("www.") else rest
    m = re.match(r"([^?;]*?)/?([?;].*)?$", rest)
    assert m
    return m.group(1) + (m.group(2) or "")


def test_redirects_are_followed_by_their_target(stream):
    seen = 0
    for i, (e, t, k) in enumerate(stream):
        if not 300 <= e.status < 400:
            continue
        seen += 1
        nxt, nt, nk = stream[i + 1]
        assert e.status in (301, 302, 307, 308) and k.startswith("redirect:")
        assert _ok(nxt) and nt == t and nxt.ts == e.ts and nxt.url != e.url
        assert _strip(nxt.url) == _strip(e.url), (e.url, nxt.url)
        assert nk == "main" or nk.startswith("alias:")
        if lt.HAS_REDIRECT_FIELD:
            assert e.redirect == nxt.url
    assert seen >= 500


def test_redirect_field_only_when_fetch_events_have_it(monkeypatch):
    """Written for FetchEvents with and without ``redirect``: without it, the same stream."""
    cfg = lt.LongtailConfig(seed=6, sites=30, redirect_share=0.8)
    with_field = list(lt.generate_labeled(cfg))
    monkeypatch.setattr(lt, "HAS_REDIRECT_FIELD", False)
    without = list(lt.generate_labeled(cfg))
    hops = [i for i, (e, _, _) in enumerate(without) if 300 <= e.status < 400]
    assert hops and all(getattr(without[i][0], "redirect", None) is None for i in hops)
    assert [(e.url, e.status, t, k) for e, t, k in without] == [(e.url, e.status, t, k) for e, t, k in with_field]


def test_redirect_targets_labeled_main_are_the_main_url(stream):
    mains = {t: e.url for e, t, k in stream if k == "main"}
    n = 0
    for i, (e, t, _) in enumerate(stream):
        if 300 <= e.status < 400 and stream[i + 1][2] == "main":
            n += 1
            assert stream[i + 1][0].url == mains[t]
    assert n > 100


def test_redirecting_families_only_redirect(stream, layout):
    """On a site that redirects http, a host or a missing slash, such URLs never answer 2xx."""
    site_of = _site_of(layout)
    redirects = {s["site"]: set(s["redirects"]) for s in layout}
    assert sum(bool(r) for r in redirects.values()) >= 30
    for e, _, k in stream:
        if k.startswith("alias:"):
            fams = set(k[6:].split("+"))
            assert not fams & redirects[site_of[_host(e.url)]], (e.url, k)


# --------------------------------------------------------------------------- files, settings, command


def test_write_stream_round_trip(tmp_path):
    cfg = lt.LongtailConfig(seed=4, sites=25)
    ev, tr = tmp_path / "ev.jsonl.gz", tmp_path / "tr.jsonl.gz"
    n = write_stream(cfg, ev, tr)
    with gzip.open(ev, "rb") as f:
        events = [event_from_dict(msgspec.json.decode(line)) for line in f]
    expected = list(lt.generate_labeled(cfg))
    assert n == len(events) == len(expected)
    assert events == [e for e, _, _ in expected]  # redirect targets and canonical hints too
    truth, kinds = load_truth(tr)
    assert all(truth[e.url] == t for e, t, _ in expected)
    assert "main" in kinds.values() and set(kinds.values()) <= {k for _, _, k in expected}


@pytest.mark.parametrize("name", ["heldout", "tuning"])
def test_settings_files_load(name):
    settings = lt.load_settings(ROOT / "configs" / "eval" / f"{name}.yaml")
    assert len(settings) >= 5
    for cfg in settings.values():
        assert isinstance(cfg, lt.LongtailConfig)


def test_heldout_and_tuning_share_no_seed():
    held = lt.load_settings(ROOT / "configs/eval/heldout.yaml")
    tune = lt.load_settings(ROOT / "configs/eval/tuning.yaml")
    assert not {c.seed for c in held.values()} & {c.seed for c in tune.values()}


def test_bad_settings_are_clear_errors(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("settings:\n  a: {seed: 1, dup_rat: 0.3}\n")
    with pytest.raises(ValueError, match="dup_rat"):
        lt.load_settings(p)
    p.write_text("settings:\n  a: {seed: 1, noise: 0.9}\n")
    with pytest.raises(ValueError, match="noise"):
        lt.load_settings(p)


def _args(**kw):
    base = {"setting": None, "layout": None, **dict.fromkeys(lt._CLI_KNOBS), **dict.fromkeys(lt.DEFAULT_ONLY)}
    base.update(kw)
    return argparse.Namespace(**base)


def test_generate_command(tmp_path, capsys):
    ev, tr, lay = tmp_path / "e.jsonl", tmp_path / "t.jsonl", tmp_path / "l.json"
    assert lt.generate_command(_args(seed=2, sites=12, dup_rate=0.5, layout=str(lay)), ev, tr) == 0
    n = len(ev.read_text().splitlines())
    assert (
        n
        == len(tr.read_text().splitlines())
        == len(list(lt.generate(lt.LongtailConfig(seed=2, sites=12, dup_rate=0.5))))
    )
    assert "12 long-tail sites" in capsys.readouterr().err
    assert len(msgspec.json.decode(lay.read_bytes())["sites"]) == 12


def test_generate_command_with_a_setting(tmp_path):
    file = tmp_path / "s.yaml"
    file.write_text("generator: longtail\nsettings:\n  small: {seed: 9, sites: 7}\n")
    cfg = lt.config_from_args(_args(setting=f"{file}:small", seed=0, sites=50))  # cli.py's defaults: ignored
    assert (cfg.seed, cfg.sites) == (9, 7)
    with pytest.raises(ValueError, match="--dup-rate"):
        lt.config_from_args(_args(setting=f"{file}:small", dup_rate=0.2))
    with pytest.raises(ValueError, match="no setting 'big'"):
        lt.config_from_args(_args(setting=f"{file}:big"))
    with pytest.raises(ValueError, match="--seed"):
        lt.config_from_args(_args(setting=f"{file}:small", seed=3), ignore=())


def test_generate_command_refuses_the_default_generators_options(tmp_path):
    with pytest.raises(ValueError, match="--families"):
        lt.generate_command(_args(families=("www",)), tmp_path / "e", tmp_path / "t")
    assert not (tmp_path / "e").exists()
    # what cli.py's default profile must refuse: options only this generator reads
    assert set(lt.LONGTAIL_ONLY) - {"setting"} <= set(lt._CLI_KNOBS)
    assert not {"seed", "sites", "dup_rate", "noise"} & set(lt.LONGTAIL_ONLY)


def test_module_main(tmp_path):
    ev, tr = tmp_path / "e.jsonl", tmp_path / "t.jsonl"
    assert lt.main([str(ev), str(tr), "--sites", "5", "--seed", "1"]) == 0
    assert ev.read_text().count("\n") == len(list(lt.generate(lt.LongtailConfig(seed=1, sites=5))))
