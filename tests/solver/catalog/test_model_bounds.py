"""An explicit model shape is bounded by physics, not only by positivity: a shape beyond the bounds
is a validation error naming the field (a 400 through the API), never an estimate in exabytes."""

from __future__ import annotations

import msgspec
import pytest

from solver.spec.workload import ModelSpec

SHAPE = {
    "params_b": 7.0,
    "layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "attention_heads": 32,
    "kv_heads": 32,
    "vocab_size": 32000,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("layers", 10**9),
        ("hidden_size", 2**31),
        ("intermediate_size", 10**12),
        ("attention_heads", 10**6),
        ("kv_heads", 10**6),
        ("vocab_size", 10**9),
        ("max_seq_len", 10**12),
        ("head_dim", 10**6),
        ("experts", 10**7),
        ("active_experts", 10**6),
        ("active_params_b", 1e6),
        ("params_b", 1e300),
    ],
)
def test_shapes_beyond_physical_bounds_are_refused(field: str, value: float) -> None:
    with pytest.raises(msgspec.ValidationError, match=f"at `\\$.{field}`"):
        msgspec.convert(SHAPE | {field: value}, ModelSpec)


def test_real_shapes_pass() -> None:
    biggest = SHAPE | {"layers": 160, "hidden_size": 25_600, "vocab_size": 262_144, "max_seq_len": 10_000_000}
    assert msgspec.convert(biggest, ModelSpec).layers == 160
