"""The shipped MIG profiles: every row names a catalog GPU and agrees with that GPU's spec row."""

from __future__ import annotations

from collections import defaultdict

from service.db.mig_profiles import read_mig_profiles
from service.db.store import Store


def test_every_profile_belongs_to_a_catalog_gpu_with_mig(store: Store) -> None:
    gpus = store.snapshot.gpus
    profiles = read_mig_profiles()
    assert len(profiles) == 75
    for p in profiles:
        gpu = gpus[p.gpu_id]
        assert gpu.vendor == "NVIDIA", p
        assert p.memory_gib <= gpu.memory_gib, p
        assert p.source.startswith("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"), p
        # the catalog's maximum (where it states one) is the largest count of a profile on that GPU
        if gpu.mig_max_instances:
            assert p.max_count <= gpu.mig_max_instances, p


def test_profile_counts_match_their_slices() -> None:
    """No profile asks for more compute or memory slices than its count leaves room for."""
    by_gpu = defaultdict(list)
    for p in read_mig_profiles():
        by_gpu[p.gpu_id].append(p)
        assert p.max_count * p.compute_slices <= p.compute_slices_total, p
        assert p.max_count * p.memory_slices <= p.memory_slices_total, p
    assert {"b200", "h100-sxm", "h200-sxm", "a100-80gb-sxm", "a30"} <= set(by_gpu)
    assert "gb200" not in by_gpu  # the guide has no profile table for it: none invented
    b200 = {p.profile: p.max_count for p in by_gpu["b200"]}
    assert b200 == {"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1}


def test_the_snapshot_keeps_slices_apart_from_whole_gpus(store: Store) -> None:
    snapshot = store.snapshot
    assert len(snapshot.gpus) == 56 and len(snapshot.mig_slices) == 75
    assert not set(snapshot.gpus) & set(snapshot.mig_slices)
    assert snapshot.gpu_spec("b200-mig-1g-23gb").memory_gib == 23
    assert snapshot.gpu_spec("b200").memory_gib == 180
    assert len(snapshot.gpus_and_slices()) == 56 + 75
