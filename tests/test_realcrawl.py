"""Whole-crawl scoring by digest (evaluation/realcrawl.py): hand-counted figures, each of
which moves on its own."""

import json

import pytest

from dustonline.evaluation import realcrawl as rc
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
