"""Tiny hand-made streams for the learners' unit tests."""

from dustonline.events.event import FetchEvent


def cluster_events(clusters, t0: float = 1_700_000_000.0):
    """One event per URL, a second apart; the URLs of ``clusters[i]`` share digest i."""
    t = t0
    for i, urls in enumerate(clusters):
        for u in urls:
            t += 1
            yield FetchEvent(url=u, ts=t, digest=f"sha1:CLUSTER{i}")


def story_pages(host: str, first: int, count: int, forms, t0: float, step: float = 60.0):
    """Pages of a "story" site (goumai.com in the evaluation stream): page N has the forms
    A ``/story?id=N&page=1``, B ``/story_N.html``, C A's ``&print=1`` version and D B's
    ``?print=1`` version. Page i is fetched under ``forms[i % len(forms)]`` ("AC", "AD"...),
    one event every ``step`` seconds; a page's forms share one digest."""
    t = t0
    for i in range(count):
        n = first + i
        a, b = f"http://{host}/story?id={n}&page=1", f"http://{host}/story_{n}.html"
        url = {"A": a, "B": b, "C": a + "&print=1", "D": b + "?print=1"}
        for form in forms[i % len(forms)]:
            t += step
            yield FetchEvent(url=url[form], ts=t, digest=f"sha1:{host}:{n}")
