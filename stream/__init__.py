"""dustonline's Kafka layer: thin over the core library (which has no Kafka import).

- ``worker``: the Faust app (``dustonline worker``): a learner per pages partition on a
  RocksDB-backed Faust table, the merge of their rules, the dead-letter topic, metrics;
- ``replay``: events from files onto the pages topic, keyed by registered domain;
- ``subscriber``: the crawler side, ``RuleSubscriber`` keeping a live ``RuleSet``.
"""
