"""The pages topic in batches: what Faust's consumer fetched for a partition, as one list
of messages, queued for the learn loop (``faust_compat.batch_topic`` hands them over).

Faust keeps such a queue per agent, one event at a time; this one holds a fetch per
entry. The fetch loop never waits on it, so the merge's partials and the changelogs of a
recovery keep flowing while the learner is busy; a partition with more than twice
``max_bytes`` (a fetch's worth) waiting is left out of fetches until the learner has
taken it below one (Faust's own buffer-full pause). Batches fetched before a rebalance are dropped: after one, Faust
seeks every partition back to its committed offset, which never passes a checkpoint, so
they come again. A partition waiting at a replay round (rounds.py) is ``hold``-ed out of
fetches until ``release``; ``kick`` wakes the learn loop when a round's counts arrive.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque

MESSAGE_OVERHEAD = 200  # bytes counted per message besides its value: the objects around it


class PageBatches:
    def __init__(self, app, max_bytes: int, on_pause=lambda: None):
        self.app = app
        self.on_pause = on_pause
        self.high, self.low = 2 * max_bytes, max_bytes
        self._queue: deque = deque()  # (consumer generation, tp, messages, bytes)
        self._ready = asyncio.Event()
        self._bytes: Counter = Counter()  # tp -> bytes waiting
        self._paused: set = set()
        self._held: set = set()  # partitions waiting at a round: paused whatever they buffer

    def put(self, tp, messages: list) -> None:
        """The consumer's sink: a partition's messages of one fetch, in offset order."""
        size = sum(len(m.value or b"") for m in messages) + MESSAGE_OVERHEAD * len(messages)
        self._queue.append((self.app.consumer_generation_id, tp, messages, size))
        self._bytes[tp] += size
        if self._bytes[tp] > self.high and tp not in self._paused:
            self._paused.add(tp)
            self.app.consumer.on_buffer_full(tp)
            self.on_pause()
        self._ready.set()

    async def get(self) -> tuple[int, int, list]:
        """The next batch of the current consumer generation: (generation, partition,
        messages)."""
        while True:
            while not self._queue:
                self._ready.clear()
                await self._ready.wait()
            generation, tp, messages, size = self._queue.popleft()
            if tp is None:  # kick
                return self.app.consumer_generation_id, -1, []
            self._bytes[tp] -= size
            if tp in self._paused and tp not in self._held and self._bytes[tp] <= self.low:
                self._paused.discard(tp)
                self.app.consumer.on_buffer_drop(tp)
            if self.current(generation):
                return generation, tp.partition, messages

    def hold(self, tp) -> None:
        """Leave ``tp`` out of fetches until ``release``: its learner waits at a round."""
        if tp in self._held:
            return
        self._held.add(tp)
        if tp not in self._paused:
            self._paused.add(tp)
            self.app.consumer.on_buffer_full(tp)

    def release(self, tp) -> None:
        self._held.discard(tp)
        if tp in self._paused and self._bytes[tp] <= self.low:
            self._paused.discard(tp)
            self.app.consumer.on_buffer_drop(tp)

    def kick(self) -> None:
        """Wake ``get``: it returns partition -1 with no messages (thread-safe through
        ``loop.call_soon_threadsafe``)."""
        self._queue.append((None, None, [], 0))
        self._ready.set()

    def current(self, generation: int) -> bool:
        """Whether a batch of ``generation`` may still be learned (no rebalance since)."""
        return generation == self.app.consumer_generation_id

    def clear(self) -> None:
        """Partitions revoked: what waits would be fetched again after the rebalance (the
        consumer's paused partitions are reset by Faust's assignment)."""
        self._queue.clear()
        self._bytes.clear()
        self._paused.clear()
        self._held.clear()

    def __len__(self) -> int:
        return sum(len(m) for _, _, m, _ in self._queue)
