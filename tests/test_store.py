"""The state layer: write buffer, read cache and their policies, on both backends."""

import msgspec
import pytest

from dustonline.events.event import FetchEvent
from dustonline.learner.clusters import MAX_PER_BLOCK, ClusterIndex, _find8
from dustonline.state import keyfilter
from dustonline.state.keyfilter import KeyFilter
from dustonline.state.store import _Backend, memory_store, rocks_store


class Rec(msgspec.Struct, array_like=True):
    n: int
    tags: list[str] = []


@pytest.fixture(params=["memory", "rocks"])
def store(request, tmp_path):
    s = memory_store(8) if request.param == "memory" else rocks_store(tmp_path / "db", cache_entries=8)
    yield s
    s.close()


def test_reads_see_buffered_writes_and_deletes(store):
    t = store.table("t")
    t["a"] = [1]
    assert t.get("a") == [1] and "a" in t
    del t["a"]
    assert t.get("a") is None and "a" not in t
    t["b"] = 2
    t.flush()
    assert t["b"] == 2 and t.pop("b") == 2 and t.get("b", "gone") == "gone"


def test_a_read_after_a_write_sees_it_whether_the_cache_kept_it_or_not(store):
    """The read cache is read first and holds pending writes too: a key read (and cached)
    as missing, then written, reads as written; a pending write the cache evicted still
    reads from the pending buffer; a delete reads as missing."""
    t = store.table("w", flush_at=1000)
    assert t.get("x") is None  # cached as missing
    t["x"] = [1]
    assert t.get("x") == [1]
    for i in range(20):  # the cache (8 entries) evicts "x", still pending
        assert t.get(f"m{i}") is None
    assert "x" not in t._cache and t.get("x") == [1]
    t["x"] = [2]
    del t["y"]
    assert t.get("x") == [2] and t.get("y") is None
    t.flush()
    assert t.get("x") == [2] and "y" not in t


def test_a_retired_prefix_is_deleted_with_its_pending_writes_at_the_next_flush(store):
    """A count epoch left behind: written before and after its last flush, gone once the
    next flush has run; other keys, pending or stored, stay."""
    t = store.table("v", keep=False)
    t["r\x1f0\x00a"], t["r\x1f0\x00b"], t["r\x1f1\x00a"] = 1, 2, 3
    t.flush()
    t["r\x1f0\x00c"], t["s\x1f0\x00a"] = 4, 5  # pending when it is retired
    t.retire_prefix("r\x1f0\x00")
    t["r\x1f1\x00b"] = 6
    t.flush()
    assert list(t.items()) == [("r\x1f1\x00a", 3), ("r\x1f1\x00b", 6), ("s\x1f0\x00a", 5)]


def test_uncached_table_reads_back_from_the_backend(store):
    t = store.table("u", keep=False)
    for i in range(50):
        t[f"k{i:03d}"] = [i]
    store.flush()
    assert len(t._cache) == 0 and len(t._pending) == 0
    assert t.get("k007") == [7] and len(t._cache) == 0
    assert list(t.keys("k00")) == [f"k00{i}" for i in range(10)]


def test_cache_is_bounded_and_evicted_entries_come_back(store):
    t = store.table("c")
    for i in range(100):
        t[f"k{i:03d}"] = i
    store.flush()
    for i in range(100):
        assert t.get(f"k{i:03d}") == i
    assert len(t._cache) <= 8


@pytest.mark.parametrize("kind", ["memory", "rocks"])
def test_cache_is_bounded_in_stored_bytes_too(kind, tmp_path):
    """At 1M events four tables' caches at 200,000 entries held most of 1.6 GiB: a
    cluster's parameter observations are 700 bytes stored, a count 100. ``cache_mib``
    bounds each cache by its entries' stored size, so large entries are cached fewer."""
    s = memory_store(100_000, cache_mib=0.25) if kind == "memory" else rocks_store(tmp_path, 100_000, cache_mib=0.25)
    big, small = s.table("big"), s.table("small")
    for i in range(2000):
        big[f"k{i:04d}"] = "x" * 2000
        small[f"k{i:04d}"] = i
    s.flush()
    for i in range(2000):  # read back: misses come from the backend and are cached
        assert big.get(f"k{i:04d}") == "x" * 2000 and small.get(f"k{i:04d}") == i
    assert len(big._cache) <= 0.25 * 2**20 / 2000  # ~130 entries of 2 KB
    assert len(small._cache) == 2000  # 0.25 MiB holds many more small ones
    big._cache.clear()
    assert big["k0007"] == "x" * 2000
    s.close()


