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


def tracked_pages(host: str, pages: int, ts: list[float], name: str) -> list[FetchEvent]:
    """Every page of ``host`` fetched plain and with ``name`` set to a random hex token,
    ten seconds apart from ``ts[0]`` (advanced)."""
    import random

    rng = random.Random(host)
    out = []
    for i in range(pages):
        token = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        for alias in ("", f"?{name}={token}"):
            ts[0] += 10
            out.append(FetchEvent(url=f"http://{host}/p{i}{alias}", ts=ts[0], digest=f"sha1:{host}/p{i}"))
    return out


def transfer_across_partitions(partitions: int = 2, name: str = "clkid"):
    """Three sites of partition 0 show ``name`` on three pages each (enough to prove it
    with min_freq 3); one site of partition 1 shows it on one page. Returns (events, the
    three hosts, the newcomer)."""
    from dustonline.events.routing import partition_for, site_key

    by_part: dict[int, list[str]] = {0: [], 1: []}
    for i in range(200):
        host = f"site{i}.com"
        p = partition_for(site_key("http://" + host + "/"), partitions)
        if p in by_part and len(by_part[p]) < 3:
            by_part[p].append(host)
    provers, newcomer = by_part[0], by_part[1][0]
    ts = [1.7e9]
    events = [ev for h in provers for ev in tracked_pages(h, 3, ts, name)] + tracked_pages(newcomer, 1, ts, name)
    return events, provers, newcomer
