"""deploy/k8s: the kustomize base and the CronJob overlay, rendered as kustomize would (``kustomize``),
validated against the Kubernetes OpenAPI schemas of pinned versions (``kubernetes-validate``, strict:
an unknown field is an error), and checked for the facts a cluster depends on."""

from __future__ import annotations

import copy
import csv
import re
import tempfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from service.cli import _parser
from service.price_sheets.sources import load_sources
from tests.deploy.environment import check_variables
from tests.deploy.kustomize import Resource, build, files

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
BASE = K8S / "base"
CRONJOB = K8S / "cronjob"

K8S_VERSIONS = ("1.30", "1.37")
"""The oldest Kubernetes minor the manifests claim (batch/v1 CronJob ``timeZone``, autoscaling/v2 and
policy/v1 are all GA there) and the newest whose schemas kubernetes-validate 1.37 ships."""


def _one(resources: list[Resource], kind: str, name: str | None = None) -> Resource:
    found = [r for r in resources if r["kind"] == kind and name in (None, r["metadata"]["name"])]
    assert len(found) == 1, f"{len(found)} {kind} resources named {name}"
    return found[0]


def _pod_spec(workload: Resource) -> dict[str, Any]:
    if workload["kind"] == "CronJob":
        spec: dict[str, Any] = workload["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    spec = workload["spec"]["template"]["spec"]
    return spec


def _pod_labels(workload: Resource) -> dict[str, str]:
    template = (
        workload["spec"]["jobTemplate"]["spec"]["template"]
        if workload["kind"] == "CronJob"
        else workload["spec"]["template"]
    )
    labels: dict[str, str] = template["metadata"]["labels"]
    return labels


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _env(container: dict[str, Any]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(literal values, name -> (Secret, key)) of a container's ``env``."""
    literal: dict[str, str] = {}
    secrets: dict[str, tuple[str, str]] = {}
    for item in container.get("env", []):
        if "value" in item:
            literal[item["name"]] = item["value"]
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            secrets[item["name"]] = (ref["name"], ref["key"])
    assert not container.get("envFrom"), "envFrom would set names no test sees"
    return literal, secrets


@pytest.fixture(scope="module")
def base() -> list[Resource]:
    return build(BASE)


@pytest.fixture(scope="module")
def overlay() -> list[Resource]:
    return build(CRONJOB)


def test_every_file_is_rendered_and_validates_strictly(base: list[Resource], overlay: list[Resource]) -> None:
    for version in K8S_VERSIONS:
        for resource in [*base, *overlay]:
            kubernetes_validate.validate(resource, version, strict=True)
    assert {p.resolve() for p in K8S.rglob("*.yaml")} == files(CRONJOB)  # no manifest escapes the checks
    assert [r["kind"] for r in base] == [
        "Secret",
        "ConfigMap",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
    ]
    assert sorted(r["kind"] for r in overlay) == sorted([r["kind"] for r in base] + ["CronJob"])


def test_strict_validation_rejects_a_misspelt_field(base: list[Resource]) -> None:
    broken = copy.deepcopy(_one(base, "Deployment"))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError, match="readinesProbe"):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)


def test_three_replicas_serve_and_are_probed_on_the_health_endpoints(base: list[Resource]) -> None:
    deployment = _one(base, "Deployment", "gpuplan")
    assert deployment["spec"]["replicas"] == 3
    assert _selects(deployment["spec"]["selector"]["matchLabels"], _pod_labels(deployment))
    (container,) = _pod_spec(deployment)["containers"]
    args = _parser().parse_args(container["command"][1:])
    assert container["command"][0] == "gpuplan" and args.command == "serve"
    literal, _secrets = _env(container)
    settings = check_variables(literal, set(_secrets))
    assert settings.host == "0.0.0.0"  # reachable from the kubelet and the Service
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert list(ports.values()) == [settings.port]
    for probe, path in [
        ("startupProbe", "/health/live"),
        ("livenessProbe", "/health/live"),
        ("readinessProbe", "/health/ready"),
    ]:
        get = container[probe]["httpGet"]
        assert get["path"] == path
        assert ports.get(get["port"], get["port"]) == settings.port
    service = _one(base, "Service", "gpuplan")
    assert _selects(service["spec"]["selector"], _pod_labels(deployment))
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= {*ports, settings.port}


