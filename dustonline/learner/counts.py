"""Validation counts (thesis Alg. 3/8, kept as running sums, as DustLin-MR's reduce):
every candidate of a host counts each validation URL of that host. A canonical form going
from n to n+1 URLs adds n pairs to Nsupp, and n' to Nci when n' of those URLs share its
cluster; a URL leaving subtracts the same."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ..rules.pattern import admitted
from ..rules.ruleset import CompiledRule
from ..rules.urls import light_normalize
from ..state.store import Store
from .candidates import Cand, CandidateBook
from .hosturls import HostURLs
from .keys import KeysBefore
from .records import CandRec
from .validation import fpr

_WIDE = 16  # clusters per validation form kept as a flat list before it becomes a dict


class ValidationCounts:
    def __init__(
        self, store: Store, book: CandidateBook, host_urls: HostURLs, min_freq: int, min_supp: int, fpr_max: float
    ):
        self.vcount = store.table("vcount", filtered=True)
        # rule id -> [nsupp, nci, malformed, freq] of other partitions' hosts, pooled
        self.pooled = store.table("vpool")
        self._pooled_any = next(self.pooled.items(), None) is not None  # valid() runs often
        self.book = book
        self.host_urls = host_urls
        self.min_freq, self.min_supp, self.fpr_max = min_freq, min_supp, fpr_max
        # URLs as RuleSet hands them to rewrite rules (params.py: moved, names applied),
        # and the hosts whose URLs move to a host; unset: raw URLs, each on its own host
        self.prepare: Callable[[str, str], str] | None = None
        self.members: Callable[[str], list[str]] = lambda host: []
        # names or moves changed and the counts have not moved to the new keys yet
        # (online.py ``_recount``, after a sweep's derivation): only a full back-fill holds then
        self.rekey_pending: Callable[[], bool] = lambda: False
        self.seq = 0  # URLs counted so far (params.py notes it when names change)

    def hosts_of(self, hosts, members: Callable[[str], list[str]] | None = None) -> list[str]:
        """The hosts whose URLs a rule of ``hosts`` counts: those, and the hosts that move
        to them (RuleSet applies a target's rules to the URLs moved to it)."""
        out = list(dict.fromkeys(hosts))
        seen = set(out)
        for h in list(out):
            for m in (members or self.members)(h):
                if m not in seen:
                    seen.add(m)
                    out.append(m)
        return out

    def read_urls(self, hosts) -> Iterator[tuple[str, str]]:
        """(url, cluster) of the validation URLs a rule of ``hosts`` reads, as it is
        counted: as RuleSet hands them to the rewrite rules (moved, the scheme, parameter
        and path-edit rules applied), those of the hosts that move to them included."""
        prepare, urls_of = self.prepare, self.host_urls.of
        if prepare is None:
            for h in hosts:
                yield from urls_of(h).items()
            return
        for h in self.hosts_of(hosts):
            for url, cid in urls_of(h).items():
                yield prepare(url, h), cid

    def valid(self, rec: CandRec) -> bool:
        nsupp, nci, malformed, freq = rec.nsupp, rec.nci, rec.malformed, rec.freq
        o = self.pooled.get(rec.id) if self._pooled_any else None
        if o is not None:  # the rule's clusters and hosts on other partitions count as well
            nsupp, nci, malformed, freq = nsupp + o[0], nci + o[1], malformed + o[2], freq + o[3]
        return (
            freq >= self.min_freq
            and nsupp >= self.min_supp
            and fpr(nsupp, nci) <= self.fpr_max + 1e-12
            and not malformed
            and admitted(rec.context)
        )

    def own(self) -> dict[str, tuple[int, int, int, int]]:
        """Per candidate, (nsupp, nci, malformed, freq) on this learner's hosts, for a
        worker group to pool."""
        out = {}
        for cand in self.book.all():
            r = cand.rec
            out[r.id] = (r.nsupp, r.nci, r.malformed, r.freq)
        return dict(sorted(out.items()))

    def pool(self, others: dict[str, tuple[int, int, int, int]], gone: list[str] | None = None) -> list[str]:
        """Other partitions' ``own`` counts, summed; returns the ids whose pooled counts
        changed (their validity is evaluated again). With ``gone``, ``others`` holds
        the changed ids only, ``gone`` those no longer counted; the rest stand."""
        changed = []
        held = set(gone) if gone is not None else {rid for rid, _ in self.pooled.items()}
        for rid in sorted(set(others) | held):
            new = others.get(rid)
            old = self.pooled.get(rid)
            if (tuple(old) if old else None) == (tuple(new) if new else None):
                continue
            if new:
                self.pooled[rid] = list(new)
            else:
                self.pooled.pop(rid)
            changed.append(rid)
        self._pooled_any = next(self.pooled.items(), None) is not None
        return changed

    def backfill(
        self, rid: str, hosts, delta: int = 1, expand: bool = True, prepare: Callable[[str, str], str] | None = None
    ) -> None:
        """Count (or, with delta=-1, uncount) the stored URLs of ``hosts`` for one rule:
        a candidate appeared, changed, or gained or lost hosts. ``expand``: and of the
        hosts that move to them. ``prepare``: the URLs keyed so (counts.rekey), not as now."""
        cand = self.book[rid]
        count, prepare = self.count_one, prepare or self.prepare
        for h in self.hosts_of(hosts) if expand else hosts:
            for url, cid in self.host_urls.of(h).items():
                count(cand, url, cid, delta, prepare(url, h) if prepare else url)
        self.book.save(cand.rec)

    def recount_changed(self, rid: str, old: Cand, changed: tuple[str, ...]) -> None:
        """The rule's context changed only in literal alternatives (``changed``: those
        added or dropped, changed_literals): only the URLs holding one of them move from
        the ``old`` rule's form to the new one. The others read the same under both, so
        the counts end as a reset and back-fill of every URL leaves them (which, for an
        alternation of observed values gaining one, was most of the back-fill of a
        1M-event run)."""
        cand = self.book[rid]
        count, prepare = self.count_one, self.prepare
        walked = 0
        for h in self.hosts_of(cand.rec.hosts):
            for url, cid in self.host_urls.of(h).items():
                walked += 1
                key = prepare(url, h) if prepare else url
                for x in changed:
                    if x in key or x in url:
                        count(old, url, cid, -1, key)
                        count(cand, url, cid, 1, key)
                        break
        self.seq += walked  # as many URLs read as a back-fill reads (params.py compares it)
        self.book.save(cand.rec)

    def rekey(self, rid: str, hosts: set[str], before: KeysBefore) -> None:
        """The URLs of ``hosts`` read otherwise now (their names or moves changed): one
        rule's counts of them move from the keys they had ``before``, as hosts moved then,
        to the keys they have now. The rule's other hosts keep their counts: a reset and
        back-fill of all of them gave the same counts, for seven times the work on a
        generated stream."""
        counted = self.book[rid].rec.hosts
        was = [h for h in self.hosts_of(counted, before.members) if h in hosts]
        self.backfill(rid, was, -1, expand=False, prepare=before.prepared)
        self.backfill(rid, [h for h in self.hosts_of(counted) if h in hosts], expand=False)

    def count_one(self, cand: Cand, url: str, cid: str, delta: int, prepared: str | None = None) -> bool:
        """One URL in or out of a rule's counts: a form going n -> n+1 adds n pairs. The
        rule reads the URL as RuleSet hands it over (``prepared``), or else as given (a
        rule learned with a parameter in its context: RuleSet's fallback)."""
        self.seq += 1
        read = url if prepared is None else prepared
        form = cand.compiled.apply(read)
        if form is None:
            if prepared is None or prepared == url:
                return False
            read = url
            form = cand.compiled.apply(url)
            if form is None:
                return False
        rec = cand.rec
        # a form the rule gave unchanged is one it gives again: only a rewritten one is tried
        if _malformed(form, url) or (form != read and _unstable(cand.compiled, form)):
            rec.malformed += delta
        fkey = _prefix(rec) + form
        # [URLs with this form, cluster, its URLs, cluster, ...]; past _WIDE clusters the
        # pairs move into a dict, [n, {cluster: URLs}], so a rule that lumps many clusters
        # into one form (an invalid one, kept counting) costs O(1) per URL, not O(clusters)
        entry = self.vcount.get(fkey)
        if entry is None:
            entry = [0]
        n = entry[0]
        if len(entry) == 2:  # [n, {cluster: URLs}]
            wide = entry[1]
            k = wide.get(cid, 0)
        else:
            wide = None
            for at in range(1, len(entry), 2):
                if entry[at] == cid:
                    k = entry[at + 1]
                    break
            else:
                at, k = len(entry), 0
                entry += (cid, 0)
        if delta > 0:
            rec.nsupp += n
            rec.nci += k
            n, k = n + 1, k + 1
        else:
            n, k = n - 1, k - 1
            rec.nsupp -= n
            rec.nci -= k
        if n <= 0:
            self.vcount.pop(fkey)
            return True
        entry[0] = n
        if wide is not None:
            if k > 0:
                wide[cid] = k
            else:
                del wide[cid]
        elif k > 0:
            entry[at + 1] = k
            if len(entry) > 2 * _WIDE:
                entry[1:] = [dict(zip(entry[1::2], entry[2::2]))]
        else:
            del entry[at : at + 2]
        self.vcount[fkey] = entry
        return True

    def reset(self, rec: CandRec) -> None:
        """Forget a rule's counts: a new epoch for its keys (never used again: candidates.py
        keeps the epochs of dropped rules), one range delete for the old."""
        prefix = _prefix(rec)
        rec.epoch += 1
        rec.nsupp = rec.nci = rec.malformed = 0
        self.vcount.retire_prefix(prefix)


def _prefix(rec: CandRec) -> str:
    return f"{rec.id}\x1f{rec.epoch}\x00"


def _malformed(key: str, url: str) -> bool:
    """A key with an empty path segment its URL did not have ("/a//b" from dropping an
    optional segment), or an empty host label ("http://.x.com/" from a host's variant
    label written as nothing once it became a class): crawlers use keys as URLs, and
    such a URL is another resource or none."""
    if ("://." in key or ".." in key or ":///" in key) and _bad_host(key) and not _bad_host(url):
        return True
    at = key.find("//")
    if key.find("//", at + 2 if at >= 0 else 0) < 0:
        return False  # no "//" past the scheme's: none in the path (most keys, quickly)
    return "//" in _path(key) and "//" not in _path(url)


def _unstable(rule: CompiledRule, key: str) -> bool:
    """A key the rule itself would rewrite again: crawlers keep keys and canonicalize them
    again when rules change, and a key must then stay what it is (a lazy capture before
    an optional class, ``(.+?)(?:-[a-z]+-[a-z]+)?``, drops two words per pass)."""
    again = rule.apply(key)
    return again is not None and again != key and light_normalize(again) != light_normalize(key)


def _bad_host(url: str) -> bool:
    """An empty host or an empty label in it."""
    start = url.find("//") + 2
    end = start
    while end < len(url) and url[end] not in "/?#":
        end += 1
    host = url[start:end].rpartition("@")[2].partition(":")[0]
    return not host or host[0] == "." or ".." in host


def _path(url: str) -> str:
    start = url.find("/", url.find("//") + 2)
    if start < 0:
        return ""
    end = url.find("?", start)
    return url[start:] if end < 0 else url[start:end]


# an alternation group of literal values, as induction writes them (re.escape'd)
_LITERAL = r"(?:\\[^0-9A-Za-z|]|[^\\()|\[\]*+?.{}^$])+"
_GROUP = re.compile(r"\(\?:(" + _LITERAL + r"(?:\|" + _LITERAL + r")*)\)")
_ESCAPED = re.compile(r"\\(.)")
_NOT_A_GROUP = re.compile(r"\(\?[^:]")  # inline flags, lookarounds: matching not by literals


def changed_literals(old: str, new: str) -> tuple[str, ...] | None:
    """The literal values added to or dropped from alternation groups between two
    contexts that differ in nothing else (None otherwise), each unescaped.

    A URL that holds none of them is matched alike by both: an alternative can only match
    where its literal occurs, and the alternatives both share keep their order, so the
    regex tries the same ones in the same order and finds the same groups."""
    if _NOT_A_GROUP.search(old) or _NOT_A_GROUP.search(new):
        return None
    olds, news = _GROUP.findall(old), _GROUP.findall(new)
    if len(olds) != len(news) or _GROUP.sub("\x00", old) != _GROUP.sub("\x00", new):
        return None
    changed: set[str] = set()
    for a, b in zip(olds, news):
        if a == b:
            continue
        xs, ys = a.split("|"), b.split("|")
        both = set(xs) & set(ys)
        if [x for x in xs if x in both] != [y for y in ys if y in both]:
            return None
        changed.update(set(xs) ^ set(ys))
    if not changed or "" in changed:
        return None
    return tuple(sorted(_ESCAPED.sub(r"\1", x) for x in changed))
