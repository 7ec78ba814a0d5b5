"""dustonline's Kafka layer: thin clients over the core library (which has no Kafka import).

- ``replay``: publish events from files to the pages topic, keyed by registered domain;
- ``publish``: rule changes to the compacted rules topic (key = rule id);
- ``subscriber``: the crawler side, ``RuleSubscriber`` keeping a live ``RuleSet``.

The Faust worker (issue 3) is not here yet.
"""
