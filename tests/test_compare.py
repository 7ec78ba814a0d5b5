"""Several eval results side by side (evaluation/compare.py)."""

from dustonline.evaluation.compare import table


def _res(events, sites, **tails):
    methods = [
        {"name": n, "tail": {"coverage": c, "lost": lost, "lost_rate": rate}} for n, (c, lost, rate) in tails.items()
    ]
    return {"input": {"events": events, "sites": sites}, "methods": methods}


def test_one_row_per_workload_with_each_methods_coverage_and_losses():
    out = table(
        [
            ("h1", _res(100_033, 400, online=(0.381, 0, 0.0), surt=(0.161, 436, 0.0461))),
            ("t1", _res(76_551, 300, online=(0.527, 1, 0.0001), w3lib=(0.01, 0, 0.0))),
        ]
    ).splitlines()
    assert out[0] == "| workload | events | sites | online | surt | w3lib |"
    assert out[2] == "| h1 | 100,033 | 400 | 38.1% / 0 (0.00%) | 16.1% / 436 (4.61%) | – |"
    assert out[3] == "| t1 | 76,551 | 300 | 52.7% / 1 (0.01%) | – | 1.0% / 0 (0.00%) |"
