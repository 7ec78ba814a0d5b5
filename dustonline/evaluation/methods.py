"""The methods ``dustonline eval`` compares. Every learning method is a ``Learner``
(learner/protocol.py); the kinds differ in how the evaluation trains it:

- online: replayed prequentially, ``learn_one`` event by event (its rules key each URL
  before that URL's fetch teaches anything);
- batch: a ``fit(events, config) -> [Rule]`` behind the protocol (seeds/refit.py), trained
  once with ``learn_many`` over the stream's prefix;
- static: a ``canonicalize(url) -> key`` function that learns nothing (what crawlers use today).

Static canonicalizers come from optional packages (``pip install dustonline[eval]``); a
missing one is reported by name instead of failing the whole evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..config import Config


@dataclass(frozen=True)
class Method:
    name: str
    kind: str  # "online", "batch" or "static"
    doc: str
    make: Callable  # online and batch: (Config) -> Learner; static: () -> canonicalize
    needs: tuple[str, ...] = ()  # modules of the eval extra it imports


def missing(methods: list[Method], report: bool = False) -> dict[str, list[str]]:
    """Modules of the eval extra that are not installed -> what needs them, found before
    a run of minutes rather than as a traceback at its end."""
    from importlib.util import find_spec

    wanted: dict[str, list[str]] = {}
    for m in methods:
        for mod in m.needs:
            wanted.setdefault(mod, []).append(m.name)
    if report:
        wanted.setdefault("matplotlib", []).append("--report")
    return {mod: by for mod, by in wanted.items() if find_spec(mod) is None}


def _online(cfg: Config):
    """What ``dustonline learn`` learns under ``cfg``: with ``learning.shards``, its
    shards pooled at its rounds (runner.py), so a shard count is judged as it runs."""
    if cfg.learning.shards:
        from ..learner.partitioned import PartitionedLearner

        return PartitionedLearner(cfg, 1)
    from ..learner.online import OnlineLearner

    return OnlineLearner(cfg)


def batch(fit: Callable) -> Callable:
    """The ``make`` of a batch method: ``fit(events, config) -> [Rule]`` as a Learner."""

    def make(cfg: Config):
        from ..seeds.refit import RefitLearner

        return RefitLearner(fit, cfg)

    return make


def _batch(aligner: str):
    def fit(events, cfg: Config):
        from ..seeds.dustlin import learn

        return learn(events, cfg, aligner)

    return batch(fit)


def _seed(module: str):
    """A seed paper's learner (dustonline/seeds/), imported when it is used."""

    def fit(events, cfg: Config):
        from importlib import import_module

        return import_module(f"dustonline.seeds.{module}").fit(events, cfg)

    return batch(fit)


def _none():
    from ..rules.urls import light_normalize

    return light_normalize


def _w3lib():
    from w3lib.url import canonicalize_url

    return canonicalize_url


def _surt():
    from surt import surt

    return surt


def _url_normalize():
    # default options: filter_params=True drops every parameter not allow-listed, page ids
    # included, which merges distinct pages wholesale
    from url_normalize import url_normalize

    return url_normalize


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("online", "online", "dustonline's OnlineLearner, prequential", _online),
        Method("dustlin", "batch", "DustLin (thesis ch. 5), batch on the prefix", _batch("dustlin")),
        Method("duster", "batch", "DUSTER (thesis ch. 4), batch on the prefix", _batch("duster")),
        Method(
            "dustbuster",
            "batch",
            "Bar-Yossef et al. 2007, substring/parameter substitutions from the URL list, "
            "validated on the stream's digests, batch on the prefix",
            _seed("dustbuster"),
            ("numpy",),
        ),
        Method(
            "replicas",
            "batch",
            "Cho et al. 2000, replicated collections -> host-alias and path-prefix rules, batch on the prefix",
            _seed("replicas"),
        ),
        Method(
            "koppula",
            "batch",
            "Koppula et al. 2010, pair-wise rules + decision-tree generalization, batch on the prefix",
            _seed("koppula"),
        ),
        Method(
            "patterntree",
            "batch",
            "Lei et al. 2010, pattern tree + graph rule selection, batch on the prefix",
            _seed("patterntree_learn"),
        ),
        Method("w3lib", "static", "w3lib.url.canonicalize_url (Scrapy)", _w3lib, ("w3lib",)),
        Method("surt", "static", "surt.surt (Heritrix/Wayback SURT form)", _surt, ("surt",)),
        Method(
            "url-normalize",
            "static",
            "url_normalize.url_normalize (RFC 3986 normalization)",
            _url_normalize,
            ("url_normalize",),
        ),
        Method(
            "none", "static", "dustonline's light normalization only (scheme/host case, default port, fragment)", _none
        ),
    )
}


def resolve(names: str | list[str] | None) -> list[Method]:
    """``"online,dustlin"`` or a list -> methods; None or "all" -> every method."""
    if names is None or names == "all" or names == ["all"]:
        return list(METHODS.values())
    if isinstance(names, str):
        names = [n for n in names.split(",") if n]
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown learner {', '.join(unknown)}; choose from {', '.join(METHODS)} or all")
    return [METHODS[n] for n in names]
