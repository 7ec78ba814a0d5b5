"""A candidate dropped and learned again counts its URLs once (learner.py, table 'epoch')."""

from dustonline import FetchEvent, OnlineLearner
from dustonline.config import config_from_dict
from dustonline.learner.generalize import Candidate
from dustonline.learner.validation import support_counts


def test_candidate_learned_again_does_not_read_its_old_counts():
    evs, t = [], 1.7e9
    for i in range(60):
        for u in (f"http://www.s.com/news/{i}", f"http://s.com/news/{i}"):
            t += 60
            evs.append(FetchEvent(url=u, ts=t, digest=f"sha1:P{i}"))
    # raw alignment: after the host rule (www), these clusters would teach no rewrite rule
    cfg = {"learning": {"min_freq": 5, "min_supp": 5, "prepared": False}}
    learner = OnlineLearner(config_from_dict(cfg))
    learner.learn_many(evs)
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
