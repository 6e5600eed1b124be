"""``gpuplan gpus`` and ``gpuplan offers``: the catalog queries from the command line."""

from __future__ import annotations

import json

import pytest

from service.cli import main


def test_gpus_table(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--db", cli_db]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm" in out and "56 GPUs" in out


def test_offers_filters_match_the_api(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["offers", "--db", cli_db, "--gpu", "H100", "--min-gpus", "8", "--json", "--limit", "1000"]) == 0
    )
    page = json.loads(capsys.readouterr().out)
    assert page["items"] and all(
        o["gpus_per_instance"] >= 8 and o["gpu_id"].startswith("h100") for o in page["items"]
    )
    assert main(["offers", "--db", cli_db, "--gpu", "H100", "--limit", "3"]) == 0
    assert "3 of" in capsys.readouterr().out


def test_bad_filter_is_a_clear_error(cli_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["offers", "--db", cli_db, "--provider", "awz"]) == 2
    assert "did you mean aws" in capsys.readouterr().err
