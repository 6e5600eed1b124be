"""A scheduled refresh is skipped while its source's run lock is held (here or in another replica) and
when a run of it started less than RECENT_FRACTION of its interval ago; a requested run is not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.db.replica import replica_name
from service.db.store import Store
from service.price_sheets.refresh import RECENT_FRACTION, Refresher, run_lock_key
from service.price_sheets.sources import SourceConfig
from tests.service.price_sheets.test_refresh import SHEET


def _runs(store: Store) -> list[tuple[str, str]]:
    with store.cursor() as cur:
        return [
            (r[0], r[1])
            for r in cur.execute("SELECT result, replica FROM refresh_runs ORDER BY run_id").fetchall()
        ]


def test_scheduled_runs_skip_a_recent_run_and_a_held_lock(db_target: str, tmp_path: Path) -> None:
    sheet = tmp_path / "acme.csv"
    sheet.write_text(SHEET)
    source = SourceConfig(name="acme", url=str(sheet), format="rental_csv", interval_seconds=600)
    with Store.open(db_target) as store:
        refresher = Refresher(store, [source])
        first = refresher.run_scheduled("acme")
        assert first is not None and first.result == "ok"
        assert refresher.run_scheduled("acme") is None  # started moments ago
        assert refresher.run("acme").result == "unchanged"  # asked for: runs whatever the last run
        with store.run_lock(run_lock_key("acme"), wait=False) as held:
            assert held
            with store.cursor() as cur:  # the last run is old now
                old = datetime.now(UTC) - timedelta(seconds=RECENT_FRACTION * 600 + 1)
                cur.execute("UPDATE refresh_runs SET started_at = ?", [old])
            assert refresher.run_scheduled("acme") is None  # a run of it is in progress
        again = refresher.run_scheduled("acme")
        assert again is not None and again.result == "unchanged"
        runs = _runs(store)
        assert [r[0] for r in runs] == ["ok", "unchanged", "unchanged"]
        assert {replica for _, replica in runs} == {replica_name()}
