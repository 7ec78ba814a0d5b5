"""The window's append-only logs (state/chunklog.py): what a checkpoint writes, and that a
log reads the same whatever its chunk boundaries."""

from dustonline.state.chunklog import CHUNK, SEAL, ChunkLog
from dustonline.state.store import memory_store


def _log():
    store = memory_store()
    return store, store.table("log", keep=False, flush_at=100_000)


def _entries(log: ChunkLog, group: str) -> list:
    return [e for _g, _k, items in log.chunks(group) for e in items]


def test_a_checkpoint_writes_only_the_open_chunks_that_changed():
    """Rewriting every open chunk at every checkpoint was half of what a worker sent to its
    changelog: a site's whole open chunk for the few URLs it gained."""
    store, t = _log()
    log = ChunkLog(t)
    for i in range(5):
        for g in ("a", "b", "c"):
            log.append(g, i)
    log.save()
    store.flush()
    log.append("b", 5)
    log.save()
    assert [k.partition("\x00")[0] for k in t._pending] == ["b"]


def test_a_checkpoint_closes_a_chunk_once_it_holds_enough_to_not_rewrite_it():
    store, t = _log()
    log = ChunkLog(t)
    for i in range(SEAL):
        log.append("a", i)
    log.save()
    store.flush()
    log.append("a", SEAL)
    log.save()
    written = list(t._pending.items())
    assert written == [("a\x00" + f"{1:010d}", [SEAL])]  # the closed chunk is not written again


def test_a_log_reads_the_same_whatever_its_chunk_boundaries_and_after_a_restore():
    """Checkpoints at different points give different chunks; readers, the bound that
    triggers compaction, and a log restored from the checkpoint's state see one log."""
    logs = []
    for every in (0, 7, SEAL + 3):
        store, t = _log()
        log = ChunkLog(t)
        for i in range(CHUNK + 2 * SEAL + 5):
            log.append("site", [i, f"u{i}"])
            if every and i % every == every - 1:
                log.save()
        log.save()
        again = ChunkLog(t, log.state())
        assert again.bound("site") == log.bound("site") == CHUNK + 2 * SEAL + 5
        again.append("site", [-1, "last"])
        logs.append(_entries(again, "site"))
    assert logs[0] == logs[1] == logs[2]
    assert logs[0][0] == [0, "u0"] and logs[0][-1] == [-1, "last"]


def test_a_log_saved_before_the_entry_count_was_kept_is_read_back():
    store, t = _log()
    log = ChunkLog(t)
    for i in range(CHUNK + 3):
        log.append("g", i)
    log.save()
    old_state = {g: no for g, (no, _n) in log.state().items()}  # a bare chunk number
    again = ChunkLog(t, old_state)
    assert _entries(again, "g") == list(range(CHUNK + 3))
    assert again.bound("g") >= CHUNK + 3
