"""The seed papers' systems as learners, behind the batch contract ``fit(events, config)
-> [Rule]``, rules in the context/transformation contract (rules/ruleset.py); refit.py puts
a fit behind the ``Learner`` protocol, so ``dustonline eval --learner NAME`` compares them
with ours on the same stream."""
