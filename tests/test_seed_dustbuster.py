"""DustBuster (Bar-Yossef, Keidar, Schonfeld) on the paper's examples: §5.1 likely rules,
§5.2 refinement, §4.2 overflowing buckets, §5.4 validation, §5.3 parameters, access logs."""

import datetime

from dustonline.config import Config
from dustonline.events.event import FetchEvent
from dustonline.events.readers import Rejected, detect_format, read_events
from dustonline.rules.ruleset import RuleSet
from dustonline.seeds import dustbuster as db

T0 = 1_700_000_000.0


def _utc(*a):
    return datetime.datetime(*a, tzinfo=datetime.timezone.utc).timestamp()


def _events(rows):
    """rows: (url, digest or None, size or None)."""
    return [FetchEvent(u, T0 + i, 200, d, None, None, s) for i, (u, d, s) in enumerate(rows)]


def _recs(rows, site):
    return list(db.url_list(_events(rows))[site].values())


def _pair(x):
    return db.show(x.alpha), db.show(x.beta)


def _forum(n=12, digests=False):
    """Figure 11's forum: story number ``num`` as story?id=num and as story_num."""
    rows = []
    for k in range(100, 100 + n):
        d = f"sha1:STORY{k}" if digests else None
        rows += [
            (f"http://forum.co.il/story?id={k}", d, 3000 + 37 * k),
            (f"http://forum.co.il/story_{k}", d, 3000 + 37 * k),
        ]
    return rows


def test_tokens_have_the_paper_markers():
    assert db.show(db.tokenize("http://www.site.com/index.html")) == "^http://www.site.com/index.html$"
    assert len(db.tokenize("http://www.site.com/index.html")) == 15  # §3's example: 15 tokens


def test_a_forum_story_rule_found_and_refinement_keeps_more_context():
    p = db.Params(validate=False)
    likely = db.detect_likely(_recs(_forum(), "forum.co.il"), p)
    pairs = {_pair(x): x.support for x in likely}
    assert pairs[("story?id=", "story_")] == 12  # §1's rule, support 12
    assert pairs[("?id=", "_")] == 12
    kept = db.eliminate_redundancies(likely, p)
    # §5.2: equal support, so the refinement with the full context is kept, the rest dropped
    assert [_pair(x) for x in kept] == [("^http://forum.co.il/story?id=", "^http://forum.co.il/story_")]
    assert db.refines_pair(kept[0], next(x for x in likely if _pair(x) == ("story?id=", "story_")))


def test_b_index_html_rule_from_a_url_list():
    rows = []
    for k in range(6):
        rows += [
            (f"http://www.site.com/d{k}/index.html", f"sha1:I{k}", None),
            (f"http://www.site.com/d{k}", f"sha1:I{k}", None),
        ]
    likely = db.detect_likely(_recs(rows, "site.com"), db.Params())
    assert ("/index.html$", "$") in {_pair(x) for x in likely}


def test_c_overflowing_buckets_are_ignored():
    # lect1.ps .. lect12.ps in three directories: ("lect2", "lect1") ("lect2" is one token,
    # §3) has 3 envelopes, each in a bucket of 12 substrings > T_high = 11 (§4.2): no support
    rows = [(f"http://s.ac.il/c{d}/lect{k}.ps", None, 1000) for d in range(3) for k in range(1, 13)]
    recs = _recs(rows, "s.ac.il")
    assert ("lect2", "lect1") not in {_pair(x) for x in db.detect_likely(recs, db.Params())}
    wide = db.detect_likely(recs, db.Params(T_low=20, T_high=20))
    assert {_pair(x): x.support for x in wide}[("lect2", "lect1")] == 3


def test_d_validation_refutes_thumbnails_to_images():
    rows = []
    for k in range(10):  # same names and sizes, different content (§4.3's academic site)
        rows += [
            (f"http://www.ee.ac.il/thumbnails/p{k}.jpg", f"sha1:T{k}", 5000),
            (f"http://www.ee.ac.il/images/p{k}.jpg", f"sha1:I{k}", 5000),
        ]
    recs = _recs(rows, "ee.ac.il")
    index = {r.url: r for r in recs}
    p = db.Params()
    thumbs = db.DRule("sub", db._key(("thumbnails",)), db._key(("images",)))
    valid, pos, neg = db.validate_rule(thumbs, recs, index, p)
    assert not valid and neg >= 1 and pos == 0
    # with sizes only (an access log) it is a likely rule (§4.3 cannot tell); digests refute it
    sizes_only = _recs([(u, None, sz) for u, _, sz in rows], "ee.ac.il")
    assert any(_pair(x)[0].endswith("thumbnails") for x in db.detect_likely(sizes_only, p))
    assert db.fit(_events(rows), Config().check()) == []
    same = [(u, d.replace("T", "I"), s) for u, d, s in rows]
    assert db.validate_rule(thumbs, _recs(same, "ee.ac.il"), {r.url: r for r in _recs(same, "ee.ac.il")}, p)[0]


