"""The files in ``examples/`` and the README's command examples work as written: every example workload
plans, every estimate body estimates, every sample sheet imports through ``examples/sources.toml``, every
file the README names under ``examples/`` exists, and every ``gpuplan`` line of the README (examples and
the CLI synopsis) parses. (The README's examples run end to end: test_readme_examples.py.)"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from service.cli import _parser, main
from service.console import glue_dash_values
from service.db.store import Store
from service.price_sheets.refresh import Refresher
from service.price_sheets.sources import load_sources

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _only_json(capfd: pytest.CaptureFixture[str]) -> object:
    """stdout (file descriptor level: a native solver banner would show) as one JSON document."""
    out = capfd.readouterr().out
    return json.loads(out)


@pytest.mark.parametrize("path", sorted((EXAMPLES / "workloads").glob("*.json")), ids=lambda p: p.stem)
def test_every_example_workload_plans_as_json(
    path: Path, cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(path), "--db", cli_db, "--json"]) == 0
    plan = _only_json(capfd)
    assert isinstance(plan, dict) and plan["plan_id"].startswith("pl-")


@pytest.mark.parametrize("path", sorted((EXAMPLES / "estimates").glob("*.json")), ids=lambda p: p.stem)
def test_every_example_estimate_body_estimates_as_json(
    path: Path, cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    command = path.stem.split("-")[0]
    assert command in ("memory", "throughput")
    assert main([command, str(path), "--db", cli_db, "--json"]) == 0
    assert isinstance(_only_json(capfd), dict)


@pytest.mark.parametrize(
    "argv",
    [
        ["gpus", "--json"],
        ["offers", "--gpu", "H100", "--sort", "-price_per_hour_usd", "--limit", "3", "--json"],
        ["db", "stats", "--json"],
        ["prices", "providers", "--json"],
        [
            "buy-vs-rent",
            "--gpu",
            "h100-sxm",
            "--gpu-count",
            "8",
            "--horizon-months",
            "36",
            "--utilization",
            "0.7",
            "--json",
        ],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_json_option_prints_only_json(
    argv: list[str], cli_db: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--db", cli_db]) == 0
    assert _only_json(capfd)


def test_every_sample_sheet_imports_through_the_example_sources(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)  # the sources file names its sheets relative to the repository root
    sources = load_sources(str(EXAMPLES / "sources.toml"))
    named = {Path(s.url).name for s in sources}
    assert named == {p.name for p in (EXAMPLES / "sheets").iterdir()}
    with Store.open(":memory:") as store:
        runs = Refresher(store, sources, sleep=lambda _: None).run_all()
    assert [(r.source, r.result) for r in runs] == [(s.name, "ok") for s in sources], [r.error for r in runs]
    # and one of them through `gpuplan prices import … --json`
    db = str(tmp_path / "import.duckdb")
    sheet = str(EXAMPLES / "sheets" / "acme.csv")
    assert (
        main(["--db", db, "prices", "import", sheet, "--source", "acme", "--format", "rental_csv", "--json"])
        == 0
    )
    report = _only_json(capfd)
    assert isinstance(report, dict) and report["result"] == "ok" and report["accepted_rows"] == 4


def test_every_file_the_readme_names_under_examples_exists() -> None:
    named = set(re.findall(r"examples/[\w./-]+\.(?:json|csv|toml)", README))
    assert len(named) >= 5
    assert [name for name in sorted(named) if not (ROOT / name).is_file()] == []


def _readme_cli_lines() -> list[str]:
    """Every ``gpuplan …`` line of the README's ``sh`` and ``text`` blocks (the examples spell it
    ``.venv/bin/gpuplan``), continuation lines joined, comments and here-documents cut."""
    lines: list[str] = []
    for block in re.findall(r"```(?:sh|text)\n(.*?)```", README, re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            command = line.split("  #")[0].split(" <<")[0].strip().removeprefix(".venv/bin/")
            if command.startswith("gpuplan "):
                lines.append(command)
    return lines


def _alternatives(usage: str) -> list[list[str]]:
    """A usage line as runnable argument lists: ``[--x 1]`` once with and once without its contents
    taken, ``(a | b)`` and ``A|B`` their first choice, ``…`` an option's value or nothing."""
    usage = re.sub(r"(--[\w-]+) …", r"\1 x", usage).replace("…", "")  # `--region …`: some region
    usage = re.sub(r"\(([^()|]*)\|[^()]*\)", r"\1", usage)  # (a | b): a
    usage = re.sub(r"\[([^\[\]|]*)\|[^\[\]]*\]", r"[\1]", usage)  # [a | b]: a
    full = re.sub(r"[\[\]]", " ", usage)
    bare = re.sub(r"\[[^\[\]]*\]", " ", usage)
    out = []
    for text in (full, bare):
        words = [w.split("|")[0] for w in shlex.split(text)[1:]]
        out.append(words)
    return out


def test_every_readme_cli_line_parses_as_written() -> None:
    parser = _parser()
    lines = _readme_cli_lines()
    assert any("--sort -price_per_hour_usd" in line for line in lines)
    for line in lines:
        for argv in _alternatives(line):
            try:
                parser.parse_args(glue_dash_values(argv))
            except SystemExit:
                pytest.fail(f"README line does not parse: {line!r} (as {argv})")
