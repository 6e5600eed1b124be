"""How often a job is interrupted, how often it should checkpoint, and what an interruption costs.

Hardware interrupts large training jobs at a rate roughly proportional to the GPU-hours they hold
(each GPU, its memory, its host and its links fail independently), so a job on ``n`` GPUs sees about
``n × rate`` interruptions per hour (:data:`INTERRUPTION_RATES`, per GPU generation; published runs
from 384 to 16,384 GPUs put it at 1.2e-5 to 8e-5 per GPU-hour). Scale enters twice: the count grows
with the GPUs, and a job inside one instance does not see the share caused by the network between
instances (switches, cables, NICs: 11.7 % of Llama 3's interruptions). Each interruption costs a
restart plus the work done since the last checkpoint (half an interval on average). Checkpointing
more often loses less work but spends more time writing: the interval that minimises the expected
total is Young's ``√(2·δ·M)`` for a write time ``δ`` and a mean time between interruptions ``M``,
refined by Daly (2006) for ``δ`` not small against ``M`` (:func:`optimal_checkpoint_interval`).

Sources: Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974;
Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_RESTART_MINUTES",
    "INTERRUPTION_RATES",
    "InterruptionRate",
    "interruption_rate",
    "optimal_checkpoint_interval",
]


class InterruptionRate(msgspec.Struct, frozen=True, kw_only=True):
    """Unexpected interruptions per GPU-hour of a GPU generation's training jobs, and the share of
    them caused by the network between instances (switches, cables, NICs, collective timeouts)."""

    generations: tuple[str, ...]
    per_gpu_hour: float
    network_share: float
    source: str
    citation: str
    """The source in a few words, for a plan's assumptions."""


_LLAMA3_RATE: Final = 419 / (54 * 24 * 16_384)
"""Llama 3 pre-training: 419 unexpected interruptions in a 54-day snapshot on up to 16,384 H100 GPUs
(Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.4 and Table 5) → 1.97e-5 per GPU-hour."""

_LLAMA3_NETWORK_SHARE: Final = (35 + 7 + 7) / 419
"""Of those 419: network switch and cable 35, NIC 7, NCCL watchdog timeouts 7 (Table 5) → 11.7 %."""

_RSC1_RATE: Final = 6.50 / 1000 / 24 / 8
"""Meta's RSC-1 research cluster (16k A100): 6.50 failures per 1,000 node-days of 8 GPUs (Kokolis et al.,
"Revisiting Reliability in Large-Scale Machine Learning Research Clusters", HPCA 2025, arXiv:2410.21680)
→ 3.39e-5 per GPU-hour; RSC-2 (8k A100) saw 2.34 (1.22e-5)."""

INTERRUPTION_RATES: Final[tuple[InterruptionRate, ...]] = (
    InterruptionRate(
        generations=("hopper", "blackwell", "cdna3", "cdna4"),
        per_gpu_hour=_LLAMA3_RATE,
        network_share=_LLAMA3_NETWORK_SHARE,
        source=(
            "1.97e-5 per GPU-hour: Llama 3 (arXiv:2407.21783) §3.3.4, 419 unexpected interruptions in 54 days "
            "on 16,384 H100; taken for Blackwell (the one B200 count, arXiv:2605.09370, 10 GPU failures in 55 "
            "days on 504 B200 = 1.5e-5, counts GPU errors only) and AMD Instinct (none published)"
        ),
        citation="Llama 3 on 16,384 H100, arXiv:2407.21783 §3.3.4",
    ),
    InterruptionRate(
        generations=("ampere", "ada", "turing", "volta", "pascal"),
        per_gpu_hour=_RSC1_RATE,
        network_share=_LLAMA3_NETWORK_SHARE,
        source=(
            "3.39e-5 per GPU-hour: Kokolis et al. HPCA 2025 (arXiv:2410.21680), RSC-1 16k A100, 6.50 failures "
            "per 1,000 node-days (OPT-175B's logbook and BLOOM saw 1.5e-5 to 8.1e-5); taken for older and "
            "workstation GPUs (none published)"
        ),
        citation="Meta RSC-1 on 16k A100, Kokolis et al. arXiv:2410.21680",
    ),
)
"""Interruption rates by GPU generation (the first row that names a generation applies)."""

_Floats = npt.NDArray[np.float64]

_FALLBACK: Final = INTERRUPTION_RATES[0]

DEFAULT_RESTART_MINUTES: Final = 11.0
"""Minutes from an interruption to training running again (detect, replace or drain the node, restart
the job, reload the last checkpoint) when the workload does not say: the median automatic retry
interval of a 504-GPU B200 pre-training run (Lablup, arXiv:2605.09370)."""


def interruption_rate(generation: str | None) -> InterruptionRate:
    """The interruption rate of a GPU generation (Hopper's when the generation is unknown)."""
    for row in INTERRUPTION_RATES:
        if generation in row.generations:
            return row
    return _FALLBACK


def optimal_checkpoint_interval(write_hours: _Floats, mean_hours_between: _Floats) -> _Floats:
    """Daly's optimum checkpoint interval (hours of work between checkpoints), element-wise, for a
    checkpoint that takes ``write_hours`` and interruptions ``mean_hours_between`` apart (``inf``: no
    interruptions, so no checkpoint before the end)."""
    delta = np.maximum(write_hours, 1e-9)
    m = np.asarray(mean_hours_between, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ratio = delta / (2 * m)
        daly = np.sqrt(2 * delta * m) * (1 + np.sqrt(ratio) / 3 + ratio / 9) - delta
    interval = np.where(delta >= 2 * m, m, daly)
    return np.where(np.isfinite(m) & (m > 0), interval, np.inf)
