"""A discrete-event simulation of one continuous-batching replica (vLLM V1-style scheduler).

Requests arrive (all at once, in a closed loop of ``concurrency``, or by Poisson arrivals seeded for
determinism), pass the front end one at a time (``request_overhead_s`` each: HTTP, tokenising), and
wait in a FIFO queue. Each step the scheduler, like vLLM V1's:

1. gives every decoding sequence its next token, preempting the most recently admitted sequence
   (recompute: it goes back to the queue's head with its prompt and generated tokens as the new
   prompt) while the paged KV cache cannot hold the step's new tokens;
2. continues chunked prefills, then admits queued requests, while the step's token budget
   (``max_num_batched_tokens``), ``max_num_seqs`` and the free KV blocks allow;
3. runs the step for the time :class:`~solver.engine.step_cost.StepCost` gives it; a prompt whose
   last chunk ran emits its first token at the step's end, each decoding sequence one token.

Decoding sequences are held as events (the step each finishes), and their contexts as one running
sum, so a step costs O(log n) however many sequences decode. The result reports throughput over the
measured requests (the first :data:`WARMUP_SHARE` of arrivals are left out of a stream's latencies)
and TTFT, TPOT and end-to-end latency percentiles.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from typing import Final, NamedTuple

import numpy as np

from solver.engine.step_cost import StepCost, StepShape

__all__ = ["ADMISSION_WATERMARK", "WARMUP_SHARE", "Replica", "SimulatedRequest", "simulate"]

ADMISSION_WATERMARK: Final = 0.01
"""Share of the KV cache kept free when admitting (vLLM's block-manager watermark, 1 %), so a newly
admitted prompt does not force a preemption at the next decode step."""
_VECTOR_STEPS: Final = 48
"""Fast-forwards of at least this many steps are priced with numpy (below, a loop is faster)."""
WARMUP_SHARE: Final = 0.1
"""Share of a stream's first requests whose latencies are not measured (the queue fills up first)."""


class Replica(NamedTuple):
    """One replica's scheduler limits and step costs."""

    cost: StepCost
    kv_capacity_tokens: int
    token_budget: int
    max_seqs: int
    block_tokens: int
    request_overhead_s: float
    reserve_output: bool = False
    """Admit a request only with KV room for its whole output too (TensorRT-LLM's default
    ``GUARANTEED_NO_EVICT``); otherwise admit on its prompt and preempt when the cache fills (vLLM)."""


class SimulatedRequest(NamedTuple):
    """One request's life: when it arrived, produced its first token and finished."""

    arrival: float
    first_token: float
    finish: float
    output_tokens: int


class _Seq:
    """A request in the engine (mutable: its prefill progress, tokens emitted, decode bookkeeping)."""

    __slots__ = (
        "arrival",
        "done",
        "emitted",
        "first",
        "index",
        "output",
        "prompt",
        "ready",
        "start_step",
        "total",
    )

    def __init__(self, index: int, arrival: float, ready: float, prompt: int, output: int) -> None:
        self.index, self.arrival, self.ready = index, arrival, ready
        self.prompt, self.output, self.total = prompt, output, output
        self.done, self.emitted, self.start_step = 0, 0, 0
        self.first = math.nan

    def context(self, step: int) -> int:
        """Tokens in its KV cache while decoding at ``step``."""
        return self.prompt + self.emitted + (step - self.start_step)


def _held_while_prefilling(replica: Replica, seq: _Seq) -> int:
    """KV tokens ``seq`` holds from its admission until its prefill ends (its prompt, a block, and its
    whole output where outputs are reserved)."""
    extra = seq.output if replica.reserve_output else 0
    return seq.prompt + extra + replica.block_tokens


class _Batch:
    """The prefill chunks of one step, within its token budget; a request is admitted only when the
    free KV cache holds its whole prompt (and, reserving outputs, its output)."""

    def __init__(self, budget: int, free: int, replica: Replica) -> None:
        self.budget, self.free, self.replica = budget, free, replica
        self.chunked: list[tuple[_Seq, int]] = []
        self.tokens = self.done = 0
        self.attention = self.prefix = 0.0

    def need(self, seq: _Seq) -> int:
        return _held_while_prefilling(self.replica, seq)

    def room(self, seq: _Seq) -> bool:
        """Whether ``seq`` can be admitted in this step."""
        return self.budget > 0 and self.free >= self.need(seq)

    def admit(self, seq: _Seq) -> None:
        self.free -= self.need(seq)
        self.take(seq)

    def take(self, seq: _Seq) -> None:
        chunk = min(seq.prompt - seq.done, self.budget)
        if chunk <= 0:
            return
        self.budget -= chunk
        self.tokens += chunk
        self.attention += chunk * (seq.done + (chunk + 1) / 2)
        self.prefix += seq.done + chunk
        self.done += seq.done + chunk == seq.prompt
        self.chunked.append((seq, chunk))


class _Engine:
    """The simulation's state and its steps (module docstring)."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica
        self.now, self.step = 0.0, 0
        self.queue: deque[_Seq] = deque()
        self.prefilling: list[_Seq] = []
        self.decoding: dict[int, _Seq] = {}
        self.finishing: list[tuple[int, int]] = []  # (step it finishes at, index)
        self.order: list[int] = []  # decoding indices in admission order (stale entries skipped)
        self.decode_context = 0
        self.held_by_prefills = 0  # KV reserved by admitted prompts (and outputs) still prefilling
        self.decode_remaining = 0  # outputs still to come of decoding sequences (reserving outputs)
        self.finished: list[tuple[_Seq, float]] = []
        self.chunked: list[tuple[_Seq, int]] = []

    def kv_used(self) -> int:
        blocks = self.replica.block_tokens / 2 * len(self.decoding)
        return int(self.decode_context + self.decode_remaining + self.held_by_prefills + blocks)

    def _preempt_last(self) -> None:
        while self.order:
            index = self.order.pop()
            seq = self.decoding.pop(index, None)
            if seq is None:
                continue
            generated = seq.emitted + (self.step - seq.start_step)
            self.decode_context -= seq.context(self.step)
            seq.prompt, seq.output = seq.prompt + generated, seq.output - generated
            seq.emitted, seq.done = 0, 0
            self.queue.appendleft(seq)
            return

    def _schedule(self) -> StepShape:
        replica = self.replica
        preempted = False
        while self.decoding and self.kv_used() + len(self.decoding) > replica.kv_capacity_tokens:
            self._preempt_last()
            preempted = True
        batch = _Batch(replica.token_budget - len(self.decoding), self._free_for_admission(), replica)
        for seq in self.prefilling:
            batch.take(seq)
        while (
            not preempted  # as vLLM V1: a step that preempts admits nothing
            and self.queue
            and self.queue[0].ready <= self.now
            and batch.room(self.queue[0])
            and (len(self.decoding) + len(self.prefilling) < replica.max_seqs)
        ):
            seq = self.queue.popleft()
            self.prefilling.append(seq)
            self.held_by_prefills += batch.need(seq)
            batch.admit(seq)
        self.chunked = batch.chunked
        return StepShape(len(self.decoding), float(self.decode_context), batch.tokens, batch.attention,
                         batch.prefix, len(batch.chunked), batch.done)  # fmt: skip

    def _advance(self) -> None:
        """The step ran: tokens emitted, prompts done, sequences finished."""
        self.decode_context += len(self.decoding)
        if self.replica.reserve_output:
            self.decode_remaining -= len(self.decoding)
        for seq, chunk in self.chunked:
            seq.done += chunk
            if seq.done < seq.prompt:
                continue
            self.prefilling.remove(seq)
            self.held_by_prefills -= _held_while_prefilling(self.replica, seq)
            if math.isnan(seq.first):
                seq.first = self.now
            seq.emitted, seq.start_step = 1, self.step
            if seq.output <= 1:
                self.finished.append((seq, self.now))
                continue
            self.decoding[seq.index] = seq
            self.order.append(seq.index)
            self.decode_context += seq.context(self.step)
            if self.replica.reserve_output:
                self.decode_remaining += seq.output - 1
            heapq.heappush(self.finishing, (self.step + seq.output - 1, seq.index))
        while self.finishing and self.finishing[0][0] <= self.step:
            _, index = heapq.heappop(self.finishing)
            ending = self.decoding.get(index)
            if ending is None or ending.start_step + ending.output - 1 != self.step:
                continue  # preempted since (its new finish step is queued separately)
            del self.decoding[index]
            self.decode_context -= ending.context(self.step)
            self.finished.append((ending, self.now))

    def _free_for_admission(self) -> int:
        """KV tokens a new prompt may take now: the cache less what is held, this step's decode tokens
        and the admission watermark."""
        capacity = self.replica.kv_capacity_tokens
        return capacity - self.kv_used() - len(self.decoding) - int(ADMISSION_WATERMARK * capacity)

    def _admissible(self) -> bool:
        """Whether the queue's head could be admitted in a step now (ready or not)."""
        replica, head = self.replica, self.queue[0]
        if len(self.decoding) + len(self.prefilling) >= replica.max_seqs:
            return False
        if replica.token_budget <= len(self.decoding):
            return False
        return self._free_for_admission() >= _held_while_prefilling(replica, head)

    def fast_forward(self, until: float) -> None:
        """Run pure decode steps up to the step before the next finish, while nothing can be admitted
        (or nothing arrives before ``until``) and the cache needs no preemption: the same steps
        :meth:`run_step` would run, without scheduling each."""
        if self.prefilling or not self.decoding or not self.finishing:
            return
        if self.queue and self._admissible():
            until = min(until, self.queue[0].ready)
        elif self.queue:
            until = math.inf  # the head waits for a finish whatever arrives
        decodes = len(self.decoding)
        steps = self.finishing[0][0] - self.step - 1
        if not self.replica.reserve_output:
            room = self.replica.kv_capacity_tokens - self.kv_used() - decodes
            steps = min(steps, room // decodes)
        if steps <= 0 or self.now >= until:
            return
        if steps < _VECTOR_STEPS:
            self._decode_steps(decodes, steps, until)
            return
        contexts = self.decode_context + decodes * np.arange(steps, dtype=np.float64)
        ends = self.now + np.cumsum(self.replica.cost.decode_seconds(decodes, contexts))
        # run the steps that start before ``until``: each step whose predecessor ended before it
        taken = min(int(np.searchsorted(ends, until, side="left")) + 1, steps)
        self.now = float(ends[taken - 1])
        self.step += taken
        self.decode_context += decodes * taken
        if self.replica.reserve_output:
            self.decode_remaining -= decodes * taken

    def _decode_steps(self, decodes: int, steps: int, until: float) -> None:
        seconds = self.replica.cost.seconds
        for _ in range(steps):
            if self.now >= until:
                return
            self.now += seconds(StepShape(decodes, float(self.decode_context)))
            self.step += 1
            self.decode_context += decodes
            if self.replica.reserve_output:
                self.decode_remaining -= decodes

    def run_step(self) -> bool:
        """Schedule and run one step; ``False`` when nothing could run now."""
        shape = self._schedule()
        if shape.decodes == 0 and shape.prefill_tokens == 0:
            return False
        self.now += self.replica.cost.seconds(shape)
        self.step += 1
        self._advance()
        return True


def _arrivals(load: str, value: float, requests: int, seed: int) -> list[float]:
    if load == "requests_per_s":
        rng = random.Random(seed)
        times, now = [], 0.0
        for _ in range(requests):
            now += rng.expovariate(value)
            times.append(now)
        return times
    return [0.0] * (requests if load == "offline" else min(int(value), requests))


def simulate(
    replica: Replica,
    sizes: list[tuple[int, int]],
    *,
    load: str,
    value: float,
    requests: int,
    seed: int = 0,
) -> list[SimulatedRequest]:
    """Run ``requests`` requests whose (prompt, output) sizes cycle through ``sizes`` under ``load``
    (``offline``, ``concurrency`` with ``value`` in flight, ``requests_per_s`` at rate ``value``);
    the finished requests in arrival order."""
    largest = max(prompt + output for prompt, output in sizes)
    if largest + replica.block_tokens > replica.kv_capacity_tokens:
        raise ValueError(
            f"a request of {largest} tokens does not fit the {replica.kv_capacity_tokens}-token KV cache"
        )
    engine = _Engine(replica)
    arrivals = deque(_arrivals(load, value, requests, seed))
    front_free, issued = 0.0, 0

    def issue(at: float) -> None:
        nonlocal front_free, issued
        prompt, output = sizes[issued % len(sizes)]
        front_free = max(at, front_free) + replica.request_overhead_s
        engine.queue.append(_Seq(issued, at, front_free, prompt, output))
        issued += 1

    while len(engine.finished) < requests:
        while arrivals and arrivals[0] <= engine.now:
            issue(arrivals.popleft())
        engine.fast_forward(arrivals[0] if arrivals else math.inf)
        while arrivals and arrivals[0] <= engine.now:
            issue(arrivals.popleft())
        seen = len(engine.finished)
        if not engine.run_step():
            upcoming = min([s.ready for s in engine.queue if s.ready > engine.now]
                           + [arrivals[0] if arrivals else math.inf])  # fmt: skip
            if not math.isfinite(upcoming):
                break  # nothing in flight, nothing to come: every request that can run has run
            engine.now = upcoming
            continue
        if load == "concurrency":
            for _seq, finish in engine.finished[seen:]:
                if issued < requests:
                    issue(finish)
    done = sorted(engine.finished, key=lambda pair: pair[0].index)
    return [SimulatedRequest(s.arrival, s.first, t, s.total) for s, t in done]
