"""The layout search: every layout it answers fits the memory model and meets the global batch."""

from __future__ import annotations

import functools
import itertools

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.db.seed_files import read_seed_catalog
from solver.catalog.gpus import GpuSpec
from solver.memory.peak import estimate_memory
from solver.spec.workload import RECOMPUTE_CHOICES, ResolvedWorkload, Workload, resolve_workload
from solver.throughput import layout_search
from solver.throughput.calibration import ProfileIndex
from solver.throughput.estimate import Topology, class_seconds_per_unit, default_topology
from solver.throughput.global_batch import MIN_BATCH_SHARE
from solver.throughput.layout_search import (
    CacheTables,
    LayoutCache,
    LayoutChoice,
    LayoutFailure,
    search_layout,
    target_batch_tokens,
)


@functools.cache
def _catalog() -> tuple[ProfileIndex, dict[str, GpuSpec]]:
    catalog = read_seed_catalog()
    gpus = {gpu.gpu_id: gpu for gpu in catalog.gpus}
    return ProfileIndex(catalog.profiles.items, gpus), gpus


CACHE = LayoutCache()


def _job(**fields: object) -> ResolvedWorkload:
    base: dict[str, object] = {"kind": "train", "model": {"name": "Llama 3 8B"}, "seq_len": 4096}
    return resolve_workload(msgspec.convert({**base, **fields}, Workload))


def _search(
    job: ResolvedWorkload, gpu_id: str, count: int, headroom: float = 0.0
) -> LayoutChoice | LayoutFailure:
    index, gpus = _catalog()
    gpu = gpus[gpu_id]
    topology = default_topology(gpu, count, "nvswitch" if gpu.nvlink_domain > 1 else "pcie")
    return search_layout(job, gpu, count, topology, index, cache=CACHE, memory_headroom=headroom)


MODELS = ["Llama 3.2 1B", "Llama 3 8B", "Llama 3 70B", "Mistral 7B", "Qwen2.5-14B"]
GPUS = ["h100-sxm", "a100-80gb-sxm", "a100-40gb-sxm", "l40s", "rtx-4090", "b200", "h200-sxm"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(MODELS),
    gpu_id=st.sampled_from(GPUS),
    count=st.sampled_from([1, 2, 8, 16, 64, 256, 1024]),
    seq=st.sampled_from([2048, 4096, 8192]),
    kind=st.sampled_from(["train", "fine_tune"]),
    headroom=st.sampled_from([0.0, 0.1]),
    batch=st.sampled_from([None, 64, 512]),
)
def test_every_answered_layout_fits_the_memory_model(
    model: str, gpu_id: str, count: int, seq: int, kind: str, headroom: float, batch: int | None
) -> None:
    job = _job(model={"name": model}, seq_len=seq, kind=kind, batch_size=batch)
    found = _search(job, gpu_id, count, headroom)
    _, gpus = _catalog()
    capacity = gpus[gpu_id].memory_gib
    _check_edge(found, capacity, headroom)
    if isinstance(found, LayoutFailure):
        assert found.reason in ("memory", "global_batch") and found.detail
        return
    rw, layout = found.workload, found.layout
    memory = estimate_memory(rw)  # the full memory model of the answered layout, every rank
    assert memory.per_gpu_gib <= (1 - headroom) * capacity + 1e-9
    if headroom:
        assert memory.band.high_gib <= capacity + 1e-9
    assert layout.tp * layout.pp * layout.cp * layout.dp == count
    assert layout.tp <= min(8, gpus[gpu_id].nvlink_domain) or layout.tp == 1
    tokens = layout.dp * layout.micro_batch * layout.gradient_accumulation * seq
    assert tokens == layout.global_batch_tokens
    target = (batch * seq) if batch else None
    if target is not None:
        assert MIN_BATCH_SHARE * target - seq < tokens <= target  # met without exceeding it


