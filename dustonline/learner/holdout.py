"""The training/validation split of dup-clusters, shared by every learner that validates
(online, DustLin, DUSTER, Koppula): a cluster is in one side for good, by a hash of its id,
so a replay or a restart splits the same way."""

from __future__ import annotations

from ..hashing import hash32

_SEED = 0x5EED


def validates(cluster_id: str, holdout: float) -> bool:
    """Is the cluster a validation cluster? ``holdout`` is the validation share (0..1);
    0 means every cluster both trains and validates."""
    if holdout <= 0:
        return True
    return (hash32(cluster_id, _SEED) % 10_000) < holdout * 10_000


def trains(cluster_id: str, holdout: float) -> bool:
    """Is the cluster a training cluster (every cluster is, with no holdout)?"""
    return holdout <= 0 or not validates(cluster_id, holdout)
