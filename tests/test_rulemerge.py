"""rulemerge: one rule set from the rule changes of many partition learners."""

import random

from dustonline.rules.merge import RuleMerger, decode_partials, encode_partials, merge
from dustonline.rules.ruleset import ACTIVE, RETIRED, Rule


def rule(v, hosts, status=ACTIVE, context="^a$", support=10, fpr=0.0, rid="r-1"):
    return Rule(
        id=rid,
        hosts=hosts,
        context=context,
        transformation="x",
        support=support,
        fpr=fpr,
        freq=3,
        version=v,
        status=status,
        updated=float(v),
    )


def test_union_of_hosts_sum_of_support_and_versions():
    m = merge({"0": rule(2, ["a.com"], support=10), "3": rule(1, ["b.org", "www.b.org"], support=30, fpr=0.1)})
    assert m.status == ACTIVE and m.version == 3
    assert m.hosts == ["a.com", "b.org", "www.b.org"]
    assert m.support == 40 and m.fpr == round(3 / 40, 6) and m.freq == 6


def test_a_partition_that_retires_takes_its_hosts_away_and_the_last_retires_the_rule():
    mg = RuleMerger()
    assert mg.apply(0, rule(1, ["a.com"])).hosts == ["a.com"]
    assert mg.apply(1, rule(1, ["b.com"])).hosts == ["a.com", "b.com"]
    m = mg.apply(0, rule(2, ["a.com"], status=RETIRED))
    assert m.status == ACTIVE and m.hosts == ["b.com"] and m.version == 3
    m = mg.apply(1, rule(2, ["b.com"], status=RETIRED))
    assert m.status == RETIRED and m.version == 4 and mg.rules() == []


def test_old_and_repeated_partials_change_nothing():
    mg = RuleMerger()
    mg.apply(0, rule(2, ["a.com"]))
    assert mg.apply(0, rule(2, ["a.com"])) is None
    assert mg.apply(0, rule(1, ["a.com"], status=RETIRED)) is None
    assert mg.rules()[0].status == ACTIVE


def test_the_stored_partial_read_again_is_merged_again_but_an_older_one_is_not():
    """A worker stores a partial before the rule it caused is delivered; killed in
    between, it re-reads the partial and must publish the merged rule again."""
    parts: dict = {}
    first = RuleMerger().apply(0, rule(2, ["a.com"]), parts)
    RuleMerger().apply(1, rule(1, ["b.com"]), parts)
    restarted = RuleMerger()
    assert restarted.apply(1, rule(1, ["b.com"]), parts) is None
    again = restarted.again(1, rule(1, ["b.com"]), parts)
    assert again == merge(parts) and again.hosts == ["a.com", "b.com"] and again.version > first.version
    assert restarted.again(0, rule(1, ["a.com"]), parts) is None


def test_disagreeing_contexts_give_no_host_a_context_it_did_not_validate():
    m = merge(
        {
            "0": rule(1, ["a.com"], context="^x$", support=5),
            "1": rule(1, ["b.com"], context="^y$", support=9),
            "2": rule(1, ["c.com"], context="^x$", support=6),
        }
    )
    assert m.context == "^x$" and m.hosts == ["a.com", "c.com"] and m.support == 11


def test_final_record_and_versions_do_not_depend_on_arrival_order():
    """Partials of one partition arrive in order, partitions interleave at will, and a
    restarted learner re-sends some: the merged record ends the same, and each
    published version is larger than the last one published."""
    streams = {
        p: [rule(v, [f"h{p}.com"], status=ACTIVE if (v + p) % 3 else RETIRED, support=v * 10 + p) for v in range(1, 6)]
        for p in range(4)
    }
    finals = set()
    for seed in range(30):
        rng = random.Random(seed)
        queues = {p: list(s) for p, s in streams.items()}
        mg, last = RuleMerger(), 0
        while any(queues.values()):
            p = rng.choice([p for p, q in queues.items() if q])
            r = queues[p].pop(0)
            for x in [r] + ([r] if rng.random() < 0.2 else []):  # duplicates
                out = mg.apply(p, x)
                if out is not None:
                    assert out.version > last
                    last = out.version
        m = merge(mg._partials["r-1"])
        finals.add((m.version, m.status, tuple(m.hosts), m.support))
    assert len(finals) == 1


def test_partials_round_trip_through_the_table_encoding():
    parts = {"0": rule(1, ["a.com"]), "2": rule(4, ["b.com"], status=RETIRED)}
    assert decode_partials(encode_partials(parts)) == parts
    assert decode_partials(None) == {}
