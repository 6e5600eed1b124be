"""Read API latency relative to GET /health, measured in one run (in-process ASGI client)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.perf.conftest import median_ms, percentile_ms, timed

QUERIES = {
    "gpus": "/v1/gpus",
    "offers H100": "/v1/offers?gpu=H100&limit=50",
    "offers 8x nvswitch": "/v1/offers?min_gpus=8&interconnect=nvswitch&sort=-price_per_hour_usd",
    "profiles H100": "/v1/profiles?gpu=H100&limit=100",
}


def test_read_endpoints_against_health(client: TestClient[Any]) -> None:
    for _ in range(20):  # warm up
        client.get("/health")
    health = timed(lambda: client.get("/health"), 300)
    base = median_ms(health)
    print(f"\nGET /health p50 {base:.2f} ms (reference)")
    print(f"{'endpoint':24} {'p50 ms':>8} {'p95 ms':>8} {'p50 / health':>13}")
    for name, url in QUERIES.items():
        samples = timed(lambda url=url: client.get(url), 300)  # type: ignore[misc]
        assert client.get(url).status_code == 200
        print(
            f"{name:24} {median_ms(samples):8.2f} {percentile_ms(samples, 0.95):8.2f} {median_ms(samples) / base:13.1f}"
        )
