"""Issue 24's practitioner rules through ``gpuplan plan``, as ``POST /v1/plans`` has them: networks,
stacks, true reasons, every price kind, purchase units, countries, the memory headroom and the host
CPUs an image job needs. (What the headroom costs: ``test_cli_plan.py``; host memory:
``test_api_plan_host.py``.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from tests.service.plans.test_api_marketplace_network import MANY_B200
from tests.service.plans.test_api_plan_headroom import LORA_8B
from tests.service.plans.test_api_plan_host import RESNET, RTX_SHEET
from tests.service.plans.test_api_pricing_options import LONG

Body = Callable[[object], str]


def _json(cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str], body: object) -> dict[str, Any]:
    assert main(["plan", body_file(body), "--db", cli_db, "--json"]) == 0
    plan: dict[str, Any] = json.loads(capsys.readouterr().out)
    return plan


def _refused(cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str], body: object) -> str:
    assert main(["plan", body_file(body), "--db", cli_db]) == 3
    return capsys.readouterr().err


def test_the_8b_lora_keeps_its_headroom(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", body_file(LORA_8B), "--db", cli_db]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("memory per GPU"))
    used, capacity = (float(x.replace(",", "")) for x in re.findall(r"([\d,.]+) of ([\d,.]+) GiB", line)[0])
    assert used <= 0.9 * capacity, line


def test_marketplace_b200_rentals_are_not_one_cluster(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {**MANY_B200, "constraints": {**MANY_B200["constraints"], "providers": ["lium", "spheron"]}}
    err = _refused(cli_db, body_file, capsys, body)
    assert "network" in err and "marketplace" in err


def test_a_70b_qlora_has_no_tensor_parallelism(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"kind": "fine_tune", "model": {"name": "Llama 3 70B"}, "method": "qlora", "precision": "nf4",
            "seq_len": 2048, "tokens": 100_000_000}  # fmt: skip
    assert main(["plan", body_file(body), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^layout\s+tp 1, pp 1, cp 1,", out, re.MULTILINE), out
    assert re.search(r"^choice\s+\d+ x \S.* tp=1,", out, re.MULTILINE), out


def test_the_on_demand_row_is_the_on_demand_only_plan(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    spot = {**LONG, "constraints": {**LONG["constraints"], "spot": True}}
    options = {o["pricing"]: o for o in _json(cli_db, body_file, capsys, spot)["pricing_options"]}
    plain = _json(cli_db, body_file, capsys, LONG)
    assert options["on_demand"]["total_usd"] == pytest.approx(plain["cost"]["total_usd"])
    assert main(["plan", body_file(spot), "--db", cli_db]) == 0
    table = capsys.readouterr().out.split("by kind of price")[1]
    assert "on-demand" in table and f"${plain['cost']['total_usd']:,.2f}" in table


def test_owned_gb200_below_a_rack_is_refused_for_its_purchase_unit(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"kind": "train", "model": {"name": "Llama 3.1 70B"}, "tokens": 100_000_000_000,
            "acquisition": "own", "constraints": {"gpus": ["GB200"], "max_gpus": 64}}  # fmt: skip
    assert "72 GPUs" in _refused(cli_db, body_file, capsys, body)


def test_a_deadline_rejection_names_the_limit_that_would_admit_it(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"kind": "train", "model": {"name": "Llama 3.1 8B"}, "seq_len": 4096, "tokens": 100_000_000_000,
            "constraints": {"deadline_hours": 150}}  # fmt: skip
    assert main(["plan", body_file(body), "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert "deadline: the fastest configuration tried" in out and "a deadline of" in out


def test_countries_keep_the_plan_in_them(
    cli_db: str, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {**LORA_8B, "constraints": {"countries": ["FI"]}}
    plan = _json(cli_db, body_file, capsys, body)
    assert plan["choice"]["offer"]["country"] == "FI"
    assert main(["plan", body_file(body), "--db", cli_db]) == 0
    line = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("from"))
    assert ", FI)" in line, line


def test_a_host_too_thin_to_decode_the_jpegs_is_passed_over(
    tmp_path: Path, body_file: Body, capsys: pytest.CaptureFixture[str]
) -> None:
    db, sheet = str(tmp_path / "host.duckdb"), tmp_path / "acme.csv"
    sheet.write_text(RTX_SHEET)
    assert main(["--db", db, "db", "init"]) == 0
    assert (
        main(["prices", "import", str(sheet), "--source", "acme", "--format", "rental_csv", "--db", db]) == 0
    )
    capsys.readouterr()
    rtx = {**RESNET, "constraints": {"providers": ["acme"], "gpus": ["RTX 4090"], "max_gpus": 1}}
    assert main(["plan", body_file(rtx), "--db", db]) == 0
    assert "wide.4090" in next(r for r in capsys.readouterr().out.splitlines() if r.startswith("from"))
    l4 = {**RESNET, "constraints": {"providers": ["acme"], "gpus": ["L4"], "max_gpus": 1}}
    err = _refused(db, body_file, capsys, l4)
    assert "host: decoding " in err and "the offer has 1 per GPU" in err
