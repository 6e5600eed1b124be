"""deploy/compose.yaml: valid under the Compose Specification's JSON schema (the copy check-jsonschema
ships as ``vendor.compose-spec``, offline), and PostgreSQL with three replicas behind one port."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from service.http import MAX_UPLOAD_BYTES
from service.price_sheets.sources import load_sources
from tests.deploy.environment import check_variables

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
_INTERPOLATED = re.compile(r"\$\{[^}]+\}")


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())  # anchors and aliases resolved
    return loaded


def _replicas(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose["services"].items() if "build" in s}


def test_compose_file_validates_against_the_compose_spec(tmp_path: Path) -> None:
    done = _check_jsonschema(COMPOSE)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "compose.yaml"  # the schema is really applied: a wrong condition is refused
    broken.write_text(COMPOSE.read_text().replace("service_healthy", "service_is_healthy"))
    assert _check_jsonschema(broken).returncode == 1


def test_three_replicas_share_one_healthy_postgresql_15(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    assert postgres["image"].split(":")[1].startswith("15")
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    env_pg = postgres["environment"]
    replicas = _replicas(compose)
    assert len(replicas) == 3
    for name, service in replicas.items():
        assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).resolve() == (
            DEPLOY / "Dockerfile"
        ), name
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        env = {k: str(v) for k, v in service["environment"].items()}
        secrets = {k for k, v in env.items() if _INTERPOLATED.search(v)}
        settings = check_variables({k: v for k, v in env.items() if k not in secrets}, secrets)
        url = urlsplit(env["GPUPLAN_DB"])
        assert url.scheme == "postgresql" and url.hostname == "postgres" and url.port == 5432
        assert (url.username, url.password, url.path) == (
            env_pg["POSTGRES_USER"],
            env_pg["POSTGRES_PASSWORD"],
            f"/{env_pg['POSTGRES_DB']}",
        )
        assert settings.host == "0.0.0.0" and "GPUPLAN_ADMIN_TOKEN" in secrets
        probe = " ".join(service["healthcheck"]["test"])
        assert f"127.0.0.1:{settings.port}/health/ready" in probe


def test_the_sources_the_replicas_read_are_the_mounted_examples(compose: dict[str, Any]) -> None:
    for service in _replicas(compose).values():
        mounts = {}
        for volume in service["volumes"]:
            host, container, *_mode = volume.split(":")
            mounts[container] = (DEPLOY / host).resolve()
        sources_file = Path(service["environment"]["GPUPLAN_SOURCES"])
        folder = next(c for c in mounts if sources_file.is_relative_to(c))
        on_host = mounts[folder] / sources_file.relative_to(folder)
        sources = load_sources(str(on_host))
        for source in sources:  # sheet paths are relative to the working directory, as in the repository
            sheet = Path(service["working_dir"]) / source.url
            assert (mounts[folder] / sheet.relative_to(folder)).is_file(), source.url


def test_one_port_in_front_of_every_replica(compose: dict[str, Any]) -> None:
    published = [(name, s["ports"]) for name, s in compose["services"].items() if s.get("ports")]
    assert [name for name, _ports in published] == ["lb"]
    (ports,) = [p for _name, p in published]
    assert len(ports) == 1
    lb = compose["services"]["lb"]
    replicas = _replicas(compose)
    assert {name: d["condition"] for name, d in lb["depends_on"].items()} == dict.fromkeys(
        replicas, "service_healthy"
    )
    (conf_mount,) = [v for v in lb["volumes"] if v.startswith("./nginx.conf:")]
    assert conf_mount.split(":")[1] == "/etc/nginx/conf.d/default.conf"
    conf = (DEPLOY / "nginx.conf").read_text()
    upstream = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", conf, flags=re.MULTILINE)
    assert {(host, int(port)) for host, port in upstream} == {
        (name, int(s["environment"]["GPUPLAN_PORT"])) for name, s in replicas.items()
    }
    size, unit = re.search(r"client_max_body_size\s+(\d+)([kmg]?);", conf).groups()  # type: ignore[union-attr]
    # every upload gpuplan accepts passes nginx, so a larger one gets gpuplan's own 413 problem
    assert int(size) * 1024 ** "_kmg".index(unit or "_") >= MAX_UPLOAD_BYTES
