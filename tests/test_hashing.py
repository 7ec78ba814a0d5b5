"""Text hashes (dustonline/hashing.py): mmh3's value for every string it can hash, and a
value, not a crash of the interpreter, for a string with a lone surrogate."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import mmh3
import pytest

from dustonline.events.event import BadEvent, FetchEvent, check_url
from dustonline.events.sketch import simhash_tokens
from dustonline.hashing import hash32, hash64


@pytest.mark.parametrize("text", ["", "abc", "param\x1dx.com\x1dutm_source", "b\u00fccher", "\U0001f600 \u4e2d"])
def test_the_same_hashes_as_mmh3_so_ids_stay_the_same(text):
    assert hash64(text) == mmh3.hash64(text, signed=False)[0]
    assert hash64(text, 5) == mmh3.hash64(text, 5, signed=False)[0]
    assert hash32(text, 0x5EED) == mmh3.hash(text, 0x5EED, signed=False)


def test_a_lone_surrogate_is_hashed():
    assert hash64("a\ud800") != hash64("a\udc00") and isinstance(hash32("\udfff"), int)
    assert simhash_tokens(["a\ud800", "b", "c"]) != simhash_tokens(["a", "b", "c"])


def test_readers_refuse_a_url_with_a_lone_surrogate():
    with pytest.raises(BadEvent) as e:
        check_url("http://a.com/x\ud800")
    assert e.value.reason == "bad-url" and "surrogate" in str(e.value)
    assert check_url("http://a.com/b\u00fccher") == "http://a.com/b\u00fccher"


def test_events_built_by_hand_with_lone_surrogates_end_no_process():
    """mmh3 crashed the interpreter on such a string (a segmentation fault, which no
    ``except`` can catch): the learner runs in a child process so a crash fails this test
    with its exit code rather than ending the suite. Such URLs teach nothing; the others
    of the stream are learned."""
    code = textwrap.dedent(
        """
        from dustonline import FetchEvent, OnlineLearner
        lrn = OnlineLearner()
        evs = []
        for i in range(6):
            d = f"sha1:{i:032d}"
            evs += [
                FetchEvent(url=f"http://a.com/p/{i}", ts=1.7e9 + 4 * i, digest=d),
                FetchEvent(url=f"http://a.com/p/{i}/x\\ud800", ts=1.7e9 + 4 * i + 1, digest=d),
                FetchEvent(url=f"http://a.com/q/{i}?\\ud800n=1", ts=1.7e9 + 4 * i + 2, digest=d,
                           canonical="http://a.com/\\udc80"),
                FetchEvent(url=f"http://a.com/r/{i}", ts=1.7e9 + 4 * i + 3, status=301,
                           redirect=f"http://a.com/p/{i}\\ud800"),
            ]
        lrn.learn_many(evs)
        lrn.flush()
        print(lrn.summary()["urls"])
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert int(res.stdout.strip()) == 6  # the six plain pages
    assert not FetchEvent(url="http://a.com/\ud800", ts=0.0, digest="sha1:x").teaches
