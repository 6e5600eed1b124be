"""A continuous-batching serving engine, simulated: what one replica does at a load.

The face of ``solver.engine``: the engines' profiles, the replica builder, the step-cost roofline,
the simulation and its results."""

from solver.engine.capacity import (
    BISECTIONS,
    MAX_UTILIZATION,
    SLO_REQUESTS,
    engine_capacity,
    replica_capacity,
    saturated_rate,
)
from solver.engine.latency import MIN_SIMULATED_RATE, latency_at
from solver.engine.load import STEP_BUDGET, request_count, run_load, sizes_of
from solver.engine.profiles import ENGINE_PROFILES, ENGINES, Engine, EngineProfile, engine_profile
from solver.engine.replica import (
    RUNTIME_RESERVE_GIB,
    KvCache,
    build_replica,
    kv_element_bytes,
    weight_bytes_per_param,
)
from solver.engine.result import KEEP_UP, EngineResult, Percentiles, summarise
from solver.engine.serve import (
    MIN_KV_REQUESTS,
    ServedLoad,
    ServingSetup,
    choose_tp,
    decoder_refusal,
    serve_at_load,
    share_of_load,
)
from solver.engine.simulate import WARMUP_SHARE, Replica, SimulatedRequest, simulate
from solver.engine.step_cost import StepCost, StepShape

__all__ = [
    "BISECTIONS",
    "ENGINES",
    "ENGINE_PROFILES",
    "KEEP_UP",
    "MAX_UTILIZATION",
    "MIN_KV_REQUESTS",
    "MIN_SIMULATED_RATE",
    "RUNTIME_RESERVE_GIB",
    "SLO_REQUESTS",
    "STEP_BUDGET",
    "WARMUP_SHARE",
    "Engine",
    "EngineProfile",
    "EngineResult",
    "KvCache",
    "Percentiles",
    "Replica",
    "ServedLoad",
    "ServingSetup",
    "SimulatedRequest",
    "StepCost",
    "StepShape",
    "build_replica",
    "choose_tp",
    "decoder_refusal",
    "engine_capacity",
    "engine_profile",
    "kv_element_bytes",
    "latency_at",
    "replica_capacity",
    "request_count",
    "run_load",
    "saturated_rate",
    "serve_at_load",
    "share_of_load",
    "simulate",
    "sizes_of",
    "summarise",
    "weight_bytes_per_param",
]
