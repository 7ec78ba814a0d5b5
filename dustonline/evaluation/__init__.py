"""Evaluation: replaying a stream prequentially (prequential.py), the methods compared
(methods.py), rule-set quality against ground truth (metrics.py), the HTML report
(report.py) and the synthetic workload generator (generator.py)."""

from .._lazy import exports

_PREQUENTIAL = (
    "Rec",
    "Stream",
    "Replay",
    "load_truth",
    "load_stream",
    "prequential",
    "rule_spans",
    "first_evidence",
    "time_to_rule",
    "retirements",
    "drift_report",
    "by_kind",
    "clusters",
    "top_rules",
    "run",
    "targets",
)
__getattr__ = exports(__name__, dict.fromkeys(_PREQUENTIAL, "prequential"))
__all__ = list(_PREQUENTIAL)
