"""Two stores on one PostgreSQL database, as two replicas: a measurement imported through one is in the
other's catalog snapshot at once (the notice of migration 13's trigger, not the poll), so every replica
plans on it."""

from __future__ import annotations

import time

from pricing import UploadFacts
from service.db.store import Store
from service.measurements.importer import import_measurements
from tests.pg_cluster import PgCluster
from tests.service.measurements.test_api_measurements import TITAN, TITAN_PARAMS


def test_an_import_on_one_replica_reaches_the_others_snapshot_on_its_notice(pg_cluster: PgCluster) -> None:
    url = pg_cluster.fresh_url()
    with Store.open(url) as watching, Store.open(url) as writing:
        watching.watch_catalog(poll_s=60)  # a poll would come far too late: only the notice can reload
        time.sleep(0.2)
        before = {p.profile_id for p in watching.snapshot.profiles}
        facts = UploadFacts(**TITAN_PARAMS)  # type: ignore[arg-type]
        report = import_measurements(
            writing, source="titan-pg", fmt="torchtitan_log", body=TITAN, facts=facts
        )
        (row_id,) = [m.row_id for m in report.measurements]
        deadline = time.monotonic() + 2.0
        while row_id not in {p.profile_id for p in watching.snapshot.profiles}:
            assert time.monotonic() < deadline, "the import did not reach the other store within 2 s"
            time.sleep(0.01)
        assert row_id not in before
        assert watching.snapshot_state == writing.catalog_state()
