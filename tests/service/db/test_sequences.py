"""Sheet version numbers come from a sequence: never the same number twice, whether two threads of one
process or two processes on one PostgreSQL database take them at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from service.db.sheet_versions import next_version
from service.db.store import Store
from tests.pg_cluster import PgCluster, run_together


def test_threads_taking_versions_at_once_never_get_the_same_one(db_target: str) -> None:
    with Store.open(db_target) as store:

        def take(_: int) -> list[int]:
            return [store.transaction(next_version) for _ in range(25)]

        with ThreadPoolExecutor(max_workers=4) as pool:
            taken = [n for batch in pool.map(take, range(4)) for n in batch]
        with store.cursor() as cur:
            stored = cur.execute("SELECT max(version) FROM price_sheets").fetchone()
    assert len(taken) == len(set(taken)) == 100
    assert stored is not None and min(taken) > stored[0]  # after every stored version


_TAKE = (
    "import sys\n"
    "from service.db.sheet_versions import next_version\n"
    "from service.db.store import Store\n"
    "with Store.open(sys.argv[1]) as store:\n"
    "    print(' '.join(str(store.transaction(next_version)) for _ in range(200)))\n"
)


def test_two_processes_taking_versions_at_once_never_get_the_same_one(pg_cluster: PgCluster) -> None:
    first, second = ([int(n) for n in out.split()] for out in run_together(_TAKE, pg_cluster.fresh_url(), 2))
    assert len(first) == len(second) == 200
    assert not set(first) & set(second)
    assert first == sorted(first) and second == sorted(second)  # each process's numbers increase
