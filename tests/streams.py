"""Tiny hand-made streams for the learners' unit tests."""

from dustonline.events import FetchEvent


def cluster_events(clusters, t0: float = 1_700_000_000.0):
    """One event per URL, a second apart; the URLs of ``clusters[i]`` share digest i."""
    t = t0
    for i, urls in enumerate(clusters):
        for u in urls:
            t += 1
            yield FetchEvent(url=u, ts=t, digest=f"sha1:CLUSTER{i}")
