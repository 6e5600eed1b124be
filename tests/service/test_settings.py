from __future__ import annotations

import pytest

from service.settings import DEFAULT_DB_PATH, Settings


def test_defaults() -> None:
    settings = Settings.from_env({})
    assert (settings.db_path, settings.host, settings.port, settings.log_level) == (
        DEFAULT_DB_PATH,
        "127.0.0.1",
        8000,
        "INFO",
    )


def test_environment_overrides() -> None:
    env = {
        "GPUPLAN_DB": ":memory:",
        "GPUPLAN_HOST": "0.0.0.0",
        "GPUPLAN_PORT": "9000",
        "GPUPLAN_LOG_LEVEL": "debug",
    }
    settings = Settings.from_env(env)
    assert settings.db_file() is None
    assert (settings.host, settings.port, settings.log_level) == ("0.0.0.0", 9000, "DEBUG")


@pytest.mark.parametrize(
    ("key", "value"), [("GPUPLAN_PORT", "x"), ("GPUPLAN_PORT", "70000"), ("GPUPLAN_LOG_LEVEL", "LOUD")]
)
def test_bad_values_name_the_variable(key: str, value: str) -> None:
    with pytest.raises(ValueError, match=key):
        Settings.from_env({key: value})


def test_scheduler_is_on_unless_turned_off() -> None:
    assert Settings.from_env({}).run_scheduler is True
    assert Settings.from_env({"GPUPLAN_SCHEDULER": "on"}).run_scheduler is True
    assert Settings.from_env({"GPUPLAN_SCHEDULER": "off"}).run_scheduler is False
    assert Settings.from_env({"GPUPLAN_SCHEDULER": " OFF "}).run_scheduler is False
