"""Redirects as evidence: a 3xx and its target are a duplicate pair, the commonest DUST a
crawler sees (http -> https, www -> bare host, a trailing slash), learned without a
content comparison. The readers' side is in test_readers.py."""

from __future__ import annotations

import hashlib
import io

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from dustonline import FetchEvent, OnlineLearner, rocks_store
from dustonline.config import config_from_dict
from dustonline.events.readers import read_events
from dustonline.learner.clusters import PER_TARGET, PendingRedirects, url_key
from dustonline.rules.urls import host_of
from dustonline.state.store import memory_store

CFG = {"learning": {"min_freq": 5, "min_supp": 5}}
DAY = 86400.0
T0 = 1.7e9


def digest(s: str) -> str:
    return "sha1:" + hashlib.sha1(s.encode()).hexdigest().upper()


def learner(cfg=CFG, store=None) -> OnlineLearner:
    return OnlineLearner(config_from_dict(cfg), store)


def cluster_of(lrn: OnlineLearner, url: str) -> str | None:
    rec = lrn.window.urls.get(url_key(host_of(url), url))
    return None if rec is None else rec.cluster


def https_site(pages=60, host="s.com", target_first=False, redirect=True):
    """Every http URL of the site answers 301 to its https twin and never 2xx; the https
    URL serves the page. ``target_first``: the target is fetched before the 3xx."""
    evs, t = [], T0
    for i in range(pages):
        src, dst = f"http://{host}/news/{i}", f"https://{host}/news/{i}"
        three = FetchEvent(url=src, ts=t, status=301, redirect=dst if redirect else None)
        page = FetchEvent(url=dst, ts=t + 30, digest=digest(f"{host}{i}"))
        evs += [page, three] if target_first else [three, page]
        t += 60
    return evs


def test_http_urls_that_only_redirect_learn_the_scheme_rule():
    lrn = learner()
    lrn.learn_many(https_site())
    lrn.flush()
    for i in (0, 17, 59):
        assert cluster_of(lrn, f"http://s.com/news/{i}") == cluster_of(lrn, f"https://s.com/news/{i}") is not None
    s = lrn.summary()
    assert s["urls"] == 120 and s["clusters"] == 60 and s["ignored"] == 60  # a 3xx still teaches no content
    keys = lrn.ruleset().canonicalize
    assert keys("http://s.com/news/1234") == keys("https://s.com/news/1234")  # an unseen page
    assert keys("http://s.com/news/1234") != keys("http://s.com/news/1235")
    assert not lrn.redirects  # nothing left pending


def test_without_the_redirect_nothing_is_learned():
    """The control: the same stream, the 3xx without its Location, teaches nothing."""
    lrn = learner()
    lrn.learn_many(https_site(redirect=False))
    lrn.flush()
    assert cluster_of(lrn, "http://s.com/news/3") is None
    assert lrn.summary()["urls"] == 60 and lrn.rules() == []


def test_pending_pair_resolves_when_the_target_comes_later():
    """The 3xx first (the usual order) or its target first: the same clusters, and the
    same rules."""
    later, first = learner(), learner()
    evs = https_site(pages=10)
    later.learn_one(evs[0])  # the 301 of page 0: its target is not known yet
    assert later.redirects.count == 1 and cluster_of(later, "http://s.com/news/0") is None
    later.learn_many(evs[1:])
    first.learn_many(https_site(pages=10, target_first=True))
    assert later.redirects.count == first.redirects.count == 0
    for i in range(10):
        u, v = f"http://s.com/news/{i}", f"https://s.com/news/{i}"
        assert cluster_of(later, u) == cluster_of(later, v) == cluster_of(first, u) == cluster_of(first, v)
    assert later.summary()["urls"] == first.summary()["urls"] == 20


def test_crawllog_pairs_join_through_redirected_from():
    """Heritrix: the 3xx line has no Location; the target's line names it (via)."""
    lrn = learner()
    lrn.learn_one(FetchEvent(url="http://www.s.com/taster", ts=T0, status=301))
    lrn.learn_one(
        FetchEvent(
            url="http://www.s.com/taster/", ts=T0 + 1, digest=digest("t"), redirected_from="http://www.s.com/taster"
        )
    )
    assert (
        cluster_of(lrn, "http://www.s.com/taster") == cluster_of(lrn, "http://www.s.com/taster/") == "d:" + digest("t")
    )


