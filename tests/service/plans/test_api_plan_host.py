"""Host requirements in plans: offers short of the request's CPUs, host memory or storage per GPU are
passed over (the reason ``host`` when none is left), unknown numbers warn, CPU offload needs its host
memory, owned servers meet them by construction."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from service.cli import main
from solver.throughput.data_loading import vcpus_to_decode
from tests.service.admin import AUTH

Client = TestClient[Any]
LORA_8B = {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora", "tokens": 2_000_000_000}
SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,vcpus,memory_gib,storage_read_gbps
acme,slow.l4,L4,1,eu-1,0.40,8,32,1
acme,fast.l4,L4,1,eu-1,0.55,8,32,25
acme,quiet.l4,L4,1,eu-1,0.60,8,32,
"""
ACME_L4 = {"providers": ["acme"], "gpus": ["L4"]}


@pytest.fixture
def acme(admin: Client) -> Client:
    """The admin client with the acme sheet of L4 offers uploaded."""
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "acme", "format": "rental_csv"},
        content=SHEET.encode(),
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    return admin


def _offers(client: Client) -> dict[str, dict[str, Any]]:
    return {o["offer_id"]: o for o in client.get("/v1/offers", params={"limit": 1000}).json()["items"]}


def _reasons(body: dict[str, Any], reason: str) -> dict[str, str]:
    return {g["gpu"]: r["detail"] for g in body["rejected"] for r in g["reasons"] if r["reason"] == reason}


def test_every_chosen_offer_has_the_cpus_per_gpu_asked_for(client: Client) -> None:
    plan = client.post("/v1/plans", json={**LORA_8B, "host": {"cpu_cores_per_gpu": 16}}).json()
    offers = _offers(client)
    chosen = offers[plan["choice"]["offer"]["offer_id"]]
    assert chosen["vcpus"] / chosen["gpus_per_instance"] >= 16
    assert "below host.cpu_cores_per_gpu 16" in _reasons(plan, "host")["a16"]
    cheaper = client.post("/v1/plans", json=LORA_8B).json()
    assert cheaper["cost"]["total_usd"] <= plan["cost"]["total_usd"] + 1e-9


def test_a_host_no_offer_states_enough_is_422_with_the_reason_host(acme: Client) -> None:
    body = {**LORA_8B, "constraints": ACME_L4, "host": {"host_ram_gib_per_gpu": 64}}
    response = acme.post("/v1/plans", json=body)
    assert response.status_code == 422
    assert _reasons(response.json(), "host")["l4"] == (
        "no offer meets the host requirement: slow.l4 has 32 GiB of host memory per GPU (32 for 1 GPU(s)),"
        " below host.host_ram_gib_per_gpu 64"
    )


def test_offers_that_do_not_state_host_memory_are_kept_with_a_warning(client: Client) -> None:
    plan = client.post("/v1/plans", json={**LORA_8B, "host": {"host_ram_gib_per_gpu": 60_000}}).json()
    chosen = _offers(client)[plan["choice"]["offer"]["offer_id"]]
    assert chosen["host_memory_gib"] is None
    assert any(
        "host.host_ram_gib_per_gpu" in w["message"] for w in plan["warnings"] if w["code"] == "host_unknown"
    )
    assert "below host.host_ram_gib_per_gpu 60000" in _reasons(plan, "host")["a10g"]


def test_storage_rate_picks_the_offer_that_states_enough(acme: Client) -> None:
    body = {**LORA_8B, "constraints": ACME_L4, "host": {"storage_read_gbps": 10}}
    plan = acme.post("/v1/plans", json=body).json()
    assert plan["choice"]["offer"]["instance_type"] == "fast.l4"
    assert not [w for w in plan["warnings"] if w["code"] == "host_unknown"]
    plain = acme.post("/v1/plans", json={**body, "host": None}).json()
    assert plain["choice"]["offer"]["instance_type"] == "slow.l4"
    listed = {
        o["instance_type"]: o["storage_read_gbps"] for o in _offers(acme).values() if o["provider"] == "acme"
    }
    assert listed == {"slow.l4": 1, "fast.l4": 25, "quiet.l4": None}


def test_an_offer_that_does_not_state_the_rate_is_kept_with_a_warning(acme: Client) -> None:
    body = {**LORA_8B, "constraints": ACME_L4, "host": {"storage_read_gbps": 40}}
    plan = acme.post("/v1/plans", json=body).json()
    assert plan["choice"]["offer"]["instance_type"] == "quiet.l4"
    warning = next(w for w in plan["warnings"] if w["code"] == "host_unknown")
    assert "acme quiet.l4 does not state what host.storage_read_gbps asks about" in warning["message"]


