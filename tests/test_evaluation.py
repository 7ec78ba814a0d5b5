"""dustonline eval: the prequential replay, the side-by-side table, the report."""

import json

import msgspec
import pytest

from dustonline.cli import main
from dustonline.config import Config
from dustonline.evaluation import prequential as evaluation
from dustonline.evaluation.generator import GenConfig, write_stream
from dustonline.evaluation.methods import METHODS, resolve
from dustonline.evaluation.metrics import evaluate
from dustonline.events.event import FetchEvent
from dustonline.learner.protocol import LearnerBase
from dustonline.rules.book import RuleBook
from dustonline.rules.ruleset import RETIRED, Rule, rule_order

H = "http://shop.example.com"
DROP_SID = Rule(
    id="r-sid",
    hosts=["shop.example.com"],
    context=r"^(http://shop\.example\.com/p/\d+)\?sid=\w+$",
    transformation="$1",
    support=10,
)


class Scripted(LearnerBase):
    """A learner that publishes given rule changes after given event indexes (0-based)."""

    def __init__(self, script):
        self.script, self.n = script, 0
        self.book = RuleBook()

    def learn_one(self, ev):
        out = self.script.get(self.n, [])
        self.n += 1
        for r in out:
            self.book.update(r)
        return out

    def rules(self):
        return sorted(self.book.rules(), key=rule_order)


def _stream(n_pages=6):
    """Page i fetched as /p/i at t=10i, then as /p/i?sid=si at t=10i+5."""
    events, truth = [], {}
    for i in range(n_pages):
        for j, url in enumerate((f"{H}/p/{i}", f"{H}/p/{i}?sid=s{i}")):
            events.append(FetchEvent(url=url, ts=10.0 * i + 5 * j, digest=f"d{i}"))
            truth[url] = f"page{i}"
    return evaluation.Stream(events, truth)


def test_rules_key_only_urls_fetched_after_they_are_published():
    stream = _stream()
    # the rule arrives with event 5 (the 2nd fetch of page 2): URLs up to there are not merged
    rp = evaluation.prequential(stream, Scripted({5: [DROP_SID]}), split_i=8)
    keyed = {r.url: (r.rule, r.outcome) for r in rp.records}
    assert keyed[f"{H}/p/2?sid=s2"] == (None, None)  # its own fetch taught the rule: keyed before it
    assert keyed[f"{H}/p/3?sid=s3"] == ("r-sid", True)
    assert [r.outcome for r in rp.records].count(True) == 3  # pages 3, 4, 5
    assert len(rp.frozen) == 1 and rp.timeline[0]["i"] == 5


def test_time_to_rule_counts_from_the_first_duplicate_pair_the_rule_explains():
    stream = _stream()
    firsts = {}
    rp = evaluation.prequential(stream, evaluation._Recording(Scripted({7: [DROP_SID]}), firsts), split_i=8)
    ttr = evaluation.time_to_rule(rp.records, rp.timeline, firsts)
    # evidence: /p/0?sid=s0 (event 1, t=5) joins /p/0; the rule is published at event 7 (t=35)
    assert ttr["per_rule"] == [
        {
            "rule": "r-sid",
            "evidence_ts": 5.0,
            "evidence_url": f"{H}/p/0?sid=s0",
            "active_ts": 35.0,
            "seconds": 30.0,
            "events": 6,
        }
    ]
    assert ttr["median_seconds"] == 30.0


