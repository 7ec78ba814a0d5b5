"""dustonline: a streaming, online learner of URL canonicalization (DUST) rules.

Typical use:

    learner = OnlineLearner(load_config("configs/default.yaml"), rocks_store("state/"))
    for event in read_events(["crawl.log"]):
        changes = learner.learn_one(event)
    RuleSet(learner.rules()).canonicalize("http://www.example.com/a?sid=9f3a")
"""

from . import (
    _compiled,  # noqa: F401  (first: it decides where the modules below load from)
    _moved,
)
from .config import Config, ConfigError, load_config
from .events import BadEvent, FetchEvent
from .learner.online import OnlineLearner
from .rules import Rule, RuleSet
from .seeds.dustlin import learn  # batch DustLin/DUSTER (thesis ch. 4-5), for comparison
from .state import memory_store, rocks_store

_moved.install()

__all__ = [
    "BadEvent",
    "Config",
    "ConfigError",
    "FetchEvent",
    "OnlineLearner",
    "Rule",
    "RuleSet",
    "learn",
    "load_config",
    "memory_store",
    "rocks_store",
]
# The one place the version is written: pyproject.toml reads it from here (a literal, read
# without importing the package), so an installed distribution and a source checkout agree.
__version__ = "0.1.0"