def test_cpu_offload_needs_its_host_memory_from_the_offer(client: Client) -> None:
    body = {
        "kind": "fine_tune",
        "model": {"name": "Llama 3.1 8B"},
        "tokens": 10**9,
        "offload": "optimizer_and_params",
        "constraints": {"max_gpus": 1},
    }
    plan = client.post("/v1/plans", json=body).json()
    need = plan["estimate"]["memory"]["host_ram_gib"]
    chosen = _offers(client)[plan["choice"]["offer"]["offer_id"]]
    assert need > 0 and chosen["host_memory_gib"] / chosen["gpus_per_instance"] >= need
    assert "GiB of host memory per GPU (offloaded or paged state)" in _reasons(plan, "host")["a10g"]


def test_owned_servers_meet_the_host_and_say_so(client: Client) -> None:
    body = {**LORA_8B, "acquisition": "own", "host": {"cpu_cores_per_gpu": 64, "storage_read_gbps": 100}}
    plan = client.post("/v1/plans", json=body).json()
    assert plan["choice"]["acquisition"] == "own"
    assert any("host requirements" in a for a in plan["choice"]["owned"]["assumptions"])
    assert not [w for w in plan["warnings"] if w["code"] == "host_unknown"]


def test_serving_fleets_respect_the_host(client: Client) -> None:
    body = {
        "kind": "serving",
        "model": {"name": "Llama-2-7b"},
        "requests_per_s": 5,
        "request_mix": [{"input_tokens": 200, "output_tokens": 200, "share": 1.0}],
        "host": {"host_ram_gib_per_gpu": 128},
    }
    plan = client.post("/v1/plans", json=body).json()
    offers = _offers(client)
    unknown = " ".join(w["message"] for w in plan["warnings"] if w["code"] == "host_unknown")
    for replica in plan["choice"]["replicas"]:
        offer = offers[replica["offer"]["offer_id"]]
        if offer["host_memory_gib"] is None:  # kept "where known", and the plan says so
            assert offer["offer_id"] in unknown
        else:
            assert offer["host_memory_gib"] / offer["gpus_per_instance"] >= 128


def test_cli_plan_with_a_host_block(cli_db: str, body_file: Any, capsys: pytest.CaptureFixture[str]) -> None:
    body = {**LORA_8B, "host": {"host_ram_gib_per_gpu": 60_000}}
    assert main(["plan", body_file(body), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert "host_unknown" in out and "below host.host_ram_gib_per_gpu 60000" in out


RTX_SHEET = """provider,instance_type,gpu,gpus_per_instance,region,price_per_hour_usd,vcpus,memory_gib
acme,thin.4090,RTX 4090,1,eu-1,0.20,2,32
acme,wide.4090,RTX 4090,1,eu-1,0.30,8,32
acme,thin.l4,L4,1,eu-1,0.10,1,16
"""
RESNET = {"kind": "train", "model": {"name": "ResNet-50"}, "samples": 1_281_167, "epochs": 90}


@pytest.fixture
def rtx(admin: Client) -> Client:
    """The admin client with thin and wide single-GPU hosts uploaded."""
    response = admin.post(
        "/v1/price-sheets",
        params={"source": "acme", "format": "rental_csv"},
        content=RTX_SHEET.encode(),
        headers=AUTH,
    )
    assert response.status_code == 201, response.text
    return admin


def test_image_training_passes_over_a_host_too_thin_to_decode_its_jpegs(rtx: Client) -> None:
    """Issue 24: a ResNet-50 was placed on a host whose vCPUs cannot decode JPEGs at its rate; the
    cheaper 2-vCPU RTX 4090 is passed over for the 8-vCPU one."""
    body = {**RESNET, "constraints": {"providers": ["acme"], "gpus": ["RTX 4090"], "max_gpus": 1}}
    plan = rtx.post("/v1/plans", json=body).json()
    assert plan["choice"]["offer"]["instance_type"] == "wide.4090"
    per_gpu = plan["estimate"]["throughput"]["value"]
    assert 2 < vcpus_to_decode(per_gpu) <= 8


def test_a_gpu_whose_every_host_is_too_thin_is_rejected_with_the_reason_host(rtx: Client) -> None:
    body = {**RESNET, "constraints": {"providers": ["acme"], "gpus": ["L4"], "max_gpus": 1}}
    response = rtx.post("/v1/plans", json=body)
    assert response.status_code == 422, response.text
    detail = _reasons(response.json(), "host")["l4"]
    assert detail.startswith("decoding ") and "images/s per GPU needs" in detail
    assert "the offer has 1 per GPU" in detail and "short" in detail
