"""Message keys and values, in one place, so producers and consumers cannot drift apart.

Pages topic: key = the URL's registered domain (public suffix list), so every URL of a
site reaches the same partition and worker; value = the event as one JSON object (the
format of docs/formats.md). A message with the header ``dustonline-format: jsonl`` holds
several events of one partition, one JSON object per line, in order (``dustonline replay
--batch``): the worker's cost per message is then shared by the lines. A record with the
header ``dustonline-control: flush`` is a flush marker: the worker derives rules where it
reads one (stream/learn.py); its value is empty, or a ``Pool`` (gzip'd JSON): per shard
of the partition, the other shards' cross-site counts combined, which the shard's learner
adopts there (pool.py). A record with ``dustonline-control: round`` is a round marker that
``dustonline replay`` places into every partition every ``learning.pool_every`` events
(value: the round's id): the worker derives there, publishes its counts, and learns
nothing past it until the group's ``Pooled`` counts of that round are on the transfer
topic (rounds.py).
Rules topic: key = rule id; value = the rule record as in a rules file, or null (a
tombstone) to forget the id. Both UTF-8. The worker's internal partials topic: key =
rule id; value = a ``Partial`` as JSON. Its transfer topic (compacted): key = pages
partition, value = a ``Transfer`` as gzip'd JSON; key ``pool``, the ``Pooled`` counts of
the last replay round; key ``placer``, a ``Placer``. Both carry shards
(dustonline/learner/shards.py): one per partition unless ``learning.shards`` says more.
"""

from __future__ import annotations

import gzip
import zlib

import msgspec

from dustonline.config import Config
from dustonline.events.event import FetchEvent
from dustonline.events.routing import site_key
from dustonline.learner.records import Move, RoundSeen
from dustonline.rules.ruleset import Rule, encode_rule

_json = msgspec.json.Encoder()

page_key = site_key  # the URL's registered domain: what Kafka partitions the pages topic by


def page_value(ev: FetchEvent) -> bytes:
    return _json.encode(ev.to_json())


FORMAT_HEADER = "dustonline-format"
JSONL = b"jsonl"


def batch_value(events) -> bytes:
    return b"\n".join(_json.encode(ev.to_json()) for ev in events)


def is_batch(headers) -> bool:
    return _has_header(headers, FORMAT_HEADER, JSONL)


CONTROL_HEADER = "dustonline-control"
FLUSH = b"flush"


FLUSH_HEADERS = [(CONTROL_HEADER, FLUSH)]  # a flush marker's headers (outputs.py, pool.py)


def is_flush(headers) -> bool:
    return _has_header(headers, CONTROL_HEADER, FLUSH)


ROUND = b"round"
ROUND_HEADERS = [(CONTROL_HEADER, ROUND)]  # a round marker's headers (replay.py)


def is_round(headers) -> bool:
    return _has_header(headers, CONTROL_HEADER, ROUND)


def _has_header(headers, name: str, value: bytes) -> bool:
    if not headers:
        return False
    items = headers.items() if isinstance(headers, dict) else headers
    return any(k == name and v == value for k, v in items)


# pooled counts grow with the learned state: they go gzip-compressed (Kafka's size limit
# applies to what kafka-python is handed), and a value past this is not sent (pool.py)
MAX_POOLED_BYTES = 900_000


Counts = dict[str, tuple[int, ...]]


class Pool(msgspec.Struct):
    """A flush marker's value: for each shard of the partition, the other shards' counts
    combined."""

    others: dict[int, Counts]


class Transfer(msgspec.Struct):
    """A partition's shard learners' shared counts, by shard, as of the flush or round
    marker at ``offset``; ``round``: the id of the round marker the partition waits at."""

    partition: int
    offset: int
    counts: dict[int, Counts]
    round: str = ""
    seen: RoundSeen | None = None  # at a round marker, with joins: what the round's events said (joins.py)


class Pooled(msgspec.Struct):
    """Every shard's counts at a replay round, once every partition reached its marker;
    ``skipped`` when they were too large to send (the round then pools nothing)."""

    round: str
    counts: dict[int, Counts]
    skipped: bool = False
    moves: list[Move] = []  # the round's joins, in the order they apply (joins.py)
    offsets: dict[int, int] = {}  # with moves: each partition's round marker