def test_typed_table_decodes_structs(store):
    t = store.table("typed", type=Rec)
    t["x"] = Rec(3, ["a"])
    store.flush()
    t._cache.clear()
    got = t["x"]
    assert isinstance(got, Rec) and got == Rec(3, ["a"])


def test_flush_at_coalesces_rewrites_of_hot_keys(store):
    writes = []
    real = store._b

    class Counting(_Backend):  # a subclass, not a patched method: the store may be compiled
        def get(self, key):
            return real.get(key)

        def write(self, prefix, pending, deleted, encode):
            writes.append(len(pending))
            real.write(prefix, pending, deleted, encode)

        def close(self):
            real.close()

    store._b = Counting()
    t = store.table("hot", cache_entries=4, exact_cap=True, flush_at=1000)
    for i in range(500):
        t[f"k{i % 4}"] = i
    assert writes == []  # nothing reached the backend yet: 4 pending keys
    store.flush()
    assert writes[0] == 4


def test_find8_only_matches_whole_aligned_items():
    packed = bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
    assert _find8(packed, bytes([8, 9, 10, 11, 12, 13, 14, 15])) == 8
    assert _find8(packed, bytes([1, 2, 3, 4, 5, 6, 7, 8])) == -1


def test_simhash_blocks_keep_the_newest_and_find_near_duplicates(store):
    idx = ClusterIndex(store)
    base = 0x0123_4567_89AB_CDEF
    first = idx.assign(FetchEvent(url="http://a.com/1", ts=1.0, digest="sha1:A", simhash=base))
    store.table("cluster")[first] = {"n": 1}
    # re-indexing the same simhash moves it to the end instead of duplicating it
    for i in range(MAX_PER_BLOCK + 5):
        other = base ^ (0xFFFF << 16) ^ (i << 32)  # shares block 0 with base, differs elsewhere
        idx.assign(FetchEvent(url=f"http://a.com/o{i}", ts=2.0, digest=f"sha1:O{i}", simhash=other))
    packed = idx.blocks.slots[0xCDEF]
    assert len(packed) == 8 * MAX_PER_BLOCK  # capped; base aged out of block 0
    near = idx.assign(FetchEvent(url="http://a.com/1?x", ts=3.0, digest="sha1:B", simhash=base ^ 0b111))
    assert near == first  # still found through its other three blocks


def test_simhash_blocks_come_back_after_a_reload(store):
    idx = ClusterIndex(store)
    base = 0x0123_4567_89AB_CDEF
    first = idx.assign(FetchEvent(url="http://a.com/1", ts=1.0, digest="sha1:A", simhash=base))
    store.table("cluster")[first] = {"n": 1}
    store.flush()
    again = ClusterIndex(store)  # a restarted learner: blocks come back from the store
    assert again.assign(FetchEvent(url="http://a.com/2", ts=2.0, digest="sha1:B", simhash=base ^ 0b101)) == first
    assert (
        ClusterIndex(store).assign(
            FetchEvent(url="http://a.com/3", ts=2.0, digest="sha1:C", simhash=~base & (2**64 - 1))
        )
        != first
    )


def test_rebuilt_simhash_blocks_equal_the_live_ones(store):
    """The blocks are not stored but replayed from the simhash-cluster table at open: the
    replay must give the very slots the live index had, full slots and re-adds included,
    or a restarted worker finds other near-duplicates than an uninterrupted one."""
    import random

    rnd = random.Random(7)
    idx = ClusterIndex(store)
    base = [rnd.getrandbits(64) for _ in range(30)]
    for i in range(4000):  # few block values, so slots fill up and age out
        sh = rnd.choice(base) & ~0xFFFF | rnd.randrange(40) if rnd.random() < 0.8 else rnd.choice(base)
        idx.assign(FetchEvent(url=f"http://a.com/{i}", ts=float(i), digest=f"sha1:{i}", simhash=sh))
    assert max(len(s) for s in idx.blocks.slots if s) == 8 * MAX_PER_BLOCK
    store.flush()
    again = ClusterIndex(store)
    assert again.blocks.slots == idx.blocks.slots
    assert again.adds == idx.adds


