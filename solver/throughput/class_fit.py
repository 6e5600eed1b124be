"""Fit the class efficiencies (and the few shared constants) to measured rows of the same class.

Each usable row says: on this hardware, this unit of work ran at ``y`` units per second per GPU (after
dividing out its multi-GPU scaling). Every modelled time per unit has the same shape,

    t = C · ((a / φ_p + b) / E + κ · c + d / U + e)

with the parts ``a … e`` worked out from the work and the hardware alone (:mod:`solver.throughput.efficiency`)
and the constants fitted here: the efficiency ``E`` of every compute (class, stack) with rows, the
bandwidth share ``U`` of every decode stack with rows, the factor ``κ`` of each class group, the
precision factors ``φ_p`` (FP8, FP4, int8, 4-bit weights) and, for works without a FLOPs formula
(ResNet-50, SSD, GNMT …), their cost ``C`` per unit (1 otherwise).

The fit is a robust non-linear least squares in log space (``scipy.optimize.least_squares``, soft-L1
loss) of ``log y = −log t + s_source + g_family,group + m_model,group + ε``. The random effects are
ridge-penalised (:data:`PRIOR_SIGMA`): ``s`` absorbs what one source's software or setup adds (it is
never used to predict), ``g`` what a GPU family does better or worse in a class group than its hardware
factors say, ``m`` what a model does (MoE routing, odd shapes). Rows of one class never move another
class's efficiency; a GPU family's level in a class group comes from the hardware factors plus that
group's rows only.

Efficiencies of a (class, stack) without rows fall back on their prior (:data:`CLASS_PRIORS`). Each
source weighs in proportion to the square root of its row count, so one large benchmark suite does not
drown the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np
from scipy.optimize import least_squares
from scipy.sparse import lil_matrix

from solver.throughput.efficiency import Parts

__all__ = ["CLASS_PRIORS", "PRIOR_SIGMA", "ClassModel", "FitRow", "fit_class_model"]

CLASS_PRIORS: Final[dict[str, tuple[float, float]]] = {
    "pretrain/optimized": (0.55, 0.7),
    "full_finetune/optimized": (1.0, 0.25),
    "lora/optimized": (0.8, 0.3),
    "encoder_vision/optimized": (0.7, 0.5),
    "pretrain/standard": (0.7, 0.3),
    "full_finetune/standard": (0.7, 0.3),
    "lora/standard": (0.6, 0.3),
    "encoder_vision/standard": (0.5, 0.4),
    "prefill/optimized": (0.7, 0.5),
    "prefill/standard": (0.5, 0.5),
    "decode/optimized": (0.7, 0.5),
    "decode/standard": (0.6, 0.5),
}
"""(prior, σ of its log) per class/stack. ``pretrain/optimized`` and the decode entries are absolute
(share of the achievable matmul speed; share of memory bandwidth); the other entries are ratios to
``pretrain/optimized``. Standard stacks keep ~0.7 of the optimized ones: Transformers/Accelerate
training reports 30–40 % MFU where Megatron/NeMo reach 45–55 % on the same GPUs."""

PRIOR_SIGMA: Final[dict[str, float]] = {"s": 0.35, "g": 0.30, "m": 0.12}
"""σ (log) of the source, GPU-family and model effects."""

_TRAFFIC_PRIOR: Final = (6.0, 0.5)
"""Reads and writes of each layer-width element per pass by non-matmul kernels: norms, residual adds,
activation functions and rotary embeddings touch ~10h + 3i elements forward and twice that backward,
about 4-6 per (h + i) element and pass (more where kernels are not fused)."""
_PRECISION_PRIOR: Final[dict[str, tuple[float, float, float]]] = {
    "fp32": (0.7, 0.125, 1.0),
    "fp8": (0.75, 0.5, 1.0),
    "int8": (0.75, 0.5, 1.0),
    "fp4": (0.5, 0.25, 1.0),
    "int4": (0.8, 0.3, 1.0),
}
"""(prior, lower bound, upper bound) of φ per precision: the bound 1/peak-ratio keeps FP8/FP4/int8 work
from running slower than 16-bit; 4-bit weights compute in 16 bit and may lose to dequantisation; fp32
is TF32 where frameworks enable it (convolutions by default, matmuls only when asked since PyTorch
1.12), so it may fall to plain FP32 speed (1/8 of TF32 … 1/16 of 16-bit)."""
_PRECISION_SIGMA: Final = 0.3
_ATTENTION_SIGMA: Final = 0.5
_GEMM_WIDTH_PRIOR: Final = (256.0, 1.0)
"""Model width at which narrow GEMMs double their time (prior, σ of its log)."""
_STEP_OVERHEAD_PRIOR: Final = (2e-3, 1.5)
"""Seconds a serving engine spends per decoding step outside GPU kernels (prior, σ of its log)."""
_LAYER_OVERHEAD_PRIOR: Final[dict[str, tuple[float, float]]] = {
    "train/standard": (1e-3, 1.0),
    "train/optimized": (2e-4, 1.0),
}
"""Seconds a training stack spends per layer and micro-batch outside the work the roofline counts
(prior, σ of its log): eager PyTorch dispatches ~75 kernels for a layer's forward and backward at
~10 µs each (more with LoRA's extra ops), ~1 ms; fused stacks (Transformer Engine, Megatron) a fifth
of that. It matters for short sequences and small micro-batches only."""
_ATTENTION_BOUNDS: Final = (0.5, 4.0)
_ROBUST_SCALE: Final = 0.15
_ABSOLUTE: Final = ("pretrain/optimized", "decode/optimized", "decode/standard")


def _overhead_prior(key: str) -> tuple[float, float]:
    return _LAYER_OVERHEAD_PRIOR.get(key, _STEP_OVERHEAD_PRIOR)


class FitRow(msgspec.Struct, frozen=True, kw_only=True):
    """One measured row in the fit's terms (see the module docstring for ``a``, ``b``, ``c``)."""

    profile_id: int
    efficiency_key: str
    """``"<class>/<stack>"`` whose efficiency ``E`` the row measures."""
    bandwidth_key: str | None
    """``"decode/<stack>"`` whose bandwidth share ``U`` applies when the row decodes (``d > 0``)."""
    overhead_key: str | None = None
    """``"decode/<stack>"`` (per decoding step) or ``"train/<stack>"`` (per training micro-batch):
    whose fixed overhead ``o`` applies to the row's ``steps``."""
    traffic_key: str
    """Class group whose factor ``κ`` applies (``training``, ``prefill``)."""
    precision_key: str | None
    """Precision whose factor ``φ`` applies (``None`` for 16-bit and fp32 work)."""
    parts: Parts
    cost_key: str | None
    """Key of the free cost of a work without a FLOPs formula (``None`` when its terms are known)."""
    source: str
    level_free: bool = False
    """Whether the source's effect is left unpenalised (its level says nothing of the stack's)."""
    family: str
    model: str
    group: str
    log_value: float


class ClassModel(msgspec.Struct, frozen=True, kw_only=True):
    """The fitted constants; ``rows`` maps each efficiency key to the profile ids that set it."""

    efficiency: dict[str, float]
    traffic: dict[str, float]
    precision_factor: dict[str, float]
    attention_factor: float
    """How many times slower attention kernels run than :data:`~solver.throughput.efficiency.ATTENTION_EFFICIENCY`
    assumes (1 = as assumed), fitted from how throughput falls with sequence length."""
    step_overhead: dict[str, float]
    """Seconds per decoding step (``decode/<stack>``) or per training micro-batch (``train/<stack>``)
    outside the work the roofline counts."""
    gemm_width: float
    """Model width at which narrow GEMMs take twice the large-shape time (``1 + w/h``)."""
    cost: dict[str, float]
    family_effect: dict[str, float]
    model_effect: dict[str, float]
    source_effect: dict[str, float]
    sigma: dict[str, float]
    """Residual spread (log, source effects left out) per efficiency key, for bands."""
    rows: dict[str, tuple[int, ...]]

    def efficiency_of(self, key: str) -> float:
        """The efficiency of ``"<class>/<stack>"``: fitted, else its prior."""
        if key in self.efficiency:
            return self.efficiency[key]
        prior, _ = CLASS_PRIORS.get(key, (0.5, 1.0))
        return prior if key in _ABSOLUTE else prior * self.efficiency_of("pretrain/optimized")

    def traffic_of(self, group: str) -> float:
        """κ of a class group: fitted, else the prior."""
        return self.traffic.get(group, _TRAFFIC_PRIOR[0])

    def step_overhead_of(self, key: str) -> float:
        """Seconds of fixed overhead per decoding step (``decode/<stack>``) or per layer of a training
        micro-batch (``train/<stack>``): fitted, else the prior."""
        return self.step_overhead.get(key, _overhead_prior(key)[0])

    def precision_factor_of(self, precision: str) -> float:
        """φ of a precision class: fitted, else the prior (1 for 16-bit and fp32)."""
        if precision in self.precision_factor:
            return self.precision_factor[precision]
        return _PRECISION_PRIOR[precision][0] if precision in _PRECISION_PRIOR else 1.0

    def effects(self, family: str, model: str, group: str) -> float:
        """Log adjustment for a GPU family and a model in a class group (0 where nothing was fitted)."""
        return self.family_effect.get(f"{family}|{group}", 0.0) + self.model_effect.get(
            f"{model}|{group}", 0.0
        )


EMPTY_MODEL: Final = ClassModel(
    efficiency={}, traffic={}, precision_factor={}, attention_factor=1.0, step_overhead={},
    gemm_width=_GEMM_WIDTH_PRIOR[0], cost={}, family_effect={}, model_effect={},
    source_effect={}, sigma={}, rows={},
)  # fmt: skip


class _Problem:
    """The rows as arrays and the positions of every parameter in θ."""

    def __init__(self, rows: Sequence[FitRow]) -> None:
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.attention = self._add("A:attention") if any(row.parts.b > 0 for row in rows) else -1
        e = [self._add(f"E:{row.efficiency_key}") for row in rows]
        u = [self._optional("E", row.bandwidth_key if row.parts.d > 0 else None) for row in rows]
        k = [self._add(f"K:{row.traffic_key}") for row in rows]
        p = [self._optional("F", row.precision_key) for row in rows]
        cost = [self._optional("C", row.cost_key) for row in rows]
        o = [self._optional("O", row.overhead_key if row.parts.steps > 0 else None) for row in rows]
        s = [self._add(f"s:{row.source}") for row in rows]
        g = [self._add(f"g:{row.family}|{row.group}") for row in rows]
        m = [self._add(f"m:{row.model}|{row.group}") for row in rows]
        self.e, self.k, self.s, self.g, self.m = (np.array(x) for x in (e, k, s, g, m))
        self.u, self.p, self.cost, self.o = (np.array(x) for x in (u, p, cost, o))
        self.a, self.b, self.c, self.d, self.fixed, self.steps, self.narrow = (
            np.array([row.parts[i] for row in rows]) for i in range(7)
        )
        self.gemm = self._add("W:gemm") if any(row.parts.narrow > 0 for row in rows) else -1
        self.y = np.array([row.log_value for row in rows])
        self.free_sources = {f"s:{row.source}" for row in rows if row.level_free}
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.source] = counts.get(row.source, 0) + 1
        self.weight = np.array([counts[row.source] ** -0.25 for row in rows])  # Σ weight² ∝ √n per source

    def _add(self, name: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def _optional(self, kind: str, key: str | None) -> int:
        return -1 if key is None else self._add(f"{kind}:{key}")

    def _take(self, theta: np.ndarray, positions: np.ndarray, default: float) -> np.ndarray:
        """``theta`` at ``positions`` (log values), ``default`` where a position is -1."""
        return np.where(positions >= 0, theta[np.maximum(positions, 0)], default)

    def log_seconds(self, theta: np.ndarray) -> np.ndarray:
        phi = np.exp(self._take(theta, self.p, 0.0))
        bandwidth = np.exp(self._take(theta, self.u, 0.0))
        attention = math.exp(float(theta[self.attention])) if self.attention >= 0 else 1.0
        width = math.exp(float(theta[self.gemm])) if self.gemm >= 0 else 0.0
        seconds = (
            ((self.a + width * self.narrow) / phi + self.b * attention) / np.exp(theta[self.e])
            + np.exp(theta[self.k]) * self.c
            + self.d / bandwidth
            + self.fixed
            + np.where(self.o >= 0, np.exp(self._take(theta, self.o, 0.0)), 0.0) * self.steps
        )
        result: np.ndarray = np.log(seconds) + self._take(theta, self.cost, 0.0)
        return result

    def predicted(self, theta: np.ndarray, *, with_source: bool) -> np.ndarray:
        value: np.ndarray = -self.log_seconds(theta) + theta[self.g] + theta[self.m]
        return value + theta[self.s] if with_source else value

    def sparsity(self) -> lil_matrix:
        """Which parameters each residual depends on (lets the solver difference columns in groups)."""
        rows, params = len(self.y), len(self.names)
        pattern = lil_matrix((rows + params, params), dtype=int)
        for positions in (self.e, self.u, self.k, self.p, self.cost, self.o, self.s, self.g, self.m):
            for i, j in enumerate(positions.tolist()):
                if j >= 0:
                    pattern[i, j] = 1
        if self.attention >= 0:
            for i in np.nonzero(self.b > 0)[0].tolist():
                pattern[i, self.attention] = 1
        if self.gemm >= 0:
            for i in np.nonzero(self.narrow > 0)[0].tolist():
                pattern[i, self.gemm] = 1
        anchor = self.index.get("E:pretrain/optimized")
        for j, name in enumerate(self.names):
            pattern[rows + j, j] = 1
            if anchor is not None and name.startswith("E:") and name[2:] not in _ABSOLUTE:
                pattern[rows + j, anchor] = 1
        return pattern

    def priors(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centre and σ of every parameter's prior (σ = ∞: free)."""
        centre = np.zeros(len(self.names))
        sigma = np.full(len(self.names), np.inf)
        anchor = self.index.get("E:pretrain/optimized")
        for j, name in enumerate(self.names):
            kind, _, key = name.partition(":")
            if kind == "E":
                prior, sigma[j] = CLASS_PRIORS.get(key, (0.5, 1.0))
                if key in _ABSOLUTE:
                    centre[j] = math.log(prior)
                else:
                    base = (
                        theta[anchor]
                        if anchor is not None
                        else math.log(CLASS_PRIORS["pretrain/optimized"][0])
                    )
                    centre[j] = base + math.log(prior)
            elif kind == "K":
                centre[j], sigma[j] = math.log(_TRAFFIC_PRIOR[0]), _TRAFFIC_PRIOR[1]
            elif kind == "O":
                prior_o, sigma[j] = _overhead_prior(key)
                centre[j] = math.log(prior_o)
            elif kind == "A":
                centre[j], sigma[j] = 0.0, _ATTENTION_SIGMA
            elif kind == "W":
                centre[j], sigma[j] = math.log(_GEMM_WIDTH_PRIOR[0]), _GEMM_WIDTH_PRIOR[1]
            elif kind == "F":
                centre[j], sigma[j] = math.log(_PRECISION_PRIOR[key][0]), _PRECISION_SIGMA
            elif kind in PRIOR_SIGMA and name not in self.free_sources:
                sigma[j] = PRIOR_SIGMA[kind]
        return centre, sigma


def fit_class_model(rows: Sequence[FitRow]) -> ClassModel:
    """Fit θ and the random effects to ``rows`` (see the module docstring)."""
    if not rows:
        return EMPTY_MODEL
    problem = _Problem(rows)
    theta0, lower, upper = _start(problem)

    def residuals(theta: np.ndarray) -> np.ndarray:
        centre, sigma = problem.priors(theta)
        fit = problem.weight * (problem.predicted(theta, with_source=True) - problem.y)
        return np.concatenate([fit, (theta - centre) / sigma])

    solution = least_squares(
        residuals,
        theta0,
        bounds=(lower, upper),
        loss="linear",
        f_scale=_ROBUST_SCALE,
        max_nfev=400,
        jac_sparsity=problem.sparsity(),
    )
    return _model(rows, problem, solution.x)


def _start(problem: _Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    theta0, _ = problem.priors(np.zeros(len(problem.names)))
    lower = np.full(len(theta0), -np.inf)
    upper = np.full(len(theta0), np.inf)
    for name, j in problem.index.items():
        if name.startswith("E:"):
            upper[j] = 0.0  # never above the achievable ceiling
            theta0[j] = min(theta0[j], -1e-3)
        elif name == "W:gemm":
            lower[j], upper[j] = math.log(16.0), math.log(8192.0)
        elif name == "A:attention":
            lower[j], upper[j] = math.log(_ATTENTION_BOUNDS[0]), math.log(_ATTENTION_BOUNDS[1])
        elif name.startswith("F:"):
            _, low, high = _PRECISION_PRIOR[name[2:]]
            lower[j], upper[j] = math.log(low), math.log(high)
            theta0[j] = min(max(theta0[j], lower[j] + 1e-6), upper[j] - 1e-6)
    free = problem.cost >= 0
    if free.any():  # a work without a formula starts where its median row sits on the prior efficiency
        base = -problem.log_seconds(theta0) - problem.y
        for j in set(problem.cost[free].tolist()):
            theta0[j] = float(np.median(base[problem.cost == j]))
    return theta0, lower, upper


def _model(rows: Sequence[FitRow], problem: _Problem, theta: np.ndarray) -> ClassModel:
    values: dict[str, dict[str, float]] = {
        kind: {} for kind in ("E", "K", "F", "C", "A", "O", "W", "s", "g", "m")
    }
    for name, j in problem.index.items():
        kind, _, key = name.partition(":")
        values[kind][key] = float(theta[j]) if kind in PRIOR_SIGMA else math.exp(float(theta[j]))
    errors = problem.predicted(theta, with_source=False) - problem.y
    spread: dict[str, list[float]] = {}
    members: dict[str, list[int]] = {}
    for row, error in zip(rows, errors.tolist(), strict=True):
        spread.setdefault(row.efficiency_key, []).append(error)
        members.setdefault(row.efficiency_key, []).append(row.profile_id)
    return ClassModel(
        efficiency=values["E"],
        traffic=values["K"],
        precision_factor=values["F"],
        attention_factor=values["A"].get("attention", 1.0),
        step_overhead=values["O"],
        gemm_width=values["W"].get("gemm", 0.0),
        cost=values["C"],
        family_effect=values["g"],
        model_effect=values["m"],
        source_effect=values["s"],
        sigma={key: _robust_sigma(found) for key, found in spread.items()},
        rows={key: tuple(sorted(ids)) for key, ids in members.items()},
    )


def _robust_sigma(errors: Sequence[float]) -> float:
    """A normal σ read two ways, the wider taken, at least 0.05: 1.4826 × the median absolute residual,
    and the σ whose 10-90 % band holds 80 % of the residuals (their 80th absolute percentile ÷ 1.2816),
    which is the wider where the tail is heavy, as it is for rows from other publishers."""
    if not errors:
        return 0.3
    absolute = np.abs(np.asarray(errors))
    return max(0.05, 1.4826 * float(np.median(absolute)), float(np.quantile(absolute, 0.8)) / 1.2816)
