"""What the learner reads: fetch events, the readers that make them from crawl files,
content sketches, the dead-letter file and the pages topic's routing keys.

- ``event``: ``FetchEvent`` and the checks every reader applies;
- ``readers``: JSON lines, Heritrix crawl.log, CDX, CDXJ, WARC, access logs -> events;
- ``sketch``: digest and simhash of a page body, as a crawler computes them;
- ``deadletter``: rejected records with their reasons;
- ``routing``: which partition of the pages topic a site lands on (Kafka's partitioner).
"""

from .event import (
    DEFAULT_MAX_URL_LENGTH,
    EMPTY_DIGEST,
    BadEvent,
    FetchEvent,
    check_url,
    event_from_dict,
    normalize_digest,
    parse_links,
    parse_simhash,
    parse_ts,
)

__all__ = [
    "DEFAULT_MAX_URL_LENGTH",
    "EMPTY_DIGEST",
    "BadEvent",
    "FetchEvent",
    "check_url",
    "event_from_dict",
    "normalize_digest",
    "parse_links",
    "parse_simhash",
    "parse_ts",
]