def test_e_session_parameter_found_and_removed():
    rows = []
    for k in range(8):
        for sid in ("a1b2", "c3d4", "e5f6"):
            rows.append((f"http://shop.com/item?id={k}&sid={sid}", f"sha1:ITEM{k}", 900 + k))
        rows.append((f"http://shop.com/item?id={k}", f"sha1:ITEM{k}", 900 + k))
    recs = _recs(rows, "shop.com")
    params = db.parameter_rules(recs, db.Params())
    assert {(d.kind, d.name) for d in params} == {("param-omit", "sid"), ("param-value", "sid")}  # not "id"
    rules = db.fit(_events(rows), Config().check())
    rs = RuleSet(rules)
    assert rs.canonicalize("http://shop.com/item?id=3&sid=zz99") == "http://shop.com/item?id=3"
    assert rs.canonicalize("http://shop.com/item?sid=zz99&id=3") == "http://shop.com/item?id=3"
    assert rs.canonicalize("http://shop.com/item?id=4") == "http://shop.com/item?id=4"


def _log_lines():
    lines = []
    for k in range(100, 112):
        for path in (f"/story?id={k}", f"/story_{k}"):
            lines.append(
                f"forum.co.il:80 10.0.0.{k % 7} - - [10/Oct/2006:13:{k % 60:02d}:36 +0200] "
                f'"GET {path} HTTP/1.1" 200 {3000 + 37 * k} "-" "Mozilla/4.0"'
            )
    return lines


def test_f_access_log_reader_and_learning_without_content(tmp_path):
    log = tmp_path / "access.log"
    bad = [
        '10.0.0.9 - - [10/Oct/2006:13:00:00 +0000] "GET /story_1 HTTP/1.1" 200 10',  # no vhost
        "not a log line",
        '10.0.0.9 - - [10/Oct/2006:13:00:00 +0000] "GET http://forum.co.il/story_1 HTTP/1.1" 404 -',
    ]
    log.write_text("\n".join(_log_lines() + bad) + "\n")
    assert detect_format([line.encode() for line in _log_lines()[:5]]) == "accesslog"
    out = list(read_events(log))
    events = [e for e in out if isinstance(e, FetchEvent)]
    rejected = [e for e in out if isinstance(e, Rejected)]
    assert [r.reason for r in rejected] == ["no-host", "bad-record"]
    assert events[0].url == "http://forum.co.il/story?id=100" and events[0].length == 3000 + 3700
    assert events[0].digest is None and events[0].ts == _utc(2006, 10, 10, 13, 40, 36) - 7200
    assert events[-1].status == 404 and events[-1].length is None
    # "DustBuster finds substitution rules from a log without content": likely rules only
    rules = db.from_access_log([log])
    rs = RuleSet(rules)
    assert rs.canonicalize("http://forum.co.il/story?id=4242") == "http://forum.co.il/story_4242"
    # the same log cannot be validated (§5.4 needs content): no rules with validate=True
    assert db.fit(events, Config().check()) == []


def test_g_translated_rules_give_one_key_per_page():
    rows = _forum(8, digests=True)
    for k in range(6):
        for host in ("forum.co.il", "www.forum.co.il"):
            rows += [
                (f"http://{host}/d{k}/index.html", f"sha1:I{k}", None),
                (f"http://{host}/d{k}/", f"sha1:I{k}", None),
            ]
        rows += [(f"http://{h}/story?id={200 + k}", f"sha1:S{k}", None) for h in ("forum.co.il", "www.forum.co.il")]
    events = _events(rows)
    rules = db.fit(events, Config().check())
    assert rules == db.fit(events, Config().check())  # deterministic, ids too
    rs = RuleSet(rules)
    for k in range(100, 108):
        assert rs.canonicalize(f"http://forum.co.il/story?id={k}") == rs.canonicalize(f"http://forum.co.il/story_{k}")
    for k in range(6):
        assert (
            len(
                {
                    rs.canonicalize(f"http://{h}/d{k}/{f}")
                    for h in ("forum.co.il", "www.forum.co.il")
                    for f in ("", "index.html")
                }
            )
            == 1
        )
    # Fig. 6 chains "www" then "story?id=" on www.../story?id=200: one composed contract rule
    assert rs.canonicalize("http://www.forum.co.il/story?id=999") == "http://forum.co.il/story_999"
    res = db.learn(events)
    assert len(res[0].rules) > len(res[0].valid)
    recs = db.url_list(events)["forum.co.il"]
    assert db.translation_gap(res[0].valid, res[0].rules, list(recs))["different"] == 0


def test_canonize_applies_rules_until_nothing_changes():
    www = db.DRule("sub", db._key(db.tokenize("http://www.")[:-1]), db._key(db.tokenize("http://")[:-1]))
    idx = db.DRule("sub", db._key(("/", "index", ".", "html", db.END)), db._key(("/", db.END)))
    assert db.canonize("http://www.a.com/x/index.html", [www, idx]) == "http://a.com/x/"
    # "/" + "/"... a rule applicable several times is applied at the first place, MA times
    dbl = db.DRule("sub", db._key(("/", "/", "x")), db._key(("/", "x")))
    assert db.canonize("http://a.com//x//x//x", [dbl], MA=10) == "http://a.com/x/x/x"
