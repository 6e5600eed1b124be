"""Measured training runs as the jobs they were: the cluster a row's source states is the one predicted."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from service.db.seed_files import read_seed_catalog
from solver.throughput import measured_runs
from solver.throughput.calibration import ProfileIndex
from solver.throughput.class_rows import stated_node_gbps
from solver.throughput.estimate import ThroughputEstimate
from solver.throughput.measured_runs import run_topology
from solver.throughput.observations import Observation


@functools.cache
def _index() -> ProfileIndex:
    catalog = read_seed_catalog()
    return ProfileIndex(catalog.profiles.items, {gpu.gpu_id: gpu for gpu in catalog.gpus})


def _runs(source: str, gpu_id: str) -> list[Observation]:
    return [
        obs
        for obs in _index().observations
        if obs.profile.source.startswith(source) and obs.profile.gpu_id == gpu_id and obs.multinode
    ]


def test_a_run_keeps_the_network_its_source_states() -> None:
    """The PyTorch FSDP blog's H100 cluster had 800 Gbit/s between nodes and its A100 cluster 400
    (Table 1's text): a quarter and an eighth of the 8 × 400 Gbit/s a DGX H100 node has, which is what
    such rows were predicted on before."""
    h100 = _runs("pytorch/pytorch.github.io", "h100-sxm")
    a100 = _runs("pytorch/pytorch.github.io", "a100-80gb-sxm")
    assert h100 and a100
    assert {run_topology(obs).network.gbps for obs in h100} == {800.0}
    assert {run_topology(obs).network.gbps for obs in a100} == {400.0}
    mosaic = _runs("mosaicml/llm-foundry", "a100-80gb-sxm")
    assert mosaic and {run_topology(obs).network.gbps for obs in mosaic} == {1600.0}  # "1600 Gbps (RoCE)"


def test_a_run_whose_source_states_no_network_gets_400_gbit_per_gpu() -> None:
    megatron = _runs("NVIDIA/Megatron-LM", "h100-sxm")
    assert megatron and all(stated_node_gbps(obs.profile.notes) is None for obs in megatron)
    assert {run_topology(obs).network.gbps for obs in megatron} == {3200.0}
    assert stated_node_gbps("stack=optimized; node_gbps=800; mbs=2") == 800.0
    assert stated_node_gbps("stack=optimized; node_gbps=fast") is None


def test_the_term_at_scale_is_fitted_on_what_the_model_makes_of_each_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each at-scale run is compared with the class and step models' answer, never with a measured
    profile: NeMo's table lists GPT-3 175B on 512 H100 in two releases, and with only the run itself
    hidden each answered the other, a ratio near 1 that pulled the term toward no loss."""
    routes: list[str] = []
    original = measured_runs.predict_run

    def recording(*args: Any, **kwargs: Any) -> ThroughputEstimate | None:
        found = original(*args, **kwargs)
        if found is not None:
            routes.append(found.route)
        return found

    monkeypatch.setattr(measured_runs, "predict_run", recording)
    term = measured_runs.scale_term(_index(), frozenset({-1}))  # a key of its own: fitted afresh
    assert term.rows == len(routes) >= 10 and set(routes) == {"class_model"}