def _check_edge(found: LayoutChoice | LayoutFailure, capacity: float, headroom: float) -> None:
    """A layout that fits only below the headroom fits the GPU's whole memory, breaks the headroom and
    beats the layout the headroom allows."""
    edge = found.edge
    if edge is None:
        return
    assert headroom > 0, "without headroom nothing fits only below it"
    memory = estimate_memory(edge.workload)
    assert memory.per_gpu_gib <= capacity + 1e-9
    assert memory.per_gpu_gib > (1 - headroom) * capacity or memory.band.high_gib > capacity
    if isinstance(found, LayoutChoice):
        assert edge.score > found.score
    else:
        assert found.reason == "memory"


def test_what_fits_only_below_the_headroom_is_kept_beside_the_choice() -> None:
    job = _job(model={"name": "Llama 3 8B"}, seq_len=8192)
    tight = _search(job, "h100-sxm", 8)
    roomy = _search(job, "h100-sxm", 8, headroom=0.3)
    assert isinstance(tight, LayoutChoice) and isinstance(roomy, LayoutChoice)
    assert tight.edge is None  # no headroom asked: nothing fits only below it
    edge = roomy.edge
    assert edge is not None and edge.score > roomy.score
    assert 0.7 * 80 < edge.memory.per_gpu_gib <= 80
    assert edge.score <= tight.score  # the search without headroom finds it, or better


def test_a_count_that_fits_only_below_the_headroom_fails_with_its_edge() -> None:
    """Llama 3 8B LoRA at micro-batch 4 on one L40S: 46.5 of 48 GiB fits, 10 % headroom does not."""
    job = _job(kind="fine_tune", method="lora", seq_len=2048, micro_batch=4, recompute="selective")
    found = _search(job, "l40s", 1, headroom=0.1)
    assert isinstance(found, LayoutFailure) and found.reason == "memory"
    assert found.edge is not None and 0.9 * 48 < found.edge.memory.per_gpu_gib <= 48
    assert isinstance(_search(job, "l40s", 1), LayoutChoice)


def test_a_405b_model_on_thousands_of_gpus_gets_pipeline_stages_that_fit() -> None:
    job = _job(model={"name": "Llama 3.1 405B"}, seq_len=8192)
    found = _search(job, "h100-sxm", 4096)
    assert isinstance(found, LayoutChoice), found
    assert found.layout.pp > 1 and found.layout.tp == 8
    assert estimate_memory(found.workload).per_gpu_gib <= 80


def test_a_count_whose_ranks_exceed_the_global_batch_is_rejected_for_it() -> None:
    job = _job(model={"name": "Llama 3.2 1B"}, global_batch_tokens=4096)  # one sequence per step
    assert isinstance(_search(job, "h100-sxm", 8), LayoutChoice)  # tp 8: one data-parallel rank
    found = _search(job, "h100-sxm", 256)  # at most tp 8 × pp 16 (its layers): 2 ranks
    assert isinstance(found, LayoutFailure) and found.reason == "global_batch"
    assert "1 sequences" in found.detail and found.field == "global_batch_tokens"


def test_a_count_that_reaches_most_of_the_batch_trains_without_exceeding_it() -> None:
    """296 B200 (37 instances) split a 70B's 331 sequences per step into 296: 89 % of the rule's
    batch, within the share the rule is defined to, so the count trains at a batch below the target."""
    job = _job(model={"name": "Llama 3.1 70B"}, seq_len=8192)
    found = _search(job, "b200", 296)
    assert isinstance(found, LayoutChoice), found
    tokens, (target, _) = found.layout.global_batch_tokens, target_batch_tokens(job)
    assert MIN_BATCH_SHARE * target <= tokens <= target


def test_stated_fields_are_held() -> None:
    job = _job(tp=2, micro_batch=2, gpu_count=16)
    found = _search(job, "h100-sxm", 16)
    assert isinstance(found, LayoutChoice)
    assert found.layout.tp == 2 and found.layout.micro_batch == 2


def test_headroom_is_traded_for_memory_before_the_edge() -> None:
    job = _job(model={"name": "Llama 3 8B"}, seq_len=8192)
    tight = _search(job, "h100-sxm", 8)
    roomy = _search(job, "h100-sxm", 8, headroom=0.3)
    assert isinstance(tight, LayoutChoice) and isinstance(roomy, LayoutChoice)
    assert roomy.memory.per_gpu_gib <= 0.7 * 80 < 80
    assert roomy.score <= tight.score


