"""The ``gpuplan`` entry point: settings errors are reported before any command runs."""

from __future__ import annotations

import pytest

from service.cli import main


def test_bad_environment_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_PORT", "eighty")
    assert main(["gpus"]) == 2
    assert "GPUPLAN_PORT" in capsys.readouterr().err
