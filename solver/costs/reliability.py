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

Those rates were measured in operated clusters: one operator's data-centre hardware, burnt in,
monitored, with spares. A marketplace rental (``solver.catalog.providers``: a host of another party,
often a single machine) is interrupted more often, and no marketplace publishes a rate: Vast.ai and
RunPod's community cloud publish a per-host *reliability score* (uptime), RunPod delisting hosts under
98 % over 30 days, which bounds downtime, not how often it strikes. So a marketplace host is taken at
:data:`MARKETPLACE_RATE_MULTIPLE` times its generation's cluster rate, an **assumption** that every
plan on such a host states (:func:`interruption_rate`; the reason for the figure is in the constant's
docstring). Hyperscalers, neoclouds and owned hardware keep the cluster rate.

Sources: Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974;
Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from solver.catalog.providers import ProviderClass

__all__ = [
    "DEFAULT_RESTART_MINUTES",
    "INTERRUPTION_RATES",
    "MARKETPLACE_RATE_MULTIPLE",
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
    assumed: bool = False
    """True when the rate is this project's assumption rather than a published measurement."""


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


MARKETPLACE_RATE_MULTIPLE: Final = 10.0
"""**Assumption**: a marketplace host is interrupted 10 times as often per GPU-hour as a GPU in an
operated cluster of its generation. No marketplace publishes an interruption rate (module docstring).
At 10 × the Hopper rate an 8-GPU host sees about 1.1 interruptions per 30 days (1.97e-4 × 8 × 720 h):
one outage a month, which a host keeps under RunPod's 98 % uptime floor (docs.runpod.io hosting
"maintenance and reliability": hosts under 98 % over a 30-day window are removed) only if it lasts
under 14.4 h. Give ``reliability.interruptions_per_gpu_hour`` in a workload to replace it."""


def _generation_rate(generation: str | None) -> InterruptionRate:
    for row in INTERRUPTION_RATES:
        if generation in row.generations:
            return row
    return _FALLBACK


def interruption_rate(
    generation: str | None, provider_class: ProviderClass | None = None
) -> InterruptionRate:
    """The interruption rate of a GPU generation (Hopper's when the generation is unknown) on a
    provider of ``provider_class`` (``solver.catalog.providers``): the cluster rate, or for a
    ``marketplace`` host :data:`MARKETPLACE_RATE_MULTIPLE` times it, marked ``assumed``."""
    row = _generation_rate(generation)
    if provider_class != "marketplace":
        return row
    rate = row.per_gpu_hour * MARKETPLACE_RATE_MULTIPLE
    return msgspec.structs.replace(
        row,
        per_gpu_hour=rate,
        source=(
            f"{rate:.3g} per GPU-hour: ASSUMPTION, {MARKETPLACE_RATE_MULTIPLE:g} × the cluster rate for a "
            f"marketplace host (no marketplace publishes a rate; RunPod delists community hosts under 98 % "
            f"30-day uptime); the cluster rate: {row.source}"
        ),
        citation=f"ASSUMPTION: {MARKETPLACE_RATE_MULTIPLE:g} × {row.citation}, for a marketplace host",
        assumed=True,
    )


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
