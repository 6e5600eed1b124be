"""Efficiency at scale: what published runs on hundreds to thousands of GPUs lose beyond the step model.

The class model is calibrated on rows of up to a few hundred GPUs, and the step model
(:mod:`solver.throughput.step`) prices the communication and pipeline bubble a layout exposes. Runs at
scale lose more than that (stragglers, synchronisation jitter, slower collectives over deeper network
tiers, data loading): Megatron-LM's README reports GPT-3 175B falling from 47 % MFU on 96 H100 to 42 %
on 4,608 at a fixed batch, Narayanan et al. 2021 175B from 153 to 141 TFLOP/s per A100 between 384
and 1,536 GPUs. The term

    factor(n, P) = exp(−(α + β · ln(P / 100B)) · max(0, ln(n / 256)))

(``n`` GPUs, ``P`` parameters) is fitted by least squares on the log ratio of measured to modelled
throughput of pretraining rows of at least :data:`AT_SCALE_GPUS` GPUs from the sources the issue allows
(:data:`SCALE_SOURCES`: Megatron-LM's README, Narayanan et al. 2021, Korthikanti et al. 2022, NeMo's
performance tables) and no other; those rows are left out of the class fit so the term is identified.

``α`` is the GPU architecture's own where its runs say so: what a run loses at scale depends on the
cluster generation it ran on (the network per GPU, how far the software of the day overlapped its
collectives), and the rows disagree by generation — the 2021-22 Megatron runs on A100 (HDR 200 Gbit/s
per GPU) all lose 7-40 % beyond the step model at 384-3,072 GPUs, the 2023-25 NeMo and Megatron-Core
runs on H100 and B200 (NDR 400) gain 8-22 % at 512 and lose 16 % at 4,608. Each architecture's ``α``
is its runs' least-squares value shrunk toward the pooled one, which counts as :data:`PRIOR_WEIGHT`
(one run at about 1,900 GPUs); an architecture without runs takes the pooled ``α``. ``β`` is shared.
``sigma`` (the fit's residual spread) widens the band of estimates at scale. A held-out source is
left out of the fit too (:func:`scale_term` takes the rows to exclude).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import msgspec

__all__ = [
    "AT_SCALE_GPUS",
    "NO_SCALE_TERM",
    "SCALE_SOURCES",
    "ScalePoint",
    "ScaleTerm",
    "fit_scale_term",
]

AT_SCALE_GPUS: Final = 256
"""GPU counts from which a run counts as at scale (and the term starts)."""

SCALE_SOURCES: Final = (
    "NVIDIA/Megatron-LM",
    "arxiv.org/abs/2104.04473",
    "arxiv.org/abs/2205.05198",
    "NVIDIA/NeMo",
    "docs.nvidia.com/nemo-framework",
)
"""Source families whose at-scale runs fit the term: Megatron-LM README, Narayanan et al. 2021,
Korthikanti et al. 2022, NeMo performance tables (the issue's allowed list; MegaScale and the OPT-175B
logbook are allowed too, but their stored copies do not state the hardware and layout needed)."""

_REFERENCE_PARAMS: Final = 1e11
PRIOR_WEIGHT: Final = 4.0
"""How much the pooled ``α`` weighs in an architecture's own, in units of ``ln(n / 256)²`` of one run
(4: a run at 256 · e² ≈ 1,900 GPUs), so one or two runs move it part of the way."""


class ScalePoint(msgspec.Struct, frozen=True, kw_only=True):
    """One at-scale run: its GPUs, parameters, log(measured / modelled without the term), source."""

    gpus: int
    params: float
    log_ratio: float
    source: str
    architecture: str = ""
    """The GPU's architecture (``ampere``, ``hopper`` …; its own ``α``)."""


