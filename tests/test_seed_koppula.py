"""Koppula et al. 2010 (dustonline.seeds.koppula) on the paper's worked examples."""

from streams import cluster_events as _events

from dustonline import RuleSet
from dustonline.config import config_from_dict
from dustonline.seeds.koppula import KoppulaParams, Tokenizer, fit, learn, pairwise
from dustonline.seeds.koppula_tokens import DeepParams, deep_tokenize
from dustonline.seeds.koppula_tree import STAR, generalize

CFG = config_from_dict({"learning": {"holdout": 0}})
ANY_COVERAGE = KoppulaParams(min_coverage=1)


def _learn(clusters, params=ANY_COVERAGE):
    return learn(list(_events(clusters)), CFG, params)


# (a) §1.1/§2 "Alignment and Irrelevant Path Components"
ARIZONA = [
    ["http://ag.arizona.edu/srnr/about/art/index.html", "http://ag.arizona.edu/srnr/about/art"],
    ["http://ag.arizona.edu/art/index.html", "http://ag.arizona.edu/art"],
]


def test_arizona_index_html_one_rule_across_depths():
    rules, stats = _learn(ARIZONA)
    assert stats["pairwise"] == 2 and len(rules) == 1
    (r,) = rules
    # keys named from the end: both pair-wise rules delete k_(-,1) = index.html
    assert r.context.endswith(r"/index\.html") and "index.html" not in r.transformation
    rs = RuleSet(rules)
    for src, dst in ARIZONA:
        assert rs.canonicalize(src) == dst
    assert rs.canonicalize("http://ag.arizona.edu/a/b/c/art/index.html") == "http://ag.arizona.edu/a/b/c/art"


# (b) §3.2.2 imdb photogallery -> mediaindex
IMDB = [
    ["http://www.imdb.com/title/tt0810900/photogallery", "http://www.imdb.com/title/tt0810900/mediaindex"],
    ["http://www.imdb.com/title/tt0053198/photogallery", "http://www.imdb.com/title/tt0053198/mediaindex"],
]


def test_imdb_generalized_rule_is_the_papers():
    rules, stats = _learn(IMDB)
    assert stats == {"pairwise": 2, "generalized": 1, "translated": 1, "filtered": 1}
    (r,) = rules
    # c(k_(4,1,2,2)) = tt, c(k_(4,2,2,1)) = *, c(k_(5,1)) = photogallery; t(k_(5,1)) = mediaindex
    assert r.context == r"http://www\.imdb\.com/title/(tt([0-9]+))/photogallery"
    assert r.transformation == "http://www.imdb.com/title/$1/mediaindex"
    assert (
        RuleSet(rules).canonicalize("http://www.imdb.com/title/tt0111161/photogallery")
        == "http://www.imdb.com/title/tt0111161/mediaindex"
    )


def test_imdb_decision_tree_wildcards_the_title_id_only():
    tk = Tokenizer([u for c in IMDB for u in c], DeepParams())
    pairs = [(tk.tok(c[0]), tk.tok(c[1])) for c in IMDB]
    classes = [pairwise(u, v) for u, v in pairs]
    assert classes[0] == classes[1]  # same transformation: one class
    gen = generalize([u.attrs for u, _ in pairs], classes)
    assert gen[0] == gen[1]
    g = gen[0]
    assert g[("s", 2)] == "www.imdb.com" and g[("s", 3)] == "title" and g[("e", 1)] == "photogallery"
    assert g[("s", 4)] == STAR and g[(("s", 4), "i", 1)] == "tt" and g[(("s", 4), "j", 1)] == STAR