def test_disruption_budget_and_autoscaler_fit_the_deployment(base: list[Resource]) -> None:
    deployment = _one(base, "Deployment", "gpuplan")
    pdb = _one(base, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert 0 < pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]  # a drain can proceed
    hpa = _one(base, "HorizontalPodAutoscaler")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", "gpuplan")
    assert hpa["spec"]["minReplicas"] == deployment["spec"]["replicas"] < hpa["spec"]["maxReplicas"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    (container,) = _pod_spec(deployment)["containers"]
    assert "cpu" in container["resources"]["requests"]  # utilisation is measured against the request


def test_secrets_and_the_sources_file_exist_where_the_pods_look(
    overlay: list[Resource], tmp_path: Path
) -> None:
    secret = _one(overlay, "Secret", "gpuplan")
    values = {**secret.get("stringData", {}), **secret.get("data", {})}
    assert values and all("REPLACE_ME" in v for v in values.values())  # placeholders, clearly marked
    config_map = _one(overlay, "ConfigMap", "gpuplan-sources")
    for workload in (_one(overlay, "Deployment"), _one(overlay, "CronJob")):
        pod = _pod_spec(workload)
        (container,) = pod["containers"]
        literal, secrets = _env(container)
        for name, (secret_name, key) in secrets.items():
            assert secret_name == "gpuplan" and key in values, name
        assert secrets["GPUPLAN_DB"] == ("gpuplan", "db-url")
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
        folder, _slash, key = literal["GPUPLAN_SOURCES"].rpartition("/")
        mounted = volumes[mounts[folder]["name"]]
        assert mounted["configMap"]["name"] == config_map["metadata"]["name"] and mounts[folder]["readOnly"]
        file = tmp_path / key
        file.write_text(config_map["data"][key])
        sources = load_sources(str(file))  # the real parser accepts the mounted file
        assert sources and all(s.url.startswith("https://") for s in sources)


def test_pods_run_as_the_image_user_on_a_read_only_root(overlay: list[Resource]) -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    uid = int(re.search(r"--uid (\d+)", dockerfile).group(1))  # type: ignore[union-attr]
    gid = int(re.search(r"--gid (\d+)", dockerfile).group(1))  # type: ignore[union-attr]
    home = re.search(r"--home-dir (\S+)", dockerfile).group(1)  # type: ignore[union-attr]
    for workload in (_one(overlay, "Deployment"), _one(overlay, "CronJob")):
        pod = _pod_spec(workload)
        context = pod["securityContext"]
        assert (context["runAsNonRoot"], context["runAsUser"], context["runAsGroup"]) == (True, uid, gid)
        assert pod["automountServiceAccountToken"] is False
        (container,) = pod["containers"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        volumes = {v["name"]: v for v in pod["volumes"]}
        writable = {m["mountPath"] for m in container["volumeMounts"] if "emptyDir" in volumes[m["name"]]}
        assert {tempfile.gettempdir(), home} <= writable  # temp files, and the user's home (caches)
        assert container["resources"]["limits"]["memory"]


def test_cronjob_variant_turns_the_scheduler_off_and_refreshes_with_the_same_configuration(
    base: list[Resource], overlay: list[Resource]
) -> None:
    deployment = _one(overlay, "Deployment", "gpuplan")
    (container,) = _pod_spec(deployment)["containers"]
    literal, secrets = _env(container)
    assert literal["GPUPLAN_SCHEDULER"] == "off"
    assert check_variables(literal, set(secrets)).run_scheduler is False
    (base_container,) = _pod_spec(_one(base, "Deployment", "gpuplan"))["containers"]
    base_literal, base_secrets = _env(base_container)
    assert check_variables(base_literal, set(base_secrets)).run_scheduler  # the base schedules refreshes
    unpatched = copy.deepcopy(deployment)
    _pod_spec(unpatched)["containers"][0]["env"] = [
        e for e in container["env"] if e["name"] != "GPUPLAN_SCHEDULER"
    ]
    assert unpatched == _one(base, "Deployment", "gpuplan")  # the patch changes nothing else

    cronjob = _one(overlay, "CronJob")
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    pod = _pod_spec(cronjob)
    assert pod["restartPolicy"] == "Never"
    (job,) = pod["containers"]
    args = _parser().parse_args(job["command"][1:])  # the real command line of `gpuplan`
    assert job["command"][0] == "gpuplan" and (args.command, args.prices_command) == ("prices", "refresh")
    assert job["image"] == container["image"]
    job_literal, job_secrets = _env(job)
    check_variables(job_literal, set(job_secrets))
    assert {"GPUPLAN_DB", "GPUPLAN_SOURCES"} <= {*job_literal, *job_secrets}
    assert job_literal.items() <= literal.items() and job_secrets.items() <= secrets.items()
    assert pod["volumes"] == _pod_spec(deployment)["volumes"]
    assert job["volumeMounts"] == container["volumeMounts"]
    assert not _selects(_one(overlay, "Service")["spec"]["selector"], _pod_labels(cronjob))
    assert not _selects(
        _one(overlay, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"], _pod_labels(cronjob)
    )


def test_an_image_set_by_kustomize_edit_reaches_every_workload(tmp_path: Path) -> None:
    """What the README's ``kustomize edit set image gpuplan=REGISTRY/gpuplan:TAG`` writes."""
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {CRONJOB}\nimages:\n  - name: gpuplan\n    newName: registry.example/gpuplan\n"
        "    newTag: 0.2.0\n"
    )
    rendered = build(overlay)
    images = {
        c["image"]
        for kind in ("Deployment", "CronJob")
        for c in _pod_spec(_one(rendered, kind))["containers"]
    }
    assert images == {"registry.example/gpuplan:0.2.0"}


def test_the_sources_refresh_every_provider_of_the_shipped_catalog(
    overlay: list[Resource], tmp_path: Path
) -> None:
    """The shipped rental sheet is 20 providers' SkyPilot catalogs; the example refreshes each of them
    from the file its rows came from (``source_file``), replacing the shipped offers."""
    with (ROOT / "service" / "data" / "cloud_gpu_prices.csv").open(encoding="utf-8") as shipped:
        files = {row["provider"]: row["source_file"] for row in csv.DictReader(shipped)}
    file = tmp_path / "sources.toml"
    file.write_text(_one(overlay, "ConfigMap", "gpuplan-sources")["data"]["sources.toml"])
    sources = load_sources(str(file))
    assert sorted(s.provider or "" for s in sources) == sorted(files)
    catalog = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/"
    for source in sources:
        assert source.provider is not None
        assert source.url == catalog + files[source.provider], source.name
        assert source.format == "cloud_catalog_csv" and source.retire_seed_provider, source.name
