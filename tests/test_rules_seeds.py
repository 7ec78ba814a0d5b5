"""Rule generation and validation on the seeds' worked examples."""

import re

from streams import cluster_events as _events

from dustonline import Rule, RuleSet, learn
from dustonline.config import config_from_dict
from dustonline.learner.align import Consensus, align, linear_alignment
from dustonline.learner.induce import parts_of, render
from dustonline.learner.validation import refines, support_counts
from dustonline.seeds.dustlin import eliminate_redundant


def _apply(ctx, trans, url):
    return Rule(id="t", hosts=["x"], context=ctx, transformation=trans).compile().apply(url)


def test_irs_consensus_rule_matches_thesis_shape():
    _, cons = align(Consensus.of_url("www.IRS.gov/foia/index.html"), Consensus.of_url("www.irs.ustreas.gov/foia"))
    ctx, trans = render(parts_of(cons), card_set=5)
    # thesis §4.2.1.2: c = ^*.(irs|IRS).(ustreas.)?*/*(/index.html)?$   t = $1.irs.$2/$3
    assert ctx == r"^([^/?=&#;:.]+)\.(?:IRS|irs)(?:\.ustreas)?\.([^/?=&#;:.]+)\/([^/?=&#;:.]+?)(?:\/index\.html)?$"
    assert trans == "$1.irs.$2/$3"  # the thesis' t: written as the row with fewer optional tokens has it
    assert _apply(ctx, trans, "www.IRS.gov/foia/index.html") == _apply(ctx, trans, "www.irs.ustreas.gov/foia")


BRITNEY_C1 = [
    "http://britney.com.br/?id=5",
    "http://britney.com.br/index.php?id=5",
    "http://Britney.com.br/?id=5",
    "http://www.britney.com.br/?id=5",
]
BRITNEY_C2 = ["http://britney.com.br/?id=7", "http://Britney.com.br/index.php?id=7"]


def test_britney_table_2_2_one_rule_canonicalizes_both_clusters():
    cfg = config_from_dict({"learning": {"min_freq": 1, "min_supp": 1, "holdout": 0}})
    rules = learn(_events([BRITNEY_C1, BRITNEY_C2]), cfg)
    assert len(rules) == 1, [r.context for r in rules]  # C2's rule is refined by C1's (Alg. 6)
    rs = RuleSet(rules)
    keys1 = {rs.canonicalize(u) for u in BRITNEY_C1}
    keys2 = {rs.canonicalize(u) for u in BRITNEY_C2}
    assert len(keys1) == 1 and len(keys2) == 1 and keys1 != keys2
    assert rules[0].support == 7 and rules[0].fpr == 0.0  # S_r1 of §2.5.1 has 7 instances
    assert rules[0].hosts == ["britney.com.br", "www.britney.com.br"]


def test_britney_both_aligners_agree():
    cfg = config_from_dict({"learning": {"min_freq": 1, "min_supp": 1, "holdout": 0}})
    a = learn(_events([BRITNEY_C1, BRITNEY_C2]), cfg, aligner="dustlin")
    b = learn(_events([BRITNEY_C1, BRITNEY_C2]), cfg, aligner="duster")
    rs_a, rs_b = RuleSet(a), RuleSet(b)
    for u in BRITNEY_C1 + BRITNEY_C2:
        assert (rs_a.canonicalize(u) == rs_a.canonicalize(BRITNEY_C1[0])) == (
            rs_b.canonicalize(u) == rs_b.canonicalize(BRITNEY_C1[0])
        )


# Table 5.2: r1 (OGWDW|ogwdw) is refined by r2 (OGWDW|ogwdw|safewater): S_r1 ⊂ S_r2.
R1 = Rule(
    id="r-1",
    hosts=["epa.gov", "www.epa.gov"],
    context=r"^http://(?:www\.)?epa\.gov/(?:OGWDW|ogwdw)(?:000)?/([^/?=&#;:.]+)/([^/?=&#;:.]+)\.html$",
    transformation="http://epa.gov/ogwdw/$1/$2.html",
)
R2 = Rule(
    id="r-2",
    hosts=["epa.gov", "www.epa.gov"],
    context=r"^http://(?:www\.)?epa\.gov/(?:OGWDW|ogwdw|safewater)(?:000)?/([^/?=&#;:.]+)/([^/?=&#;:.]+)\.html$",
    transformation="http://epa.gov/ogwdw/$1/$2.html",
)
EPA = [
    ("http://www.epa.gov/OGWDW/dw/a.html", "A"),
    ("http://epa.gov/ogwdw/dw/a.html", "A"),
    ("http://epa.gov/safewater/dw/a.html", "A"),
    ("http://epa.gov/ogwdw000/dw/b.html", "B"),
    ("http://epa.gov/safewater/dw/b.html", "B"),
]


def test_table_5_2_refinement_eliminates_r1():
    from dustonline.rules.urls import host_of

    urls = [(u, host_of(u)) for u, _ in EPA]
    c1, c2 = R1.compile(), R2.compile()
    assert refines(c1, c2, urls) and not refines(c2, c1, urls)
    n1 = support_counts((c1.apply(u), cid) for u, cid in EPA if c1.apply(u))
    n2 = support_counts((c2.apply(u), cid) for u, cid in EPA if c2.apply(u))
    assert n1 == (1, 1) and n2 == (4, 4)
    by_host = {}
    for u, cid in EPA:
        by_host.setdefault(host_of(u), []).append((u, cid))
    kept = eliminate_redundant([(R1, c1), (R2, c2)], by_host)
    assert [r.id for r in kept] == ["r-2"]


def test_refines_is_false_when_r1_merges_what_r2_keeps_apart():
    a = Rule(
        id="a",
        hosts=["s.com"],
        context=r"^http://s\.com/p/([0-9]+)(?:\?x=[0-9]+)?$",
        transformation="http://s.com/p/$1",
    )
    b = Rule(
        id="b", hosts=["s.com"], context=r"^http://s\.com/p/([0-9]+)(?:\?x=1)?$", transformation="http://s.com/p/$1"
    )
    urls = [("http://s.com/p/1", "s.com"), ("http://s.com/p/1?x=2", "s.com")]
    assert not refines(a.compile(), b.compile(), urls)
    assert refines(b.compile(), a.compile(), urls)


def test_rule_regexes_stay_in_the_shared_subset():
    """No backreferences, lookaround, named groups or possessive/atomic constructs."""
    cons = linear_alignment(BRITNEY_C1)
    ctx, trans = render(parts_of(cons), 5)
    for bad in (r"(?=", r"(?!", r"(?<", r"(?P", r"\1", "(?>", "++", "*+"):
        assert bad not in ctx
    re.compile(ctx)
    assert re.findall(r"\$(\d+)", trans) and all(
        1 <= int(n) <= re.compile(ctx).groups for n in re.findall(r"\$(\d+)", trans)
    )