def test_a_24gb_card_takes_a_small_micro_batch_for_a_1b_pretrain() -> None:
    """The micro-batch is the search's: a 1B pretrain fits 24 GiB cards at a micro-batch that fits."""
    found = _search(_job(model={"name": "Llama 3.2 1B"}, seq_len=2048, batch_size=256), "rtx-4090", 8)
    assert isinstance(found, LayoutChoice), found
    assert found.memory.per_gpu_gib <= 24


@pytest.mark.parametrize("count", [8, 64])
def test_the_cache_answers_the_same_choice(count: int) -> None:
    job = _job()
    first = _search(job, "h100-sxm", count)
    again = _search(job, "h100-sxm", count)
    assert first is again


def test_more_checkpointing_costs_more_time_per_token() -> None:
    """Recompute, the last parallel-layout dimension: each level recomputes more of the forward pass."""
    index, gpus = _catalog()
    seconds = [
        class_seconds_per_unit(_job(recompute=level, micro_batch=2), gpus["h100-sxm"], index)
        for level in ("none", "selective", "full")
    ]
    assert seconds == sorted(seconds) and seconds[0] < seconds[-1]


@pytest.mark.parametrize(
    ("gpu_id", "count"), [("h100-sxm", 2), ("h100-sxm", 8), ("l40s", 4), ("a100-40gb-sxm", 8)]
)
def test_the_standard_stack_lays_out_data_parallel_only(gpu_id: str, count: int) -> None:
    """Transformers + PEFT has no tensor-, pipeline- or context-parallel training path: a QLoRA of a
    70B is sharded (FSDP-QLoRA) or refused, never tensor parallel (solver.catalog.stacks)."""
    qlora = _job(
        model={"name": "Llama 3 70B"}, kind="fine_tune", method="qlora", precision="nf4", seq_len=8192
    )
    assert qlora.stack == "standard"
    found = _search(qlora, gpu_id, count)
    if isinstance(found, LayoutChoice):
        assert (found.layout.tp, found.layout.pp, found.layout.cp) == (1, 1, 1)
        assert found.layout.dp == count
    optimized = _search(msgspec.structs.replace(qlora, stack="optimized"), "h100-sxm", 8)
    assert isinstance(optimized, LayoutChoice)


def test_the_optimized_stack_still_uses_model_parallelism_where_it_pays() -> None:
    job = _job(model={"name": "Llama 3 70B"}, seq_len=8192)
    found = _search(job, "h100-sxm", 64)
    assert isinstance(found, LayoutChoice)
    assert found.layout.tp * found.layout.pp * found.layout.cp > 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(MODELS),
    gpu_id=st.sampled_from(GPUS),
    count=st.sampled_from([8, 16, 64, 256]),
    seq=st.sampled_from([2048, 8192]),
)
def test_rating_in_bound_order_picks_what_rating_every_layout_picks(
    model: str, gpu_id: str, count: int, seq: int
) -> None:
    """The search stops rating once no layout's compute-and-bubble bound can beat the best: the choice
    is the first layout of the highest score among all offered, as rating every one of them gives."""
    job = _job(model={"name": model}, seq_len=seq)
    index, gpus = _catalog()
    gpu = gpus[gpu_id]
    topology = default_topology(gpu, count, "nvswitch" if gpu.nvlink_domain > 1 else "pcie")
    search = layout_search._Search(job, gpu, topology, index, LayoutCache(), 0.0, frozenset())
    offers = layout_search._enumerate(search, count).offers
    scores = [layout_search._score(search, rw)[0] for rw in offers]
    assert all(layout_search._ceiling(search, rw) >= s for rw, s in zip(offers, scores, strict=True))
    found = layout_search._fastest(search, offers)
    if max(scores, default=0.0) <= 0:
        assert found is None
        return
    assert found is not None and found.score == max(scores)
    assert found.workload == offers[scores.index(max(scores))]


