"""Sheets name GPUs the way the catalog does: every id and name, in any case and with any separators, and
every alias ``GET /v1/gpus/{id}`` lists is accepted where it holds for the row; an alias that needs a
context the row lacks (``A100``) is a problem on its line that lists what it can mean and says what to
write instead."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.service.admin import AUTH

HEADER = "provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd\n"
GPUS = ("h100-sxm", "a100-80gb-sxm", "l40s", "rtx-4090")


def _upload(admin: TestClient[Any], rows: list[str], source: str) -> Any:
    return admin.post(
        "/v1/price-sheets",
        params={"source": source, "format": "rental_csv"},
        content=HEADER + "".join(rows),
        headers=AUTH,
    )


def test_every_listed_spelling_of_a_gpu_is_accepted_or_explained(admin: TestClient[Any]) -> None:
    for gpu_id in GPUS:
        gpu = admin.get(f"/v1/gpus/{gpu_id}").json()
        spellings = [gpu_id, gpu_id.upper().replace("-", "_"), gpu["name"], *gpu["aliases"]]
        rows = [f"named,t{i},{name},1,r1,1.{i}\n" for i, name in enumerate(spellings)]
        response = _upload(admin, rows, source=f"names-{gpu_id}")
        report = response.json()
        explained = {p["value"] for p in report["problems"]}
        for problem in report["problems"]:  # only aliases whose context rules miss this row, explained
            assert f"'{gpu['name']}' ({gpu_id})" in problem["reason"], problem
            assert "write one of those names or ids instead" in problem["reason"]
        if response.status_code == 201:
            offers = admin.get("/v1/offers", params={"provider": "named", "limit": 100}).json()["items"]
            assert {o["gpu_id"] for o in offers if o["instance_type"].startswith("t")} >= {gpu_id}
        accepted = [s for s in spellings if s not in explained]
        assert accepted[:3] == spellings[:3]  # the id, any-case id and name always work


def test_an_ambiguous_name_lists_its_candidates(admin: TestClient[Any]) -> None:
    response = _upload(admin, ["someco,x1,A100,1,r1,1.0\n"], source="ambiguous")
    assert response.status_code == 422
    reason = response.json()["problems"][0]["reason"]
    assert "'A100 40GB SXM' (a100-40gb-sxm)" in reason and "'A100 80GB SXM'" in reason
    assert "write one of those names or ids instead" in reason


def test_ids_in_any_spelling_price_the_right_gpu(admin: TestClient[Any]) -> None:
    rows = ["idco,a,h100-sxm,8,r1,20\n", "idco,b,H100_SXM,1,r1,2.5\n", "idco,c,l40s,2,r1,1.8\n"]
    assert _upload(admin, rows, source="ids").status_code == 201
    offers = admin.get("/v1/offers", params={"provider": "idco"}).json()["items"]
    assert sorted((o["instance_type"], o["gpu_id"]) for o in offers) == [
        ("a", "h100-sxm"),
        ("b", "h100-sxm"),
        ("c", "l40s"),
    ]
