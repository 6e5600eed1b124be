"""``kustomize build`` for the subset of kustomize that deploy/k8s uses, so the tests check what the
cluster receives without a kustomize binary (none ships on PyPI; the ``kustomize`` package there is a
little-used Python re-implementation, 0.6.0 of 2024, not kustomize itself).

Supported: ``resources`` (files, and folders holding a ``kustomization.yaml``), ``patches`` that are
strategic merge patches by ``path`` (the target is the patch's own kind and name) and ``images``
(``newName``/``newTag``, as ``kustomize edit set image`` writes them). Anything else in a
kustomization — a generator, a transformer, a JSON 6902 patch — is an error here rather than ignored,
so a manifest change that needs more of kustomize fails the tests until this renderer learns it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Resource", "build", "files", "load_documents", "strategic_merge"]

Resource = dict[str, Any]

_KUSTOMIZATION_KEYS = {"apiVersion", "kind", "resources", "patches", "images"}
_MERGED_BY_NAME = {"containers", "initContainers", "env", "volumes", "volumeMounts"}
"""Lists whose strategic-merge key is ``name`` (Kubernetes' ``patchMergeKey``)."""


def load_documents(path: Path) -> list[Resource]:
    """Every non-empty YAML document of a file."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def _key(resource: Resource) -> tuple[str, str]:
    return resource["kind"], resource["metadata"]["name"]


def _merge_list(key: str, base: list[Any], patch: list[Any]) -> list[Any]:
    if key not in _MERGED_BY_NAME:
        if key in ("ports", "containerPorts", "imagePullSecrets", "tolerations"):
            raise NotImplementedError(f"a strategic merge of {key!r} (other merge key) is not supported")
        return copy.deepcopy(patch)  # lists without a merge key are replaced whole
    merged = [copy.deepcopy(item) for item in base]
    index = {item["name"]: i for i, item in enumerate(merged)}
    for item in patch:
        if item["name"] in index:
            position = index[item["name"]]
            merged[position] = strategic_merge(merged[position], item)
        else:
            merged.append(copy.deepcopy(item))
    return merged


def strategic_merge(base: Resource, patch: Resource) -> Resource:
    """``patch`` merged into a copy of ``base`` as ``kubectl patch --type strategic`` does for the lists
    in ``_MERGED_BY_NAME``; ``null`` deletes a key. Directives (``$patch`` …) are not supported."""
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        if key.startswith("$"):
            raise NotImplementedError(f"strategic merge directive {key!r} is not supported")
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = strategic_merge(merged[key], value)
        elif isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = _merge_list(key, merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def build(folder: Path) -> list[Resource]:
    """The resources ``kustomize build folder`` emits (in the order of ``resources``)."""
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text(encoding="utf-8"))
    unknown = set(kustomization) - _KUSTOMIZATION_KEYS
    if unknown:
        raise NotImplementedError(f"{folder}: kustomization fields not supported here: {sorted(unknown)}")
    if (kustomization["apiVersion"], kustomization["kind"]) != (
        "kustomize.config.k8s.io/v1beta1",
        "Kustomization",
    ):
        raise ValueError(
            f"{folder}/kustomization.yaml is not a kustomize.config.k8s.io/v1beta1 Kustomization"
        )
    resources: list[Resource] = []
    for entry in kustomization.get("resources", []):
        path = (folder / entry).resolve()
        if not path.exists():
            raise FileNotFoundError(f"{folder}/kustomization.yaml: resource {entry!r} does not exist")
        resources.extend(build(path) if path.is_dir() else load_documents(path))
    seen: set[tuple[str, str]] = set()
    for resource in resources:
        if _key(resource) in seen:
            raise ValueError(f"{folder}: {_key(resource)} appears twice")
        seen.add(_key(resource))
    for patch_entry in kustomization.get("patches", []):
        if set(patch_entry) != {"path"}:
            raise NotImplementedError(
                f"{folder}: only `patches: - path: FILE` is supported, got {patch_entry}"
            )
        for patch in load_documents(folder / patch_entry["path"]):
            if not isinstance(patch, dict):
                raise NotImplementedError(f"{patch_entry['path']}: JSON 6902 patches are not supported")
            targets = [i for i, r in enumerate(resources) if _key(r) == _key(patch)]
            if len(targets) != 1:
                raise ValueError(f"{patch_entry['path']}: no resource {_key(patch)} to patch")
            resources[targets[0]] = strategic_merge(resources[targets[0]], patch)
    for image in kustomization.get("images", []):
        _set_image(resources, image)
    return resources


def _set_image(resources: list[Resource], image: dict[str, str]) -> None:
    """Point every container whose image is ``image["name"]`` (any tag) at the new name and tag."""
    if set(image) - {"name", "newName", "newTag"}:
        raise NotImplementedError(f"images: only name, newName and newTag are supported, got {image}")

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("containers", "initContainers"):
                for container in node.get(key, []):
                    name, _colon, tag = container["image"].partition(":")
                    if name == image["name"]:
                        new_tag = image.get("newTag", tag)
                        container["image"] = image.get("newName", name) + (f":{new_tag}" if new_tag else "")
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(resources)


def files(folder: Path) -> set[Path]:
    """Every file ``build(folder)`` reads: kustomizations, resources and patches."""
    kustomization = folder / "kustomization.yaml"
    read = {kustomization.resolve()}
    content = yaml.safe_load(kustomization.read_text(encoding="utf-8"))
    for entry in content.get("resources", []):
        path = (folder / entry).resolve()
        read |= files(path) if path.is_dir() else {path}
    read |= {(folder / p["path"]).resolve() for p in content.get("patches", [])}
    return read
