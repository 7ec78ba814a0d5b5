"""dustonline's Kafka layer, installed as ``dustonline_stream``: thin over the core library
(which has no Kafka import and does not import this package).

- ``worker``: the Faust app (``dustonline worker``), wiring ``learn`` (a learner per pages
  partition on a RocksDB-backed Faust table, ``state``), ``checkpoint`` (its exactly-once
  state), ``merge`` (the merge of their rules), ``outputs`` (rules, partials, dead letters)
  and ``metrics``; ``faust_compat`` holds every use of a Faust or aiokafka internal;
- ``replay``: events from files onto the pages topic, keyed by registered domain;
- ``pages``: the crawler side of the pages topic, ``PagePublisher`` sending events packed;
- ``subscriber``: the crawler side of the rules topic, ``RuleSubscriber`` keeping a live
  ``RuleSet``;
- ``cli``: the commands above, registered into ``dustonline`` by entry point.
"""

if __name__ != "dustonline_stream":  # imported from a checkout as ``stream``
    raise ImportError(
        f"dustonline's Kafka layer is installed as dustonline_stream, not {__name__}: "
        "use e.g. `from dustonline_stream.subscriber import RuleSubscriber`"
    )
