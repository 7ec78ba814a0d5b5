"""dustonline: a streaming, online learner of URL canonicalization (DUST) rules.

    learner = OnlineLearner(load_config("configs/default.yaml"), rocks_store("state/"))
    for event in read_events(["crawl.log"]):
        changes = learner.learn_one(event)
    RuleSet(learner.rules()).canonicalize("http://www.example.com/a?sid=9f3a")
"""

from .batch import learn
from .config import Config, ConfigError, load_config
from .events import BadEvent, FetchEvent
from .learner import OnlineLearner
from .rules import Rule, RuleSet
from .store import memory_store, rocks_store

__all__ = [
    "BadEvent", "Config", "ConfigError", "FetchEvent", "OnlineLearner", "Rule", "RuleSet",
    "learn", "load_config", "memory_store", "rocks_store",
]
__version__ = "0.1.0"