def test_a_rule_that_stops_holding_is_charged_for_its_wrong_merges_until_retired():
    # from page 3 on, the site puts the page in sid: /p/3?sid=a and /p/3?sid=b differ
    events = list(_stream(3).events)
    truth = dict(_stream(3).truth)
    for i, sid in enumerate(("a", "b", "c", "d")):
        url = f"{H}/p/3?sid={sid}"
        events.append(FetchEvent(url=url, ts=100.0 + i, digest=f"x{sid}"))
        truth[url] = f"new-{sid}"
    retired = Rule(
        id="r-sid",
        hosts=DROP_SID.hosts,
        context=DROP_SID.context,
        transformation=DROP_SID.transformation,
        status=RETIRED,
        version=2,
    )
    rp = evaluation.prequential(evaluation.Stream(events, truth), Scripted({1: [DROP_SID], 8: [retired]}), split_i=7)
    (ret,) = evaluation.retirements(rp)
    assert ret["rule"] == "r-sid" and ret["retired_i"] == 8
    # sid=a is the first URL of key /p/3 (fetched); sid=b and sid=c are skipped, wrongly: both
    # lost; the retirement comes with the fetch of sid=c, so sid=d is keyed without the rule
    assert ret["wrong_merges"] == 2 and ret["lost"] == 2
    assert [r.rule for r in rp.records if r.i > 8] == [None]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    d = tmp_path_factory.mktemp("gen")
    write_stream(GenConfig(seed=5, sites=25, pages=9000), d / "s.jsonl", d / "t.jsonl")
    return d


@pytest.fixture(scope="module")
def result(generated):
    cfg = Config().check()
    stream = evaluation.load_stream([str(generated / "s.jsonl")], cfg, generated / "t.jsonl")
    return stream, evaluation.run(stream, cfg, resolve("all"), tail=0.25, progress=False)


def test_every_method_is_in_one_table_with_the_tail_recomputable(result):
    stream, res = result
    rows = {r["name"]: r for r in res["methods"]}
    assert set(METHODS) <= set(rows) and "online (frozen at split)" in rows
    # the static rows equal metrics.evaluate over the tail URLs, computed here independently
    from surt import surt

    split = res["tail"]["split_index"]
    tail = {}
    seen = set()
    for i, ev in enumerate(stream.events):
        if 200 <= ev.status < 300 and ev.url not in seen:
            seen.add(ev.url)
            if i >= split:
                tail[ev.url] = stream.truth[ev.url]
    assert res["tail"]["urls"] == len(tail)
    assert rows["surt"]["tail"] == msgspec.to_builtins(evaluate(tail, surt))


def test_online_is_comparable_to_batch_and_beats_static(result):
    _, res = result
    rows = {r["name"]: r["tail"] for r in res["methods"]}
    assert rows["online"]["coverage"] >= 0.95 * rows["dustlin"]["coverage"]
    assert rows["online"]["lost"] <= rows["dustlin"]["lost"] + 1
    assert rows["online"]["coverage"] > max(rows[s]["coverage"] for s in ("w3lib", "surt", "url-normalize"))
    assert rows["none"]["coverage"] == 0.0
    assert res["time_to_rule"]["rules"] > 5 and res["top_rules"][0]["merged"] > 0
    curve = res["curve"]
    assert curve[-1]["rules"] > curve[0]["rules"] and curve[-1]["urls"] == res["input"]["urls"]