@pytest.mark.parametrize("field", ["tp", "pp", "cp"])
def test_stated_layouts_differing_only_in_a_value_are_not_answered_from_one_cache_entry(field: str) -> None:
    """The same fields stated with other values is another search: one cache answered a stated cp 1
    with the layout of a stated cp 2 before (the key kept which fields were stated, not their values)."""
    index, gpus = _catalog()
    gpu, cache = gpus["h100-sxm"], LayoutCache()
    topology = default_topology(gpu, 8, "nvswitch")
    for value in (2, 1):
        stated = {"tp": 1, "pp": 1, "cp": 1, field: value}
        job = _job(seq_len=8192, micro_batch=1, gpu_count=8, **stated)
        found = search_layout(job, gpu, 8, topology, index, cache=cache)
        assert isinstance(found, LayoutChoice), found
        assert getattr(found.layout, field) == value


def test_instances_of_different_sizes_share_their_common_tensor_parallel_walks() -> None:
    """A 4-GPU instance allows tp 1, 2 and 4, which an 8-GPU instance's search already walked: the
    second search walks nothing new and answers what a search on an empty cache answers."""
    index, gpus = _catalog()
    gpu, job, cache = gpus["h100-sxm"], _job(model={"name": "Llama 3 70B"}), LayoutCache()
    eight = Topology(gpus_per_instance=8, interconnect="nvswitch")
    four = Topology(gpus_per_instance=4, interconnect="nvswitch")
    search_layout(job, gpu, 64, eight, index, cache=cache)
    walked = len(cache._tables["walks"])
    shared = search_layout(job, gpu, 64, four, index, cache=cache)
    assert len(cache._tables["walks"]) == walked
    alone = search_layout(job, gpu, 64, four, index, cache=LayoutCache())
    assert isinstance(shared, LayoutChoice) and shared == alone
    assert shared.layout.tp <= 4


def test_with_pipeline_stages_a_smaller_micro_batch_that_fills_the_pipeline_is_not_passed_over() -> None:
    """With the global batch held, a larger micro-batch leaves fewer micro-batches per step to fill
    the pipeline (bubble (p-1)/(v·m + p-1)): the choice is at least as fast as every layout of the
    stated tp and pp that fits, at every micro-batch (the search once rated only the two largest)."""
    index, gpus = _catalog()
    gpu, count = gpus["h100-sxm"], 16_384
    job = _job(model={"name": "Llama 3.1 405B"}, seq_len=8192, tp=8, pp=16, global_batch_tokens=16_777_216,
               gpu_count=count)  # fmt: skip
    topology = default_topology(gpu, count, "nvswitch")
    found = search_layout(job, gpu, count, topology, index, cache=LayoutCache())
    assert isinstance(found, LayoutChoice)
    search = layout_search._Search(job, gpu, topology, index, LayoutCache(), 0.0, frozenset())
    best = 0.0
    for cp, vpp, zero, rec in itertools.product((1, 2), (1, 2, 4), ("none", "zero1"), RECOMPUTE_CHOICES):
        shaped = layout_search._laid_out(job, count, (8, cp, 16, vpp), zero, rec)
        for micro in (1, 2, 4, 8, 16, 32, 64):
            laid = layout_search._with_micro(search, shaped, micro)
            if laid is not None and search.fits(laid):
                best = max(best, layout_search._score(search, laid)[0])
    assert found.score >= best * (1 - 1e-9)
    assert found.layout.gradient_accumulation >= 16  # enough micro-batches to fill 16 stages


def test_a_full_cache_table_drops_its_older_half_not_everything() -> None:
    """Clearing a full table made every workload's next plan cold at once; now what the latest plans
    worked out stays (the first-inserted half goes)."""

    class Tables(CacheTables):
        TABLES = ("t",)

    tables, computed = Tables(max_entries=4), []
    for key in range(5):
        tables.get("t", key, lambda k=key: computed.append(k) or k * 10)
    assert computed == [0, 1, 2, 3, 4] and len(tables) == 3  # 0 and 1 dropped when 4 came in
    assert [tables.get("t", key, lambda: -1) for key in (2, 3, 4)] == [20, 30, 40]  # kept, not recomputed
    assert tables.get("t", 0, lambda: -1) == -1  # dropped: computed again