# (c) §2 "Value Conversions": allrecipes
def test_allrecipes_case_conversion_pairwise_and_generalized():
    paper = ["http://allrecipes.com/Recipe/Smoers/default.aspx", "http://allrecipes.com/RECIPE/Smoers/default.aspx"]
    tk = Tokenizer(paper, DeepParams())
    # the paper's pair-wise rule, u1 -> u2: t(k_(3,3)) = Uppercase(k_(3,3))
    (edit, query) = pairwise(tk.tok(paper[0]), tk.tok(paper[1]))
    assert edit == (("s", 2, 1), ((("conv", ("s", 3), "upper"),),)) and query == "copy"
    # generalized over recipes, to the lower-case form (the paper's clusters plus lower-case
    # members and more recipes, so the converted keys become wildcards)
    names = ["Smoers", "Brownies", "Lasagna", "Cheesecake"]
    clusters = [
        [
            f"http://allrecipes.com/Recipe/{n}/default.aspx",
            f"http://allrecipes.com/RECIPE/{n}/default.aspx",
            f"http://allrecipes.com/recipe/{n.lower()}/default.aspx",
        ]
        for n in names
    ]
    rules, _ = _learn(clusters)
    assert len(rules) == 1
    (r,) = rules
    assert "${1:lower}" in r.transformation and "${2:lower}" in r.transformation
    rs = RuleSet(rules)
    assert rs.canonicalize(paper[0]) == rs.canonicalize(paper[1]) == "http://allrecipes.com/recipe/smoers/default.aspx"
    assert (
        rs.canonicalize("http://allrecipes.com/RECIPE/Pancakes/default.aspx")
        == "http://allrecipes.com/recipe/pancakes/default.aspx"
    )


# (d) §3.1.2 deep tokenization, Figure 2
FIGURE_2 = [
    "ctattractions-17876002-Austria_Vienna_attractions.html",
    "ctattractions-17826402-Austria_Salzburg_attractions.html",
    "ctattractions-17682302-Austria_Graz_attractions.html",
    "profile-78587305-Austria_Vienna_Belvedere.html",
    "profile-78576005-Austria_Salzburg_Dommuseum.html",
    "profile-78571605-Austria_Salzburg_Eisriesenwelt.html",
]


def test_deep_tokenization_figure_2():
    deep = deep_tokenize(FIGURE_2)
    # the paper's deep tokens (it prints '-' where the token has '_')
    assert deep[FIGURE_2[0]] == (
        "ctattractions",
        "-",
        "17876002",
        "-",
        "Austria",
        "_",
        "Vienna",
        "_",
        "attractions",
        ".",
        "html",
    )
    for t in FIGURE_2:
        d = deep[t]
        assert d[0] in ("ctattractions", "profile") and d[4] == "Austria" and d[-2:] == (".", "html")
        assert "".join(d) == t


def test_deep_tokenization_finds_host_specific_delimiters():
    simtel = [
        "accelerate.php[id]100019[SiteID]softwareoasis",
        "accelerate.php[id]100020[SiteID]tucows",
        "accelerate.php[id]100143[SiteID]download",
    ]
    for t, d in deep_tokenize(simtel).items():
        i = d.index("[")
        assert d[i : i + 4] == ("[", "id", "]", t.split("]")[1].split("[")[0])
    # imdb: "tt" is an anchor, split from the id by a unit change (k_(4,1,2,2) = tt)
    assert deep_tokenize(["tt0810900", "tt0053198"]) == {"tt0810900": ("tt", "0810900"), "tt0053198": ("tt", "0053198")}


# (e) §5 min-coverage and precision filtering
def test_min_coverage_filter_drops_rare_rules():
    assert _learn(IMDB, KoppulaParams())[0] == []  # coverage 2 < 10 (§5.1)
    assert len(_learn(IMDB, ANY_COVERAGE)[0]) == 1


def test_precision_filter_drops_a_rule_with_a_counterexample():
    # titles where photogallery and mediaindex are different pages: the generalized rule
    # maps tt9.../photogallery onto a mediaindex URL of another dup cluster
    counter = [[f"http://www.imdb.com/title/tt{n}/photogallery"] for n in ("0000001", "0000002")]
    counter += [[f"http://www.imdb.com/title/tt{n}/mediaindex"] for n in ("0000001", "0000002")]
    rules, stats = _learn(IMDB + counter)
    assert stats["translated"] == 1 and rules == []


def test_fit_is_deterministic_and_has_ids():
    ev = list(_events(IMDB + ARIZONA))
    assert fit(ev, CFG) == []  # default min coverage 10: these examples are too small
    rules, _ = learn(ev, CFG, ANY_COVERAGE)
    again, _ = learn(list(reversed(ev)), CFG, ANY_COVERAGE)
    assert len(rules) == 2
    assert [(r.id, r.context, r.transformation) for r in rules] == [(r.id, r.context, r.transformation) for r in again]
    assert all(r.id.startswith("r-") and len(r.id) == 14 for r in rules)
