"""dustonline's Kafka layer: thin over the core library (which has no Kafka import).

- ``worker``: the Faust app (``dustonline worker``): a learner per pages partition on a
  RocksDB-backed Faust table, the merge of their rules, the dead-letter topic, metrics;
- ``replay``: events from files onto the pages topic, keyed by registered domain;
- ``pages``: the crawler side of the pages topic, ``PagePublisher`` sending events packed;
- ``subscriber``: the crawler side of the rules topic, ``RuleSubscriber`` keeping a live
  ``RuleSet``.
"""