def test_a_chain_joins_whole():
    """a -> b -> c, each 3xx before its target: a waits for b, b for c; c's fetch brings both."""
    lrn = learner()
    a, b, c = "http://s.com/a", "https://s.com/a", "https://www.s.com/a"
    lrn.learn_one(FetchEvent(url=a, ts=T0, status=301, redirect=b))
    lrn.learn_one(FetchEvent(url=b, ts=T0 + 1, status=302, redirect=c, redirected_from=a))
    assert lrn.redirects.count == 2  # a -> b (twice reported: kept once) and b -> c
    lrn.learn_one(FetchEvent(url=c, ts=T0 + 2, digest=digest("a"), redirected_from=b))
    assert cluster_of(lrn, a) == cluster_of(lrn, b) == cluster_of(lrn, c) is not None
    assert lrn.summary()["urls"] == 3 and lrn.clusters.get(cluster_of(lrn, c)).n == 3
    assert not lrn.redirects


def test_cross_site_redirects_teach_nothing():
    lrn = learner()
    evs = [
        FetchEvent(url="http://s.com/account", ts=T0, status=302, redirect="https://login.other.com/?next=s"),
        FetchEvent(url="http://s.com/ad", ts=T0 + 1, status=302, redirect="http://ads.example/click"),
        FetchEvent(url="https://login.other.com/?next=s", ts=T0 + 2, digest=digest("login")),
        FetchEvent(url="http://ads.example/click", ts=T0 + 3, digest=digest("ad"), redirected_from="http://s.com/ad"),
        # the same site across hosts is one site
        FetchEvent(url="http://s.com/x", ts=T0 + 4, status=301, redirect="http://www.s.com/x"),
        FetchEvent(url="http://www.s.com/x", ts=T0 + 5, digest=digest("x")),
    ]
    lrn.learn_many(evs)
    assert cluster_of(lrn, "http://s.com/account") is None and cluster_of(lrn, "http://s.com/ad") is None
    assert lrn.redirects.count == 0 and lrn.summary()["urls"] == 4
    assert cluster_of(lrn, "http://s.com/x") == cluster_of(lrn, "http://www.s.com/x") is not None


def test_a_url_with_content_of_its_own_keeps_its_cluster():
    """A 200 that names a redirect target (a meta refresh logged as an R hop, say) is not
    moved: its own content placed it."""
    lrn = learner()
    lrn.learn_one(FetchEvent(url="http://s.com/live", ts=T0, digest=digest("js")))
    lrn.learn_one(
        FetchEvent(
            url="http://s.com/live?nonjs", ts=T0 + 1, digest=digest("nonjs"), redirected_from="http://s.com/live"
        )
    )
    assert cluster_of(lrn, "http://s.com/live") == "d:" + digest("js")
    assert lrn.summary()["urls"] == 2


def test_pending_pairs_leave_with_the_window():
    cfg = {**CFG, "window": {"seconds": 2 * DAY, "sweep_every": DAY / 4}}
    lrn = learner(cfg)
    lrn.learn_one(FetchEvent(url="http://s.com/old", ts=T0, status=301, redirect="https://s.com/old"))
    lrn.learn_one(FetchEvent(url="http://s.com/gone", ts=T0, status=301, redirect="https://s.com/gone"))
    assert lrn.redirects.count == 2
    lrn.learn_one(FetchEvent(url="http://z.net/", ts=T0 + 3 * DAY, digest=digest("z")))  # a sweep
    assert lrn.redirects.count == 0
    lrn.learn_one(FetchEvent(url="https://s.com/old", ts=T0 + 3 * DAY + 1, digest=digest("old")))
    assert cluster_of(lrn, "http://s.com/old") is None
    # out of the window but not swept yet: not joined either
    lrn = learner({**CFG, "window": {"seconds": 2 * DAY, "sweep_every": 10 * DAY}})
    lrn.learn_one(FetchEvent(url="http://s.com/old", ts=T0, status=301, redirect="https://s.com/old"))
    lrn.learn_one(FetchEvent(url="https://s.com/old", ts=T0 + 3 * DAY, digest=digest("old")))
    assert cluster_of(lrn, "https://s.com/old") is not None and cluster_of(lrn, "http://s.com/old") is None


def test_a_redirect_source_is_evicted_like_any_url():
    cfg = {**CFG, "window": {"seconds": 2 * DAY, "sweep_every": DAY / 4}}
    lrn = learner(cfg)
    lrn.learn_many(https_site(pages=5))
    cid = cluster_of(lrn, "http://s.com/news/0")
    assert lrn.clusters.get(cid).n == 2
    lrn.learn_one(FetchEvent(url="http://z.net/", ts=T0 + 3 * DAY, digest=digest("z")))
    assert cluster_of(lrn, "http://s.com/news/0") is None and lrn.clusters.get(cid) is None
    assert lrn.summary()["evicted_urls"] == 10


