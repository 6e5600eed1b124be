"""The README's examples run as written, in order, from a clean checkout, and behave as shown.

Every command of the README's ``sh`` blocks runs in one bash, top to bottom, as a reader types them
into a terminal (``readme_shell``), in the root of a copy of the repository's files (what a clone
holds: ``git ls-files``, no ``.venv``, no ``var/``): the server the README starts with ``make serve``
answers the rest, on a fresh database. Each command must exit 0 and print the output the README shows
under it (numbers to the digits shown, ``…`` for what changes run to run); a ``curl`` the README shows
no output for must not answer a problem. Nothing may be left in the checkout.

What the test changes, and nothing else:

- the server gets a free port and a database in a temporary folder: ``localhost:8000`` in a command
  becomes that port, and the shell starts with ``GPUPLAN_PORT`` and ``GPUPLAN_DB`` set to them (as
  ``make serve`` reads them); no other ``GPUPLAN_*`` variable is passed in;
- ``make serve`` runs ``gpuplan serve``, what it runs once ``.venv`` is installed (``make test`` has
  installed it; ``tests/service/test_make_serve.py`` checks the Makefile), and ``.venv/bin/gpuplan`` is
  the ``gpuplan`` of the interpreter running the tests;
- the commands of ``SKIPPED`` are not run, each for the reason given.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.live_server import free_port
from tests.service.readme_shell import Example, Shell, examples, mismatch

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent

SKIPPED = {
    "make test": "it is the test suite this test belongs to",
    ".venv/bin/pytest": "an accuracy report (slow); make accuracy runs it",
    "docker ": "no Docker engine on the test machines (tests/deploy checks the files)",
    "kubectl ": "no cluster on the test machines (tests/deploy renders and validates the manifests)",
    "(cd deploy/k8s": "kustomize edits the manifests for a registry of one's own",
    "curl -s localhost:8080": "the Compose stack's nginx (needs Docker)",
}
"""Commands (by how they start) that are not run, and why."""

_TIMEOUT_S = 600.0
"""For one command: the first start of the server and the largest plans take a while on 2 busy cores."""


def _runnable(example: Example) -> bool:
    return not any(example.command.startswith(prefix) for prefix in SKIPPED)


def _as_run(command: str, port: int) -> str:
    command = command.replace("localhost:8000", f"127.0.0.1:{port}")
    command = command.replace(".venv/bin/gpuplan", str(BIN / "gpuplan"))
    return command.replace("make serve", f"{BIN / 'gpuplan'} serve")


def _problem(output: str) -> str | None:
    """The title of a problem+json answer (a failed request), if ``output`` is one."""
    try:
        body = json.loads(output)
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("status"), int) and body["status"] >= 400:
        return f"{body['status']} {body.get('title')}: {body.get('detail')}"
    return None


def _checkout(folder: Path) -> Path:
    """The repository's files (committed or not, less what git ignores) copied into ``folder``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    return folder


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[tuple[Shell, int, Path]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    env.update(
        GPUPLAN_PORT=str(port),
        GPUPLAN_DB=str(tmp_path / "db" / "gpuplan.duckdb"),
        TMPDIR=str(tmp_path),  # mktemp -d
    )
    (tmp_path / "runs").mkdir()
    checkout = _checkout(tmp_path / "checkout")
    opened = Shell(tmp_path / "runs", checkout, env)
    try:
        yield opened, port, checkout
    finally:
        opened.close()


def test_shown_output_matches_as_documented() -> None:
    shown = ['{"owned": 2.94, "id": "of-…",', ' "rows": 56, …}']
    assert mismatch(shown, '{"owned":2.9412,"id":"of-104d5fa94188","rows":56,"more":[1,2]}\n') is None
    differs = "a number differs from the one shown"
    assert mismatch(shown, '{"owned":2.9512,"id":"of-1","rows":56,"x":1}') == differs
    assert mismatch(shown, '{"owned":2.94,"id":"of-1","rows":57,"x":1}') == differs
    assert mismatch(["0,1.5,…", "1,2"], "0,1.5,1,7\n1,2\n") is None  # numbers choose where `…` ends
    assert mismatch(shown, '{"owned":2.94,"id":"pl-1","rows":56,"x":1}') == "the text differs"
    assert mismatch(["h100-sxm 1.29 …"], "h100-sxm 1.2899 and more") is None
    assert mismatch(["version 4"], "version 4\nversion 5") == "the text differs"  # all of it, or `…`


def test_commands_and_their_shown_output_are_told_apart() -> None:
    text = (
        '```sh\n# a note\nexport A=1\ncurl -s x \\\n  -d \'{\n  "a": 1}\'\n# {"ok": true}\n\n'
        "# another note\ncat > f <<'JSON'\n{\"b\": 2}\nJSON\nprintf 'x' |\n  wc -c\n# 1\n```\n"
    )
    found = examples(text)
    assert [e.command.splitlines()[0] for e in found] == [
        "export A=1",
        "curl -s x \\",
        "cat > f <<'JSON'",
        "printf 'x' |",
    ]
    assert [e.shown for e in found] == [[], ['{"ok": true}'], [], ["1"]]
    assert found[1].command.endswith('"a": 1}\'') and found[2].command.endswith("JSON")


def test_the_readme_has_examples_to_run() -> None:
    found = examples(README)
    assert sum(_runnable(e) for e in found) >= 20
    assert sum(bool(e.shown) for e in found) >= 8
    for prefix in SKIPPED:  # every reason to skip is still needed
        assert any(e.command.startswith(prefix) for e in found), prefix


def test_every_readme_example_runs_as_written_and_shows_what_the_readme_shows(
    shell: tuple[Shell, int, Path],
) -> None:
    bash, port, checkout = shell
    before = _tree(checkout)
    failures: list[str] = []
    for example in filter(_runnable, examples(README)):
        status, out, err = bash.run(_as_run(example.command, port), _TIMEOUT_S)
        where = f"README line {example.line}: {example.command.splitlines()[0]}"
        if status != 0:
            failures.append(f"{where}: exit {status}: {err.strip()[-600:]}")
        elif example.shown and (why := mismatch(example.shown, out)):
            failures.append(f"{where}: {why}; it printed:\n{out[:3000]}")
        elif not example.shown and example.command.startswith("curl") and (problem := _problem(out)):
            failures.append(f"{where}: answered {problem}")
    assert failures == [], "\n\n".join(failures)
    assert _tree(checkout) == before, "the examples left files in the checkout"
