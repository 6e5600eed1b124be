"""The shape of ``pricing/`` (issue 21): sheets, rules and ownership in rooms, imports only downward, one face, short functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pricing
from tests.layout_rules import (
    MAX_FUNCTION_LINES,
    REPO,
    function_lengths,
    imports_of,
    package_modules,
    upward_imports,
)

ROOMS = {"rules": 2, "sheets": 3, "ownership": 4, "measurements": 5}
"""rules ← sheets ← ownership (← measurements, which imports only errors and cells); ``errors`` then ``cells`` sit at the top, below every room."""
TOP = {"errors": 0, "cells": 1}


def test_the_tree_shows_the_rooms() -> None:
    package = REPO / "pricing"
    assert {p.parent.name for p in package.glob("*/__init__.py")} == set(ROOMS)
    assert sorted(p.stem for p in package.glob("*.py")) == sorted(["__init__", *TOP])
    for room in ROOMS:
        assert any((Path(__file__).parent / room).glob("test_*.py")), (
            f"tests/pricing/{room} mirrors pricing/{room}"
        )


def test_no_import_runs_upward() -> None:
    assert upward_imports("pricing", {**ROOMS, **TOP}) == []


def test_the_layers_above_import_only_the_face() -> None:
    users = package_modules("service")
    reaching_in = [f"{s} imports {t}" for s, t in imports_of(users, ["pricing"]) if t != "pricing"]
    assert reaching_in == []


def test_the_face_exports_what_it_names() -> None:
    assert len(pricing.__all__) > 20
    assert [name for name in pricing.__all__ if not hasattr(pricing, name)] == []


def test_every_module_says_why_and_what_it_exports() -> None:
    for path in package_modules("pricing"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{path} has no module docstring"
        names = {
            t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
        }
        assert "__all__" in names or path.name == "py.typed", f"{path} has no __all__"


def test_no_function_in_pricing_is_longer_than_sixty_lines() -> None:
    lengths = function_lengths("pricing")
    assert len(lengths) > 100  # the walk found the package
    assert [(name, n) for name, n in lengths if n > MAX_FUNCTION_LINES] == []
