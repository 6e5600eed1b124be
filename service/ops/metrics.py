"""``GET /metrics`` in the Prometheus text format.

Litestar's Prometheus middleware counts requests and times them by route template, method and status
(``gpuplan_requests_total``, ``gpuplan_request_duration_seconds``); the plan pipeline observes
``gpuplan_plan_solve_seconds``. What the database knows (refresh runs by source and result, each
source's current sheet version and its age, snapshot rebuilds) is read at scrape time by a collector
of the app's own, so it is right after a restart and never double counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Final

from litestar import MediaType, Request, Response, get
from litestar.plugins.prometheus import PrometheusConfig, PrometheusController
from prometheus_client import REGISTRY, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from service.db.store import Store

__all__ = [
    "PLAN_SOLVE_SECONDS",
    "CatalogCollector",
    "MetricsController",
    "catalog_registry",
    "prometheus_config",
]

PLAN_SOLVE_SECONDS: Final = Histogram(
    "gpuplan_plan_solve_seconds",
    "Time to solve one plan (model building and the MILP), by plan kind",
    ["kind"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def prometheus_config() -> PrometheusConfig:
    """Request metrics grouped by route template (``/v1/plans/{plan_id}``), not by raw path."""
    return PrometheusConfig(app_name="gpuplan", prefix="gpuplan", group_path=True, exclude=["^/metrics$"])


class CatalogCollector(Collector):
    """The store's refresh runs, current sheet versions and snapshot rebuilds, read when scraped."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        runs = CounterMetricFamily(
            "gpuplan_refresh_runs", "Recorded refresh runs, by source and result", labels=["source", "result"]
        )
        version = GaugeMetricFamily(
            "gpuplan_price_sheet_version",
            "Current sheet version, by source and kind",
            labels=["source", "kind"],
        )
        age = GaugeMetricFamily(
            "gpuplan_price_sheet_age_seconds",
            "Age of the current sheet's prices (since its effective date), by source and kind",
            labels=["source", "kind"],
        )
        now = time.time()
        with self.store.cursor() as cur:
            for source, result, count in cur.execute(
                "SELECT source, result, count(*) FROM refresh_runs GROUP BY source, result ORDER BY source, result"
            ).fetchall():
                runs.add_metric([source, result], count)
            for source, kind, number, effective in cur.execute(
                "SELECT source, kind, version, effective_at FROM current_sheets ORDER BY source, kind"
            ).fetchall():
                version.add_metric([source, kind], number)
                age.add_metric([source, kind], now - _epoch(effective))
        rebuilds = CounterMetricFamily(
            "gpuplan_snapshot_rebuilds", "Catalog snapshots read after a write since the process started"
        )
        rebuilds.add_metric([], self.store.snapshot.generation - 1)
        yield from (runs, version, age, rebuilds)


def _epoch(value: Any) -> float:
    return value.timestamp() if isinstance(value, datetime) else float("nan")


def catalog_registry(store: Store) -> CollectorRegistry:
    """A registry of one app's store metrics (the process-wide registry holds the request metrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CatalogCollector(store))
    return registry


class MetricsController(PrometheusController):
    """``GET /metrics``: the process-wide metrics followed by this app's store metrics."""

    @get(
        sync_to_thread=True,
        tags=["service"],
        operation_id="metrics",
        summary="Prometheus metrics",
        media_type=MediaType.TEXT,
    )
    def get(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        """The Prometheus text exposition format (prometheus-client's latest)."""
        own: CollectorRegistry = request.app.state.metrics_registry
        body = generate_latest(REGISTRY) + generate_latest(own)
        return Response(body, media_type=MediaType.TEXT, headers={"Content-Type": CONTENT_TYPE_LATEST})