def test_simhash_blocks_stored_by_an_older_version_are_the_base_of_the_replay(store):
    """State written when the slots were stored (and simhash-cluster held bare ids) still
    opens: the stored slots are the base, later adds replay on top of them."""
    old = 0x0123_4567_89AB_CDEF
    store.table("simhash")["0:cdef"] = old.to_bytes(8, "little")
    store.table("simhash-cluster")[f"{old:016x}"] = "d:OLD"
    store.table("cluster")["d:OLD"] = {"n": 1}
    store.flush()
    idx = ClusterIndex(store)
    assert idx.assign(FetchEvent(url="http://a.com/2", ts=2.0, digest="sha1:B", simhash=old ^ (0b11 << 20))) == "d:OLD"
    store.flush()
    assert ClusterIndex(store).blocks.slots == idx.blocks.slots


def test_key_filter_has_no_false_negatives_and_few_false_positives(monkeypatch):
    monkeypatch.setattr(keyfilter, "MIN_CAPACITY", 1_000)
    f = KeyFilter(50_000)
    keys = [f"http://site{i % 97}.com/p/{i}" for i in range(50_000)]
    assert all(f.add(k) for k in keys)
    assert all(k in f for k in keys)
    fp = sum(f"http://other.org/{i}" in f for i in range(50_000)) / 50_000
    assert fp < 0.03
    more = [f.add(f"http://more.org/{i}") for i in range(60_000)]
    assert more[0] and f.n > f.capacity and not all(more)  # past its capacity it asks to be rebuilt


def test_filtered_table_finds_every_key_across_rebuilds_and_reopen(tmp_path, monkeypatch):
    """The filter grows by rebuilding from the store; a key it drops would read as
    missing, so every key written must still be found, also after deletes and a reopen."""
    monkeypatch.setattr(keyfilter, "MIN_CAPACITY", 2_000)
    s = rocks_store(tmp_path)
    t = s.table("f", filtered=True)
    n = 50_000  # rebuilds at 2,000, 8,000 and 32,000 keys
    for i in range(n):
        t[f"k{i}"] = i
    for i in range(0, n, 3):
        del t[f"k{i}"]
    assert all(t.get(f"k{i}") == (None if i % 3 == 0 else i) for i in range(n))
    assert t.get("never-written") is None
    s.close()
    s = rocks_store(tmp_path)
    t = s.table("f", filtered=True)
    assert all(t.get(f"k{i}") == (None if i % 3 == 0 else i) for i in range(0, n, 7))
    s.close()


def test_native_and_python_simhash_blocks_agree():
    """The C twins of SimhashBlocks.add/near keep the same packed slots and find the
    same neighbours: re-adds move to the end, full slots drop their oldest entries."""
    import random

    from dustonline.learner import clusters as C

    if C._native is None:
        pytest.skip("C kernels not built (DUSTONLINE_PURE_PYTHON or no compiler)")
    rnd = random.Random(5)
    a = C.SimhashBlocks()
    b = C.SimhashBlocks()
    base = [rnd.getrandbits(64) for _ in range(40)]
    for _ in range(3000):
        sh = rnd.choice(base) ^ (1 << rnd.randrange(64)) if rnd.random() < 0.7 else rnd.choice(base)
        slots = C.SimhashBlocks.slots_of(sh)
        assert C._native.near(a.slots, slots, sh, 3) == b.near_py(sh, slots, 3)
        C._native.add(a.slots, slots, sh, C.MAX_PER_BLOCK)
        b.add_py(sh, slots)
        assert [a.slots[i] for i in slots] == [b.slots[i] for i in slots]
    assert max(len(s) for s in a.slots if s) == 8 * C.MAX_PER_BLOCK  # slots filled up


