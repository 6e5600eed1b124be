"""The rules of a package laid out in rooms (solver/, pricing/): read with ``ast``, so a new room, an
import running upward or a long function fails a test by name.

A package has a few modules at its top (``errors``, shared basics), rooms (sub-packages) in a
dependency order, and one face: its ``__init__`` re-exports, with ``__all__``, what the layers above
use; each room's ``__init__`` re-exports its modules' public names."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["Imports", "function_lengths", "imports_of", "package_modules", "upward_imports"]

MAX_FUNCTION_LINES = 60
REPO = Path(__file__).resolve().parents[1]


def package_modules(package: str) -> list[Path]:
    """Every module of ``package`` (a folder of the repository), sorted."""
    return sorted((REPO / package).rglob("*.py"))


Imports = list[tuple[str, str]]
"""(importing module's dotted name, imported module's dotted name)."""


def _dotted(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(paths: Sequence[Path], prefixes: Sequence[str]) -> Imports:
    """The ``from X import``/``import X`` edges whose target starts with one of ``prefixes``, anywhere
    in the module (function-level imports included)."""
    found: Imports = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            found += [(_dotted(path), t) for t in targets if t.split(".")[0] in prefixes]
    return found


def _room(dotted: str, package: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == package else ""


def upward_imports(package: str, order: dict[str, int]) -> list[str]:
    """Imports inside ``package`` from a room to a room of the same or a higher rank (a room may import
    itself). ``order`` ranks the rooms and top-level modules; the face (``package`` itself) ranks above all."""
    bad = []
    for source, target in imports_of(package_modules(package), [package]):
        src, dst = _room(source, package), _room(target, package)
        if source == package or src == dst:
            continue
        if dst == "" or order.get(dst, 99) >= order.get(src, 99):
            bad.append(f"{source} imports {target}")
    return bad


def _lengths(path: Path) -> Iterator[tuple[str, int]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            yield f"{path.relative_to(REPO)}:{node.lineno} {node.name}", node.end_lineno - first + 1


def function_lengths(package: str) -> list[tuple[str, int]]:
    """Every function and method of ``package`` with its length in lines (decorators included)."""
    return [f for path in package_modules(package) for f in _lengths(path)]
