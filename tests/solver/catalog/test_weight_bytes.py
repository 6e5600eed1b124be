"""One table of stored-weight bytes for the memory model and the serving engine (issue 23 leftovers:
the engine read AWQ/GPTQ int4 at 4.5 bits where the memory model read 4.25)."""

from __future__ import annotations

import msgspec
import pytest

from service.db.seed_files import read_seed_catalog
from solver.catalog.models import lookup_model
from solver.catalog.precisions import WEIGHT_BYTES, weight_bytes_per_param
from solver.engine import ServingSetup
from solver.memory.model_state import weight_bytes
from solver.spec.workload import Workload, resolve_workload
from solver.throughput.calibration import ProfileIndex


def test_int4_is_awq_gptq_with_its_group_scales() -> None:
    assert weight_bytes_per_param("int4") == 4.25 / 8  # 4 bits + 16-bit scale and 4-bit zero per 128
    assert weight_bytes_per_param("nf4") == weight_bytes_per_param("fp4") == 4.5 / 8
    assert WEIGHT_BYTES["bf16"] == WEIGHT_BYTES["fp16"] == 2.0


@pytest.mark.parametrize("precision", ["bf16", "fp8", "int8", "int4"])
def test_the_engine_holds_the_weights_the_memory_model_counts(precision: str) -> None:
    """Llama 3.1 8B: the memory model keeps its embedding and head at 16 bits; the engine stores every
    weight at the precision. Beside that, both read the same bytes per weight."""
    body = {"kind": "serving", "model": {"name": "Llama 3.1 8B"}, "precision": precision}
    workload = resolve_workload(msgspec.convert(body, Workload))
    arch = lookup_model("Llama 3.1 8B")
    seed = read_seed_catalog()
    gpus = {gpu.gpu_id: gpu for gpu in seed.gpus}
    hardware = ProfileIndex(seed.profiles.items, gpus).hardware("h100-sxm")
    setup = ServingSetup(arch=arch, gpu=gpus["h100-sxm"], hardware=hardware, precision=precision)
    cost = setup.replica(1).cost
    engine_bytes = cost.dense_bytes + cost.expert_bytes
    embeddings = float(arch.embedding_params)
    per_weight = weight_bytes_per_param(precision)
    assert engine_bytes == pytest.approx(arch.params_b * 1e9 * per_weight)
    assert weight_bytes(workload) == pytest.approx(engine_bytes + embeddings * (2.0 - per_weight))
