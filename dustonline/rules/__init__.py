"""The rule contract: what a learned rule is and how crawlers apply it.

- ``ruleset``: ``Rule`` records, ``RuleSet.canonicalize``, rules files;
- ``urls``: hosts, sites and the light normalization used where no rule applies;
- ``book``: the current rule set rebuilt from the rules topic's updates;
- ``merge``: one rule set from the changes of many partition learners.
"""

from .ruleset import (
    ACTIVE,
    CONVERSIONS,
    RETIRED,
    CompiledRule,
    Rule,
    RuleError,
    RuleSet,
    ascii_lower,
    decide,
    encode_rule,
    parse_transformation,
    read_rules,
    rule_order,
    write_rules,
)

__all__ = [
    "ACTIVE",
    "CONVERSIONS",
    "RETIRED",
    "CompiledRule",
    "Rule",
    "RuleError",
    "RuleSet",
    "ascii_lower",
    "decide",
    "encode_rule",
    "parse_transformation",
    "read_rules",
    "rule_order",
    "write_rules",
]
