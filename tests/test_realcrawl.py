"""Whole-crawl scoring by digest (evaluation/realcrawl.py): hand-counted figures, each of
which moves on its own, and the figures of the static canonicalizers on a real crawl log."""

import json

import pytest

from dustonline.config import Config
from dustonline.evaluation import prequential as evaluation
from dustonline.evaluation import realcrawl as rc
from dustonline.evaluation.methods import resolve
from dustonline.evaluation.report import markdown_table, render_html
from dustonline.events.event import FetchEvent
from dustonline.rules.urls import light_normalize

# (url, digest) in fetch order; the comment is the duplicate's family, told from the URLs
PAIRS = [
    ("http://a.com/p?x=1", "A"),
    ("http://a.com/p?x=2", "A"),  # query
    ("https://a.com/p?x=1", "A"),  # scheme
    ("http://b.com/q", "B"),
    ("http://www.b.com/q", "B"),  # host
    ("http://b.com/r", "C"),
    ("http://b.com/R", "B"),  # path
    ("http://B.com:80/q#top", "B"),  # trivial
    ("http://c.com/z?k=1", "B"),  # several
]


def drop_query(url: str) -> str:
    return light_normalize(url).split("?")[0]


def drop_query_lower_path(url: str) -> str:
    return drop_query(url).lower()


def test_distinct_keeps_the_first_digest_of_each_url_and_skips_missing_digests():
    urls = rc.distinct([("u1", "A"), ("u2", None), ("u1", "B"), ("u2", ""), ("u3", "A"), ("u2", "C")])
    assert urls == {"u1": "A", "u3": "A", "u2": "C"}
    assert rc.ceiling(urls) == 1


def test_families_are_the_simplest_difference_to_an_earlier_url_of_the_same_content():
    fams = rc.families(rc.distinct(PAIRS))
    assert fams == {
        "http://a.com/p?x=2": "query",
        "https://a.com/p?x=1": "scheme",
        "http://www.b.com/q": "host",
        "http://b.com/R": "path",
        "http://B.com:80/q#top": "trivial",
        "http://c.com/z?k=1": "several",
    }
    assert len(fams) == rc.ceiling(rc.distinct(PAIRS)) == 6


@pytest.mark.parametrize(
    "canon, saved, merged, dups, by_family",
    [
        # light normalization alone merges only the trivial duplicate
        (light_normalize, 1, 0, 1, {"trivial": 1}),
        # dropping the query: /p?x=1 ~ /p?x=2 (A), /q ~ B.com:80/q (B), c.com/z alone
        (drop_query, 2, 0, 2, {"query": 1, "trivial": 1}),
        # and lowering the path: /R (B) joins /r (C), a distinct content, and saves a fetch too
        (drop_query_lower_path, 3, 1, 2, {"query": 1, "trivial": 1}),
        # one key for everything: 8 fetches saved, 2 of the 3 contents never fetched
        (lambda u: "k", 8, 2, 6, dict.fromkeys(("query", "scheme", "host", "path", "trivial", "several"), 1)),
        # a canonicalizer that raises keeps each URL as its own key: nothing saved, nothing merged
        (lambda u: 1 / 0, 0, 0, 0, {}),
    ],
    ids=["none", "drop-query", "drop-query-lower-path", "one-key", "raises"],
)
def test_score_by_hand(canon, saved, merged, dups, by_family):
    urls = rc.distinct(PAIRS)
    s = rc.score(urls, canon, rc.families(urls))
    assert (s["fetches_saved"], s["contents_merged"], s["duplicates_merged"]) == (saved, merged, dups)
    assert s["families"] == {f: by_family.get(f, 0) for f in rc.FAMILIES}
    assert s["fetches_saved"] == s["duplicates_merged"] + s["contents_merged"]


def test_a_rule_merging_two_distinct_digests_is_counted_with_its_urls():
    urls = {"http://s.com/a": "d1", "http://s.com/b": "d2", "http://s.com/c": "d1"}
    s = rc.score(urls, lambda u: "http://s.com/")
    assert (s["fetches_saved"], s["contents_merged"], s["duplicates_merged"]) == (2, 1, 1)
    assert s["merged_examples"] == [{"key": "http://s.com/", "urls": ["http://s.com/a", "http://s.com/b"]}]


@pytest.mark.parametrize(
    "extra, moves",
    [
        # a new content under an existing key: a fetch saved, and a content merged
        (("http://a.com/p?x=9", "Z"), {"fetches_saved": 1, "contents_merged": 1}),
        # a duplicate under its content's key: one more duplicate, merged (a fetch saved)
        (("http://a.com/p?x=9", "A"), {"fetches_saved": 1, "duplicates_merged": 1, "ceiling": 1}),
        # a duplicate under a key of its own: one more duplicate to find, none found
        (("http://d.com/p", "A"), {"ceiling": 1}),
        # a new content under a new key: nothing moves
        (("http://d.com/p", "Z"), {}),
    ],
    ids=["content-merged", "duplicate-merged", "duplicate-missed", "new-page"],
)
def test_each_figure_moves_on_its_own(extra, moves):
    """One URL more moves exactly the figures it should: no two figures move together in
    every case, so a figure computed as another one would fail here."""

    def figures(pairs):
        urls = rc.distinct(pairs)
        return {**rc.score(urls, drop_query), "ceiling": rc.ceiling(urls)}

    before, after = figures(PAIRS), figures(PAIRS + [extra])
    keys = ("fetches_saved", "contents_merged", "duplicates_merged", "ceiling")
    assert {k: after[k] - before[k] for k in keys} == {k: moves.get(k, 0) for k in keys}


