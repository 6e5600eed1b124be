"""The shape of the service package (issue 12): a few modules at the top, one package per feature, short
functions. Walks ``service/`` with ``ast``, so a new module or a long function fails here, by name."""

from __future__ import annotations

import ast
from pathlib import Path

import service

ROOT = Path(service.__file__).parent
MAX_TOP_MODULES = 10
MAX_FUNCTION_LINES = 60
FEATURES = (
    "db",
    "catalog",
    "price_sheets",
    "plans",
    "estimates",
    "buy_vs_rent",
    "measurements",
    "ops",
    "server",
    "web",
    "launch",
    "benchmarks",
)


def _functions(path: Path) -> list[tuple[str, int]]:
    """Every function and method of ``path`` with its length in lines (decorators included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            found.append(
                (f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name}", node.end_lineno - first + 1)
            )
    return found


def test_at_most_ten_modules_sit_directly_in_service() -> None:
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_each_feature_has_its_package_and_its_tests() -> None:
    tests = Path(__file__).parent
    for feature in FEATURES:
        assert (ROOT / feature / "__init__.py").is_file(), feature
        assert any((tests / feature).glob("test_*.py")), f"tests/service/{feature} mirrors service/{feature}"
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == set(FEATURES), packages


def test_no_function_in_service_is_longer_than_sixty_lines() -> None:
    lengths = [f for path in sorted(ROOT.rglob("*.py")) for f in _functions(path)]
    assert len(lengths) > 100  # the walk found the package
    too_long = [(name, n) for name, n in lengths if n > MAX_FUNCTION_LINES]
    assert too_long == [], too_long


def test_every_module_says_why_and_what_it_exports() -> None:
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{path} has no module docstring"
        if path.name != "__init__.py":
            names = {
                t.id
                for n in tree.body
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            assert "__all__" in names, f"{path} has no __all__"