class Placer(msgspec.Struct):
    """A replay placing rounds into the pages topic: until ``until`` (epoch seconds) the
    coordinator places none of its own, and it never counts records below ``ends``
    (per partition, the end offsets when the replay finished) towards a periodic round."""

    until: float
    ends: dict[int, int] = {}


POOL_KEY = b"pool"
PLACER_KEY = b"placer"
JOINS_KEY = b"joins"  # the coordinator's joins as of a round (pool.py)
JOINS_PREFIX = b"joins/"  # + the rest of a ``Joins.save`` key: its digests, whole or a round's
HANDOVER_PREFIX = b"handover/"  # + round id + "/" + domain: a joined domain's URLs handed over


class JoinsState(msgspec.Struct):
    """The coordinator's ``Joins`` after deciding ``round``, with its ``moves``: written
    before the round's pooled record, so a coordinator that takes over mid-round decides
    the same."""

    round: str
    state: bytes
    moves: list[Move]
    # ``state`` is ``Joins.save``'s head, its digests in records keyed ``joins/...`` before
    # it; False: the whole ``Joins.dump`` (written before the journal)
    journal: bool = False


def joins_value(js: JoinsState) -> bytes:
    return _gz(msgspec.msgpack.encode(js))


def joins_of(value: bytes) -> JoinsState:
    return msgspec.msgpack.decode(_ungz(value), type=JoinsState)


def handover_key(round_id: str, site: str) -> bytes:
    return HANDOVER_PREFIX + f"{round_id}/{site}".encode()


def handover_of_key(key: bytes) -> tuple[str, str]:
    round_id, _, site = key[len(HANDOVER_PREFIX) :].decode().rpartition("/")
    return round_id, site


def handover_value(events: list[FetchEvent]) -> bytes:
    return _gz(msgspec.msgpack.encode(events))


def handover_of(value: bytes) -> list[FetchEvent]:
    return msgspec.msgpack.decode(_ungz(value), type=list[FetchEvent])


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def _ungz(value: bytes) -> bytes:
    if value[:2] != b"\x1f\x8b":
        return value
    try:
        return gzip.decompress(value)
    except (EOFError, OSError, zlib.error) as e:  # truncated, or not gzip after all
        raise ValueError(f"bad gzip: {e}") from e


def pool_value(others) -> bytes:
    return _gz(_json.encode(Pool(dict(others))))


def pool_of(value: bytes | None) -> dict[int, Counts] | None:
    """The pooled counts a flush marker carries; None for a plain one; ValueError for a
    value that is neither."""
    if not value:
        return None
    return msgspec.json.decode(_ungz(value), type=Pool).others


def transfer_key(p: int) -> bytes:
    return str(p).encode()


def transfer_value(p: int, offset: int, counts, round_id: str = "", seen: RoundSeen | None = None) -> bytes:
    return _gz(_json.encode(Transfer(p, offset, dict(counts), round_id, seen)))


def transfer_of(value: bytes) -> Transfer:
    return msgspec.json.decode(_ungz(value), type=Transfer)


def pooled_value(pooled: Pooled) -> bytes:
    return _gz(_json.encode(pooled))


def pooled_of(value: bytes) -> Pooled:
    return msgspec.json.decode(_ungz(value), type=Pooled)


def placer_value(placer: Placer) -> bytes:
    return _json.encode(placer)


def placer_of(value: bytes) -> Placer:
    return msgspec.json.decode(value, type=Placer)


def rule_key(rule_id: str) -> bytes:
    return rule_id.encode()


def rule_value(rule: Rule) -> bytes:
    return encode_rule(rule)


class Partial(msgspec.Struct):
    """A shard learner's rule change, on the partials topic (``partition`` names the
    shard: with one shard per partition, as before shards, they are the same)."""

    partition: int
    rule: Rule


def partials_topic_name(cfg: Config) -> str:
    return f"{cfg.kafka.group_id}-rule-partials"


def transfer_topic_name(cfg: Config) -> str:
    return f"{cfg.kafka.group_id}-transfer-stats"