def test_host_urls_stay_within_their_cap_as_urls_arrive():
    """The validation URLs of each host are bounded when a host is loaded and as URLs
    arrive (at 1M events they were 940,000, 200 MiB, against a cap of 200,000); a host
    dropped is loaded again, whole, from the URL table."""
    from dustonline.learner.hosturls import HostURLs
    from dustonline.learner.records import URLRec

    s = memory_store()
    table = s.table("url", type=URLRec)
    hu = HostURLs(table, cap=10)
    assert hu.of("a.com") == {} and hu.of("b.com") == {}
    for i in range(8):
        for host in ("a.com", "b.com"):
            url = f"http://{host}/{i}"
            table[f"{host}\x00{url}"] = URLRec(f"c{i}", 0.0, i, True)
            hu.add(host, url, f"c{i}")
    assert hu.size <= 10 and hu.size == sum(len(d) for d in hu.hosts.values())
    # b.com went: a.com was used less recently, but a URL of its own was arriving
    assert list(hu.hosts) == ["a.com"]
    assert hu.of("b.com") == {f"http://b.com/{i}": f"c{i}" for i in range(8)}
    assert list(hu.hosts) == ["b.com"] and hu.size == 8


def test_a_host_loaded_again_lists_its_urls_in_arrival_order():
    """What walks a host's URLs sees one order whether the host stayed in memory or was
    dropped and loaded again (it was loaded in key order), so no result can depend on
    which hosts the cap kept."""
    from dustonline.learner.hosturls import HostURLs
    from dustonline.learner.records import URLRec

    s = memory_store()
    table = s.table("url", type=URLRec)
    hu = HostURLs(table, cap=100)
    hu.of("a.com")
    arrived = [f"http://a.com/{c}" for c in "zyxabc"]
    for seq, url in enumerate(arrived):
        table[f"a.com\x00{url}"] = URLRec(f"c{seq}", 0.0, seq, True)
        hu.add("a.com", url, f"c{seq}")
    assert list(hu.of("a.com")) == arrived
    hu.hosts.clear()
    hu.size = 0
    assert list(hu.of("a.com")) == arrived


def test_every_rocksdb_store_of_a_process_shares_one_memory_budget(tmp_path):
    """``learn --partitions N`` opens N stores: their memtables count against one write
    buffer manager (and their blocks against one cache), not N times each."""
    from dustonline.state.store import _shared_memory

    _, memtables = _shared_memory()
    a, b = rocks_store(tmp_path / "a"), rocks_store(tmp_path / "b")
    base = memtables.get_usage()
    for s in (a, b):
        t = s.table("t", keep=False)
        for i in range(2000):
            t[f"k{i:05d}"] = "x" * 500
        t.flush()
        grown, base = memtables.get_usage() - base, memtables.get_usage()
        assert grown >= 2000 * 500  # this store's memtable is counted in the shared budget
    assert memtables.get_buffer_size() == 256 << 20
    a.close()
    b.close()


def test_namespaces_share_a_backend_and_keep_their_tables_apart(tmp_path):
    """A worker's partition holds several shard learners in one store (learner/shards.py):
    each in a namespace whose tables no other sees, whose close leaves the backend open,
    and whose caches are its share of the store's."""
    root = rocks_store(tmp_path / "db", cache_entries=1000)
    a, b = root.namespace("0/", 2), root.namespace("1/", 2)
    assert a.cache_entries == b.cache_entries == 500
    a.table("t")["k"] = [1]
    b.table("t")["k"] = [2]
    root.table("t")["k"] = [3]
    a.close()  # its tables written; the backend still open for b and the root
    b.table("t")["j"] = [4]
    b.close()
    root.close()
    again = rocks_store(tmp_path / "db")
    assert again.namespace("0/").table("t").get("k") == [1]
    assert dict(again.namespace("1/").table("t").items()) == {"j": [4], "k": [2]}
    assert dict(again.table("t").items()) == {"k": [3]}
    again.close()
    with pytest.raises(ValueError, match="ends with '/'"):
        again.namespace("0")
