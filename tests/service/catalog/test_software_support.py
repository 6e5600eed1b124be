"""The shipped software compatibility table, and each GPU's stack and support in the catalog API and CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from service.catalog.software_support import parse_support_rows, support_table
from service.cli import main
from service.errors import ServiceError
from solver.spec.software import REQUIREMENTS

Client = TestClient[Any]
HEADER = "requirement,vendor,architecture,min_version,note,source\n"


def test_the_shipped_table_covers_every_requirement_with_a_source_per_row() -> None:
    table = support_table()
    assert set(table.requirements()) == set(REQUIREMENTS)
    assert all(row.source.startswith("https://") for row in table.rows)
    assert table.placements("flash_attention_3") == [("NVIDIA", "hopper")]
    assert ("AMD", "cdna3") in table.placements("fp8_training")
    assert not any(vendor == "AMD" for vendor, _ in table.placements("tensorrt_llm"))


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("flash_attention_9,NVIDIA,hopper,,,https://x", "unknown requirement"),
        ("vllm,Intel,xe,,,https://x", "unknown vendor"),
        ("vllm,NVIDIA,fermi,,,https://x", "unknown architecture"),
        ("vllm,NVIDIA,hopper,,,", "every row needs its source"),
    ],
)
def test_a_malformed_row_names_its_line(row: str, problem: str) -> None:
    with pytest.raises(ServiceError, match=f"line 2: {problem}"):
        parse_support_rows(HEADER + row + "\n")


def test_gpus_show_their_stack_and_what_they_support(client: Client) -> None:
    h100 = client.get("/v1/gpus/h100-sxm").json()["software"]
    assert h100["stack"] == "cuda" and h100["architecture"] == "hopper"
    assert {"flash_attention_3", "fp8_training", "vllm", "tensorrt_llm"} <= set(h100["supports"])
    a100 = client.get("/v1/gpus/a100-80gb-sxm").json()["software"]
    assert "flash_attention_3" not in a100["supports"] and "flash_attention_2" in a100["supports"]
    page = client.get("/v1/gpus", params={"vendor": "AMD"}).json()["items"]
    assert page and all(g["software"]["stack"] == "rocm" for g in page)
    mi300x = next(g for g in page if g["gpu_id"] == "mi300x")["software"]
    assert "fp8_training" in mi300x["supports"] and "tensorrt_llm" not in mi300x["supports"]


def test_cli_gpus_prints_stack_and_support(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--db", cli_db, "--vendor", "AMD"]) == 0
    out = capsys.readouterr().out
    assert "rocm" in out and "cdna3" in out and "supports" in out
    assert main(["gpus", "--db", cli_db, "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert next(g for g in items if g["gpu_id"] == "h100-sxm")["software"]["architecture"] == "hopper"


def test_gpus_filter_by_what_they_support(client: Client) -> None:
    page = client.get("/v1/gpus", params={"supports": "flash_attention_3", "limit": 1000}).json()["items"]
    assert page and {g["software"]["architecture"] for g in page} == {"hopper"}
    assert "h100-sxm" in {g["gpu_id"] for g in page}
    bad = client.get("/v1/gpus", params={"supports": "flash_attention_9"})
    assert bad.status_code == 400 and "supports" in bad.text


def test_cli_gpus_supports_filter(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--db", cli_db, "--supports", "tensorrt_llm", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert items and all(g["vendor"] == "NVIDIA" for g in items)
    assert all(g["software"]["architecture"] in ("ampere", "ada", "hopper", "blackwell") for g in items)