def test_pending_table_is_bounded():
    p = PendingRedirects(memory_store(), max_pairs=10)
    for i in range(100):
        p.add(f"http://s.com/{i}", f"https://s.com/{i}", T0 + i)
        assert p.count <= 10
    assert p.count == sum(len(v) for _, v in p.table.items())
    assert p.targets == set(p.table.keys())
    assert p.take("https://s.com/99", 0) == ["http://s.com/99"]  # the newest stay
    assert p.take("https://s.com/0", 0) == []
    for i in range(20):  # at most PER_TARGET sources wait for one target
        p.add(f"http://s.com/a{i}", "https://s.com/a", T0 + 200)
    assert len(p.take("https://s.com/a", 0)) == PER_TARGET


def test_checkpoint_and_restart_with_pairs_pending(tmp_path):
    """Stopped between 3xx and target (so pairs are pending across the restart), a new
    learner on the same store ends where an uninterrupted run does."""
    evs = https_site(pages=60)
    # a few pairs still wait at the cut: targets come 3 pages late
    evs = [e for e in evs if e.status == 301 or int(e.url.rsplit("/", 1)[1]) % 10]
    evs += [
        FetchEvent(url=f"https://s.com/news/{i}", ts=T0 + 4000 + i, digest=digest(f"s.com{i}"))
        for i in range(0, 60, 10)
    ]
    whole = learner()
    whole.learn_many(evs)
    cut = 70
    path = tmp_path / "state"
    first = learner(store=rocks_store(path, cache_entries=64))
    got = []
    for ev in evs[:cut]:
        got += first.learn_one(ev)
    assert first.redirects.count > 0
    first.checkpoint()
    first.store.close()
    second = learner(store=rocks_store(path, cache_entries=64))
    assert second.redirects.count > 0
    second.learn_many(evs[cut:])
    assert second.redirects.count == whole.redirects.count == 0
    assert [(r.id, r.version, r.support, r.fpr, r.freq) for r in second.rules()] == [
        (r.id, r.version, r.support, r.fpr, r.freq) for r in whole.rules()
    ]
    assert whole.rules()
    assert second.summary() == whole.summary()
    for i in range(60):
        u = f"http://s.com/news/{i}"
        assert cluster_of(second, u) == cluster_of(whole, u) == cluster_of(whole, u.replace("http:", "https:"))
    second.store.close()


def _learn_file(path) -> OnlineLearner:
    lrn = learner()
    lrn.learn_many(e for e in read_events(path) if isinstance(e, FetchEvent))
    lrn.flush()
    return lrn


def test_a_warc_of_https_redirects_learns_the_scheme_rule(tmp_path):
    """From the file on: WARC 301s with a Location, then their targets' responses."""
    p = tmp_path / "r.warc.gz"
    with open(p, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for i in range(40):
            date = {"WARC-Date": f"2025-11-21T10:{i:02d}:00Z"}
            http = StatusAndHeaders("301 Moved Permanently", [("Location", f"https://s.com/a/{i}")], "HTTP/1.1")
            w.write_record(
                w.create_warc_record(
                    f"http://s.com/a/{i}",
                    "response",
                    payload=io.BytesIO(b""),
                    http_headers=http,
                    warc_headers_dict=date,
                )
            )
            body = f"<html><body>page {i} of s.com</body></html>".encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], "HTTP/1.1")
            w.write_record(
                w.create_warc_record(
                    f"https://s.com/a/{i}",
                    "response",
                    payload=io.BytesIO(body),
                    http_headers=http,
                    warc_headers_dict=date,
                )
            )
    keys = _learn_file(p).ruleset().canonicalize
    assert keys("http://s.com/a/777") == keys("https://s.com/a/777") != keys("https://s.com/a/778")


def test_a_crawllog_of_slash_redirects_learns_the_slash_rule(tmp_path):
    """Heritrix order: the 301 line (no Location), then its target's line, hop R, via the 301."""
    lines = []
    for i in range(40):
        ts = f"2016-03-31T14:{i:02d}:00.000Z"
        src, dst = f"http://www.s.com/topic{i}", f"http://www.s.com/topic{i}/"
        lines.append(f"{ts} 301 0 {src} IL http://www.s.com/ text/html #1 20160331143708091+58 - - -")
        lines.append(f"{ts} 200 99 {dst} ILR {src} text/html #1 20160331143708191+58 sha1:{i:032d} - -")
    p = tmp_path / "crawl.log"
    p.write_text("\n".join(lines) + "\n")
    keys = _learn_file(p).ruleset().canonicalize
    assert keys("http://www.s.com/topic777") == keys("http://www.s.com/topic777/") != keys("http://www.s.com/topic7/")
