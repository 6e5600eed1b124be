"""Safety of sheet swaps: readers never see half a sheet; a killed import leaves the old version."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import msgspec

from service.catalog.queries import OfferQuery, list_offers
from service.db.store import Store
from service.plans.pipeline import PlanService
from service.price_sheets.importer import import_sheet
from solver.spec.plan import PlanRequest

ROWS = 40


def sheet(price: float) -> bytes:
    """ROWS one-GPU H100 offers, every one at ``price``: a reader sees one price or a torn sheet."""
    lines = ["provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd"]
    lines += [f"flip,t{i},H100 SXM,1,r{i % 4},{price}" for i in range(ROWS)]
    return ("\n".join(lines) + "\n").encode()


def test_concurrent_imports_never_show_half_a_sheet(db_target: str) -> None:
    store = Store.open(db_target)
    service = PlanService(store)
    request = msgspec.convert(
        {
            "kind": "fine_tune",
            "model": {"name": "Llama 3.2 1B"},
            "method": "lora",
            "tokens": 10**8,
            "constraints": {"providers": ["flip"]},
        },
        PlanRequest,
    )
    price_of_version: dict[int, float] = {}
    report = import_sheet(store, source="flip", fmt="rental_csv", body=sheet(1.0), origin="t")
    assert report.version is not None
    price_of_version[report.version] = 1.0
    stop = threading.Event()
    errors: list[str] = []

    def writer() -> None:
        for k in range(2, 30):
            report = import_sheet(store, source="flip", fmt="rental_csv", body=sheet(float(k)), origin="t")
            assert report.version is not None
            price_of_version[report.version] = float(k)
        stop.set()

    def sql_reader() -> None:
        while not stop.is_set():
            page = list_offers(store, OfferQuery(provider="flip", limit=1000))
            prices = {o.price_per_hour_usd for o in page.items}
            if page.total != ROWS or len(prices) != 1:
                errors.append(f"offers read {page.total} rows at prices {sorted(p or 0 for p in prices)}")

    def plan_reader() -> None:
        while not stop.is_set():
            plan = service.create(request)
            offer = plan.choice.offer
            assert offer is not None and offer.sheet_version is not None
            expected = price_of_version.get(offer.sheet_version)
            if expected is not None and offer.price_per_hour_usd != expected:
                errors.append(f"plan priced {offer.price_per_hour_usd} against version {offer.sheet_version}")

    threads = [threading.Thread(target=f) for f in (writer, sql_reader, sql_reader, plan_reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    store.close()
    assert not errors, errors[:5]


def test_a_killed_import_leaves_the_previous_version_intact(tmp_path: Path) -> None:
    db = tmp_path / "killed.duckdb"
    script = textwrap.dedent(
        f"""
        import sys, time
        import service.db.sheet_versions as versions
        from service.price_sheets.importer import import_sheet
        from service.db.store import Store
        from tests.service.price_sheets.test_sheet_safety import sheet

        store = Store.open({str(db)!r})
        assert import_sheet(store, source="flip", fmt="rental_csv", body=sheet(1.0), origin="t").result == "ok"
        original = versions.insert_columns

        def stall(*args, **kwargs):
            original(*args, **kwargs)
            print("inserting", flush=True)
            time.sleep(600)  # killed here, inside the transaction

        versions.insert_columns = stall
        import_sheet(store, source="flip", fmt="rental_csv", body=sheet(2.0), origin="t")
        """
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "inserting"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    store = Store.open(str(db))
    try:
        page = list_offers(store, OfferQuery(provider="flip", limit=1000))
        assert page.total == ROWS and {o.price_per_hour_usd for o in page.items} == {1.0}
        with store.cursor() as cur:
            assert cur.execute("SELECT count(*) FROM price_sheets WHERE source = 'flip'").fetchone() == (1,)
    finally:
        store.close()
