"""Which partition of the pages topic a site lands on, without a Kafka import.

Kafka's default partitioner (Java, kafka-python, librdkafka's ``murmur2_random``) puts a
keyed record on ``(murmur2(key) & 0x7fffffff) % partitions``. The worker learns each
partition on its own, so ``learner.partitioned.PartitionedLearner`` routes events the same way: the embedded
learner then reproduces what a group of workers learns from the same stream.
"""

from __future__ import annotations

import functools

from ..rules.urls import host_of, site_of_host

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (seed 0x9747b28c), as a signed 32-bit int like Java's."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[n4 + 2] << 16
    if rest >= 2:
        h ^= data[n4 + 1] << 8
    if rest >= 1:
        h ^= data[n4]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def site_key(url: str) -> bytes:
    """The pages topic's message key: the URL's registered domain (public suffix list)."""
    return site_of_host(host_of(url)).encode()


def partition_for(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def partition_of_host(host: str, partitions: int) -> int:
    """``partition_for(site_key(url), partitions)`` from the URL's host: per host, the
    public suffix lookup and the hash run once rather than for every event."""
    return _partition_of_host(host, partitions)


@functools.lru_cache(maxsize=1 << 16)
def _partition_of_host(host: str, partitions: int) -> int:
    return partition_for(site_of_host(host).encode(), partitions)