class ScaleTerm(msgspec.Struct, frozen=True, kw_only=True):
    """The fitted efficiency-at-scale term (module docstring)."""

    alpha: float
    """The pooled ``α`` (architectures without runs of their own)."""
    beta: float
    sigma: float
    rows: int
    sources: tuple[str, ...]
    alphas: dict[str, float] = msgspec.field(default_factory=dict)
    """``α`` per GPU architecture that has runs (module docstring)."""

    def alpha_of(self, architecture: str) -> float:
        return self.alphas.get(architecture, self.alpha)

    def exponent(self, gpus: int, params: float, architecture: str = "") -> float:
        """The (non-negative) log share the term takes at ``gpus`` GPUs of ``architecture`` and
        ``params`` parameters."""
        x = max(0.0, math.log(max(gpus, 1) / AT_SCALE_GPUS))
        z = math.log(max(params, 1.0) / _REFERENCE_PARAMS)
        return max(0.0, (self.alpha_of(architecture) + self.beta * z) * x)

    def factor(self, gpus: int, params: float, architecture: str = "") -> float:
        return math.exp(-self.exponent(gpus, params, architecture))

    def spread(self, gpus: int) -> float:
        """The term's share of the band at ``gpus`` (log; 0 below :data:`AT_SCALE_GPUS`)."""
        return self.sigma if gpus > AT_SCALE_GPUS else 0.0

    def text(self, gpus: int, params: float, architecture: str = "") -> str:
        whose = f"{architecture}'s" if architecture in self.alphas else "pooled"
        return (
            f"efficiency at scale ×{self.factor(gpus, params, architecture):.3f} (exp(−(α {self.alpha_of(architecture):.3f} "
            f"({whose}) + β {self.beta:.3f}·ln(P/100B))·ln(n/{AT_SCALE_GPUS})), fitted on {self.rows} run(s) of "
            f"≥{AT_SCALE_GPUS} GPUs from {', '.join(self.sources) or 'no source'}; residual σ {self.sigma:.2f})"
        )


NO_SCALE_TERM: Final = ScaleTerm(alpha=0.0, beta=0.0, sigma=0.0, rows=0, sources=())
"""The term with nothing to fit it on: no loss beyond the step model."""


def _solve(points: Sequence[ScalePoint]) -> tuple[float, float]:
    """Least squares of ``−log_ratio = (α + β·z)·x`` over the points (β 0 with one model size)."""
    xs = [max(0.0, math.log(p.gpus / AT_SCALE_GPUS)) for p in points]
    zs = [math.log(p.params / _REFERENCE_PARAMS) for p in points]
    ys = [-p.log_ratio for p in points]
    a11 = sum(x * x for x in xs)
    a12 = sum(x * x * z for x, z in zip(xs, zs, strict=True))
    a22 = sum((x * z) ** 2 for x, z in zip(xs, zs, strict=True))
    b1 = sum(x * y for x, y in zip(xs, ys, strict=True))
    b2 = sum(x * z * y for x, z, y in zip(xs, zs, ys, strict=True))
    det = a11 * a22 - a12 * a12
    if a11 <= 0:
        return 0.0, 0.0
    if abs(det) < 1e-9 * max(a11 * a22, 1e-12):
        return b1 / a11, 0.0
    return (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det


def _architecture_alphas(points: Sequence[ScalePoint], alpha: float, beta: float) -> dict[str, float]:
    """Each architecture's ``α``: its runs' least squares with ``β`` held, shrunk toward ``alpha``."""
    sums: dict[str, tuple[float, float]] = {}
    for p in points:
        if not p.architecture:
            continue
        x = max(0.0, math.log(p.gpus / AT_SCALE_GPUS))
        y = -p.log_ratio - beta * math.log(p.params / _REFERENCE_PARAMS) * x
        xy, xx = sums.get(p.architecture, (0.0, 0.0))
        sums[p.architecture] = (xy + x * y, xx + x * x)
    return {
        arch: (xy + PRIOR_WEIGHT * alpha) / (xx + PRIOR_WEIGHT) for arch, (xy, xx) in sorted(sums.items())
    }


def fit_scale_term(points: Iterable[ScalePoint]) -> ScaleTerm:
    """The term fitted on ``points`` (:data:`NO_SCALE_TERM` without any beyond the threshold)."""
    kept = [p for p in points if p.gpus > AT_SCALE_GPUS and math.isfinite(p.log_ratio)]
    if not kept:
        return NO_SCALE_TERM
    alpha, beta = _solve(kept)
    term = ScaleTerm(alpha=alpha, beta=beta, sigma=0.0, rows=len(kept),
                     sources=tuple(sorted({p.source for p in kept})),
                     alphas=_architecture_alphas(kept, alpha, beta))  # fmt: skip
    residuals = [p.log_ratio + term.exponent(p.gpus, p.params, p.architecture) for p in kept]
    sigma = math.sqrt(sum(r * r for r in residuals) / len(residuals)) if residuals else 0.0
    return msgspec.structs.replace(term, sigma=max(sigma, 0.05))


def in_scale_sources(family: str) -> bool:
    """Whether a source family may fit the term."""
    return family.startswith(SCALE_SOURCES)


ScalePredict = Callable[[int], float | None]
"""Modelled throughput (without the term) of a row by its profile id (``None``: cannot be put)."""