def test_whole_crawl_lists_methods_in_order_with_the_ceiling_and_family_totals():
    c = rc.whole_crawl(PAIRS + [("http://a.com/p?x=1", "Z")], {"dq": drop_query, "none": light_normalize}, {"dq": 1})
    assert (c["urls"], c["contents"], c["ceiling"]) == (9, 3, 6)
    assert c["families"] == dict.fromkeys(rc.FAMILIES, 1)
    assert [m["name"] for m in c["methods"]] == ["dq", "none"] and c["methods"][0]["rules"] == 1
    assert "rules" not in c["methods"][1]
    md = rc.markdown(c)
    assert "| ceiling (duplicates by digest) | – | 6 | 0 | 6 |" in md
    assert "| dq | 1 | 2 | 0 | 2 | 1 | 0 | 0 | 1 | 0 | 0 |" in md


def _stream():
    """A small crawl: /p?s=N are one page, /x?s=N two distinct pages; one 404 and one URL
    fetched twice with a new digest (its first 2xx digest counts)."""
    evs = []
    for i in range(4):
        evs.append(FetchEvent(url=f"http://s.com/p?s={i}", ts=float(i), digest="P"))
    evs += [
        FetchEvent(url="http://s.com/x?s=1", ts=10.0, digest="X1"),
        FetchEvent(url="http://s.com/x?s=2", ts=11.0, digest="X2"),
        FetchEvent(url="http://s.com/gone", ts=12.0, status=404, digest="P"),
        FetchEvent(url="http://s.com/p?s=0", ts=13.0, digest="P2"),
    ]
    return evaluation.Stream(evs, None)


def test_eval_without_truth_scores_the_whole_crawl_and_shows_it(capsys):
    res = evaluation.run(_stream(), Config().check(), resolve("online,w3lib,none"), tail=0.25, progress=False)
    c = res["crawl"]
    assert (c["urls"], c["ceiling"]) == (6, 3)
    assert [m["name"] for m in c["methods"]] == ["online", "w3lib", "none"]
    assert "rules" in c["methods"][0]
    w3 = c["methods"][1]
    assert (w3["fetches_saved"], w3["contents_merged"]) == (0, 0)  # w3lib keeps the query
    md = markdown_table(res)
    assert "whole crawl, final rules: fetches saved / distinct contents merged" in md
    assert "| ceiling (duplicates by digest) | – | 3 | 0 | 3 |" in md
    assert "<h2>Whole crawl, final rules</h2>" in render_html(res, {})


def test_eval_with_a_truth_file_has_no_whole_crawl_section():
    s = _stream()
    s.truth = {ev.url: "t" for ev in s.events}
    res = evaluation.run(s, Config().check(), resolve("none"), tail=0.25, progress=False)
    assert "crawl" not in res and "whole crawl" not in markdown_table(res)


def test_summary_has_a_row_per_file_and_names_the_skipped(tmp_path, capsys):
    for name, saved in (("a.log", 5), ("b.cdx", 0)):
        d = tmp_path / name
        d.mkdir()
        crawl = {"urls": 10, "contents": 7, "ceiling": 3, "families": {}, "methods": [
            {"name": "online", "fetches_saved": saved, "contents_merged": 1},
            {"name": "surt", "fetches_saved": 2, "contents_merged": 0},
        ]}  # fmt: skip
        (d / "report.json").write_text(json.dumps({"crawl": crawl}))
    argv = [str(tmp_path / "a.log" / "report.json"), str(tmp_path / "b.cdx" / "report.json")]
    assert rc.main(argv + ["--skipped", "c.cdx: format not detected"]) == 0
    out = capsys.readouterr().out
    assert "| file | 2xx URLs | ceiling | online | surt |" in out
    assert "| a.log | 10 | 3 | 5 / 1 | 2 / 0 |" in out and "| b.cdx | 10 | 3 | 0 / 1 | 2 / 0 |" in out
    assert "Not evaluated: c.cdx: format not detected." in out


# --------------------------------------------------------------------------- real data
def test_static_canonicalizers_on_the_ukwa_bbc_crawl(real_data):
    """Properties of the log and of surt/w3lib, not of our learner: 8,886 distinct 2xx URLs
    with a digest, 849 duplicates by digest; surt saves 80 fetches and merges 4 distinct
    contents (robots.txt over http and https on two hosts; two paths with and without a
    trailing slash), w3lib merges nothing. The learner's figures are printed, not asserted:
    they change as it improves."""
    path = real_data / "ukwa-bbc-crawl.log"
    cfg = Config().check()
    stream = evaluation.load_stream([str(path)], cfg)
    res = evaluation.run(stream, cfg, resolve("online,surt,w3lib,none"), progress=False)
    c = res["crawl"]
    by = {m["name"]: m for m in c["methods"]}
    fig = {n: (m["fetches_saved"], m["contents_merged"]) for n, m in by.items()}
    print(f"\nukwa-bbc-crawl.log, whole crawl (saved, merged): {fig}; ceiling {c['ceiling']}")
    print(rc.markdown(c))
    assert (c["urls"], c["ceiling"]) == (8886, 849)
    assert fig["surt"] == (80, 4) and fig["w3lib"] == (0, 0) and fig["none"] == (0, 0)
    assert sum(c["families"].values()) == 849
    assert by["surt"]["families"]["scheme"] == c["families"]["scheme"]  # surt drops the scheme everywhere
    # the event-time order of the replay and the file order give the same figures here
    from surt import surt

    assert rc.whole_crawl(rc.read_pairs([path]), {"surt": surt})["methods"][0] == by["surt"]
