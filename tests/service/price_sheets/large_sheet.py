"""A generated rental sheet of any size: every row valid and distinct (varied GPUs, counts, regions and
prices), so an import of it stores every row."""

from __future__ import annotations

__all__ = ["large_rental_sheet"]

_GPUS = ("H100 SXM", "L4", "A100 80GB SXM", "RTX 4090", "L40S")
_HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,spot_price_per_hour_usd"


def large_rental_sheet(rows: int, provider: str = "bigco") -> bytes:
    """``rows`` offers of ``provider`` as rental CSV (about 48 bytes a row)."""
    lines = [_HEADER]
    for i in range(rows):
        price = 1 + (i % 997) / 100
        lines.append(
            f"{provider},inst-{i},{_GPUS[i % len(_GPUS)]},{1 + i % 8},region-{i % 37},{price:.2f},{price / 2:.3f}"
        )
    return ("\n".join(lines) + "\n").encode()