def test_cli_writes_report_and_json(generated, tmp_path, capsys):
    rc = main(
        [
            "eval",
            str(generated / "s.jsonl"),
            "--truth",
            str(generated / "t.jsonl"),
            "--learner",
            "online,surt",
            "--report",
            str(tmp_path / "rep"),
            "--quiet",
        ]
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "| online |" in out and "| surt |" in out and "| dustlin |" not in out
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert [r["name"] for r in data["methods"]] == ["online", "online (frozen at split)", "surt"]
    page = (tmp_path / "rep" / "index.html").read_text()
    assert page.count("data:image/png;base64,") >= 3 and "Top rules" in page


def test_cli_unknown_learner_is_a_clear_error(generated, capsys):
    assert main(["eval", str(generated / "s.jsonl"), "--learner", "online,nope"]) == 2
    assert "unknown learner nope" in capsys.readouterr().err


def test_report_renders_in_a_real_browser(result, tmp_path, chromium):
    import browser

    from dustonline.evaluation.report import write_report

    page = write_report(result[1], tmp_path / "rep")
    png = browser.screenshot(page, tmp_path / "shot.png", width=1280, height=2600)
    stats = browser.image_stats(png)
    assert (stats["width"], stats["height"]) == (1280, 2600)
    assert stats["distinct_colors"] > 200 and stats["nonwhite_share"] > 0.04, stats
    # the plots are there: the online learner's blue (#1f6feb) fills bars and lines
    import numpy as np
    from PIL import Image

    px = np.asarray(Image.open(png).convert("RGB")).astype(int)
    blue = int((np.abs(px - (0x1F, 0x6F, 0xEB)).max(axis=2) < 24).sum())
    assert blue > 3000, blue
    # and every method's own colour is on screen: its swatch in the table (10 x 10 pixels),
    # and a bar of the methods plot when it merged anything to speak of
    colors = json.loads((tmp_path / "rep" / "report.json").read_text())["colors"]
    seen = {n: browser.color_pixels(png, _rgb(c), tolerance=6) for n, c in colors.items()}
    assert min(seen.values()) > 60, seen
    big = [r["name"] for r in result[1]["methods"] if (r["tail"]["coverage"] or 0) >= 0.1]
    assert len(big) >= 8 and min(seen[n] for n in big) > 1000, seen


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


def test_every_method_has_its_own_colour_in_every_plot(result, tmp_path):
    """One colour per method, fixed (a reader learns it once, across plots and reports):
    in report.json, the headline table's swatches, the bars of the methods plot and the
    per-site plot. All methods of the fixture ran, the four seed learners among them."""
    from matplotlib.colors import to_hex

    from dustonline.evaluation import report

    _, res = result
    page = report.write_report(res, tmp_path / "rep")
    colors = json.loads((tmp_path / "rep" / "report.json").read_text())["colors"]
    names = [r["name"] for r in res["methods"]]
    assert sorted(colors) == sorted(names) and len(set(colors.values())) == len(names) >= 12
    assert set(METHODS) <= set(report.METHOD_COLORS)  # every method's colour is fixed, not drawn
    html = page.read_text()
    for name in names:
        assert f"<span class=sw style='background:{colors[name]}'></span>{name}" in html.replace("&#x27;", "'")
    # the rendered colours are far apart (RGB distance), so the eye tells them apart
    rgb = [_rgb(c) for c in colors.values()]
    assert min(sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5 for i, x in enumerate(rgb) for y in rgb[i + 1 :]) > 60

    fig = report.figure_methods(res)
    bars = fig.axes[0].patches
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [to_hex(b.get_facecolor()) for b in bars] == [colors[n] for n in labels] and len(bars) == len(labels)
    fig = report.figure_sites(res)
    shown = {
        t.get_text(): to_hex(h.get_facecolor()) for t, h in zip(fig.legends[0].texts, fig.legends[0].legend_handles)
    }
    assert len(shown) >= 6 and shown == {n: colors[n] for n in shown}
    for container in fig.axes[0].containers:  # every bar of a method, in its colour
        assert {to_hex(b.get_facecolor()) for b in container} == {colors[container.get_label()]}


def test_legends_cover_no_axes(result):
    """The legend of each plot sits outside every axes (its ticks, labels and title
    included): it hides no bar, line or axis. Checked on the drawn figures, by the window
    extents matplotlib computes."""
    from dustonline.evaluation import report

    _, res = result
    for make in (report.figure_over_time, report.figure_sites):
        fig = make(res)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends, make.__name__
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                assert not box.overlaps(ax.get_tightbbox(renderer)), (make.__name__, box, ax)
            # and inside the figure as saved (bbox_inches="tight" keeps what is drawn)
            assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1


def test_the_report_says_what_its_numbers_mean_and_sets_no_targets(result):
    """Definitions next to the numbers: every summary card has a line saying what its
    figure means, every column of the headline table one under its name; no internal
    targets (the '(bar: >= 2x)' of the cards, ok/no colouring)."""
    import re

    from dustonline.evaluation import report

    _, res = result
    html = report.render_html(res, {})
    cards = re.findall(r"<div class=card>(.*?)<div class=big>(.*?)</div><div class=def>(.*?)</div></div>", html)
    assert len(cards) == html.count("<div class=card>") == 5  # saved, lost, vs DustLin, vs static, time to a rule
    assert all(big.strip() and len(line.split()) >= 8 for _, big, line in cards), cards
    table = html[html.index("<table>") : html.index("</table>")]
    heads = re.findall(r"<th(?: class=l)?>([^<]*)(?:<div class=def>([^<]*)</div>)?</th>", table)
    assert [name for name, _ in heads] == report.HEADLINE_COLS
    assert all(len(line.split()) >= 2 for _, line in heads), heads
    assert "bar:" not in html and "&ge;" not in html and "class='big ok'" not in html and "big no" not in html


def test_same_stream_same_figures(generated, result):
    """Replays are reproducible: a second run gives the same figures but for the timings."""
    cfg = Config().check()
    stream = evaluation.load_stream([str(generated / "s.jsonl")], cfg, generated / "t.jsonl")
    again = evaluation.run(stream, cfg, resolve("all"), tail=0.25, progress=False)

    def strip(res):
        res = json.loads(json.dumps(res))
        for r in res["methods"]:
            r.pop("learn_seconds", None)
        return res

    assert strip(again) == strip(result[1])


@pytest.mark.parametrize("fit", ["dustlin", "koppula", "patterntree_learn"])
def test_a_batch_method_trained_through_the_protocol_holds_its_fit(fit):
    """What eval does with a batch method (learn_many over the prefix, then rules()) gives
    the rule set of one fit on the prefix, as calling fit directly did."""
    from importlib import import_module

    from dustonline.evaluation.generator import generate
    from dustonline.rules.ruleset import RuleSet
    from dustonline.seeds.refit import RefitLearner

    f = (
        import_module(f"dustonline.seeds.{fit}").fit
        if fit != "dustlin"
        else (lambda evs, cfg: import_module("dustonline.seeds.dustlin").learn(evs, cfg, "dustlin"))
    )
    events = [ev for ev, _ in generate(GenConfig(seed=7, sites=6, pages=1500))]
    cfg = Config().check()
    learner = RefitLearner(f, cfg)
    changes = learner.learn_many(events)
    want = RuleSet(f(list(events), cfg)).rules()
    assert want and learner.rules() == want and sorted(changes, key=lambda r: r.id) == sorted(want, key=lambda r: r.id)
    assert learner.flush() == [] and learner.summary()["fits"] == 1  # nothing new: no refit


def test_eval_judges_the_shards_learn_runs():
    """With ``learning.shards`` set, ``learn`` is that many shards pooled at rounds; the
    online method must judge that learner, not one OnlineLearner, or a shard count could
    never be weighed on the evaluation."""
    from importlib import resources

    from dustonline.config import config_from_dict
    from dustonline.learner.online import OnlineLearner
    from dustonline.runner import LearnRun

    sample = str(resources.files("dustonline") / "data" / "sample-stream.jsonl.gz")
    cfg = config_from_dict({"learning": {"shards": 4, "pool_every": 2000}})
    (online,) = resolve("online")
    learner = online.make(cfg)
    assert not isinstance(learner, OnlineLearner)
    stream = evaluation.load_stream([sample], cfg)
    replay = evaluation.prequential(stream, learner, split_i=len(stream.events))
    run = LearnRun([sample], cfg, state=None)
    run.run(progress=False)
    want = sorted((r.id, r.version, r.context) for r in run.learner.rules())
    run.close()
    got = sorted((r.id, r.version, r.context) for r in replay.final.rules())
    assert want and got == want
