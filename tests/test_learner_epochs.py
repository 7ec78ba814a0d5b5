"""A candidate dropped and learned again counts its URLs once (learner.py, table 'epoch'),
and one retired and activated again within a step keeps its incumbency (lifecycle.py)."""

from dustonline import FetchEvent, OnlineLearner
from dustonline.config import config_from_dict
from dustonline.learner.records import Candidate
from dustonline.learner.validation import support_counts


def _learned() -> OnlineLearner:
    evs, t = [], 1.7e9
    for i in range(60):
        for u in (f"http://www.s.com/news/{i}", f"http://s.com/news/{i}"):
            t += 60
            evs.append(FetchEvent(url=u, ts=t, digest=f"sha1:P{i}"))
    # raw alignment: after the host rule (www), these clusters would teach no rewrite rule
    cfg = {"learning": {"min_freq": 5, "min_supp": 5, "prepared": False}}
    learner = OnlineLearner(config_from_dict(cfg))
    learner.learn_many(evs)
    return learner


def test_candidate_learned_again_does_not_read_its_old_counts():
    learner = _learned()
    rec = next(c for c in learner.candidates() if c["status"] == "active")
    cand = Candidate(rec["id"], rec["context"], rec["transformation"], rec["freq"], tuple(rec["hosts"]))
    learner.lifecycle.drop(rec["id"])  # its group lost it (eviction, a shape change)
    learner.lifecycle.upsert(cand, rec["group"])  # and learned it again
    again = learner.book[rec["id"]]
    forms = [
        (f, cid)
        for h in rec["hosts"]
        for url, cid in learner.host_urls.of(h).items()
        if (f := again.compiled.apply(url)) is not None
    ]
    assert (again.rec.nsupp, again.rec.nci) == support_counts(forms) == (rec["nsupp"], rec["nci"])


def test_a_rule_retired_and_activated_again_within_a_step_keeps_its_incumbency():
    """Re-targeting gives a page the key of its oldest rule; a rule whose validity dipped
    and came back within one event never left the subscribers' rule set, and must not
    become the youngest and lose its pages' keys."""
    learner = _learned()
    rid = next(c["id"] for c in learner.candidates() if c["status"] == "active")
    rec = learner.book[rid].rec
    since = rec.since
    learner.stats.events += 1  # a later event
    learner.lifecycle.publish(rec, "candidate")
    learner.lifecycle.publish(rec, "active")
    assert rec.since == since
    out = [r for r in learner.flush() if r.id == rid]  # the step ends: it went out once, active
    assert [r.status for r in out] == ["active"]
    learner.lifecycle.publish(rec, "candidate")
    assert [r.status for r in learner.flush() if r.id == rid] == ["retired"]
    learner.stats.events += 1
    learner.lifecycle.publish(rec, "active")  # in a later step: active anew, and youngest
    assert rec.since == learner.stats.events != since
