"""deploy/Dockerfile installs the package with ``pip install .``: it must copy every package, and the
package data must list every file the packages ship (data, templates), or the image starts without
them. (No Docker engine here: the image itself is not built by the tests.)"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_file_of_the_packages_is_package_data() -> None:
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    packages = [p.rstrip("*") for p in tool["setuptools"]["packages"]["find"]["include"]]
    data: dict[str, list[str]] = tool["setuptools"]["package-data"]
    for package in packages:
        shipped = [
            path.relative_to(ROOT / package).as_posix()
            for path in (ROOT / package).rglob("*")
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
        ]
        for name in shipped:
            # a file in a subpackage (service/web/templates) is matched by its parent package's patterns
            assert any(fnmatch.fnmatch(name, pattern) for pattern in data.get(package, [])), (
                f"{package}/{name} is not in [tool.setuptools.package-data]: the image would lack it"
            )


def test_the_image_copies_what_pip_install_needs() -> None:
    copied = {
        source
        for line in re.findall(r"^COPY (?!--from)(.+)$", DOCKERFILE.read_text(), flags=re.MULTILINE)
        for source in line.split()[:-1]
    }
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    packages = {p.rstrip("*") for p in tool["setuptools"]["packages"]["find"]["include"]}
    assert {"pyproject.toml", project["readme"], *packages} <= copied
