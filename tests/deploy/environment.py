"""Is every environment variable a deployment sets one the process reads, with a value it accepts?

The names ``Settings.from_env`` reads are recorded by handing it a mapping that notes each lookup, so a
setting renamed in ``service/settings.py`` fails the deploy tests instead of being silently ignored in
a cluster. Variables read by a library rather than by gpuplan are listed with the module that reads them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, Mapping

from service.settings import Settings

__all__ = ["LIBRARY_VARIABLES", "check_variables", "settings_variables"]

LIBRARY_VARIABLES = {"FORWARDED_ALLOW_IPS": "uvicorn.config"}
"""Variables a deployment may set for a library gpuplan runs in, and the module that reads each."""

_TOKEN = "a-valid-admin-token-of-24c"
"""Stands in for a Secret's value: the manifests hold placeholders, which start-up refuses on purpose."""


class _Recording(Mapping[str, str]):
    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return self.values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def settings_variables() -> set[str]:
    """Every variable ``Settings.from_env`` looks up."""
    recording = _Recording({})
    Settings.from_env(recording)
    return recording.asked


def check_variables(literal: Mapping[str, str], from_secrets: set[str]) -> Settings:
    """Assert that every name (literal values and values from Secrets alike) is read by gpuplan or by a
    listed library, and return the settings the literal values give (a Secret's value stands in as a
    valid one: ``GPUPLAN_DB`` an in-memory database, ``GPUPLAN_ADMIN_TOKEN`` a long enough token)."""
    known = settings_variables()
    for name in {*literal, *from_secrets}:
        if name in LIBRARY_VARIABLES:
            module = importlib.import_module(LIBRARY_VARIABLES[name])
            assert f'"{name}"' in inspect.getsource(module), f"{module.__name__} no longer reads {name}"
        else:
            assert name in known, f"{name} is set but gpuplan reads no such setting ({sorted(known)})"
    stand_ins = {"GPUPLAN_DB": ":memory:", "GPUPLAN_ADMIN_TOKEN": _TOKEN}
    env = {**{name: stand_ins.get(name, "x") for name in from_secrets}, **literal}
    return Settings.from_env(env)
