"""The online learner and its stages.

``OnlineLearner`` (online.py) coordinates; each stage has one job:
cluster assignment (clusters.py), URL alignment (align.py, tokenize.py), rule induction
from a consensus (induce.py) and across clusters (generalize.py), rules alignment cannot
express (kvrules.py, paramorder.py, casefold.py), validation (validation.py), the
validation URLs of a host (hosturls.py), re-targeting (adopt.py, keycheck.py), the
training/validation split (holdout.py); and a group of learners as the worker group
learns (partitioned.py).
"""

from .._lazy import exports

__getattr__ = exports(
    __name__,
    {
        "OnlineLearner": "online",
        "Learner": "protocol",
        "LearnerBase": "protocol",
        "PartitionedLearner": "partitioned",
    },
)
__all__ = ["Learner", "LearnerBase", "OnlineLearner", "PartitionedLearner"]
