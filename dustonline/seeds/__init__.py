"""The seed papers' systems as learners, behind the batch contract of learners.py:
``fit(events, config) -> [Rule]``, rules in the context/transformation contract (rules.py),
so ``dustonline eval --learner NAME`` compares them with ours on the same stream."""
