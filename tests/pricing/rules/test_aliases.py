from __future__ import annotations

import pytest

from pricing.errors import AliasRuleError, UnresolvedGpuName
from pricing.rules.aliases import AliasRule, AliasTable, NameContext
from service.db.seed_files import read_alias_rules, read_gpu_specs, read_seed_catalog

RULES = [
    AliasRule(alias="H100 SXM", canonical_gpu="H100 SXM"),
    AliasRule(
        alias="H100", canonical_gpu="H100 SXM", context="provider=lambda AND instance_type contains sxm"
    ),
    AliasRule(alias="H100", canonical_gpu="H100 PCIe", context="provider=lambda"),
    AliasRule(alias="A100", canonical_gpu="A100 40GB SXM", context="instance_type matches ^p4d\\."),
    AliasRule(alias="A100", canonical_gpu="A100 80GB SXM", context="gpu_memory_gib>=60"),
    AliasRule(alias="A100", canonical_gpu="A100 40GB PCIe", context="gpu_memory_gib<60"),
    AliasRule(alias="L4", canonical_gpu="L4", context="file=serving.csv"),
]


def test_context_free_name_resolves_anywhere() -> None:
    assert AliasTable(RULES).resolve("h100 sxm") == "H100 SXM"


def test_most_specific_rule_wins() -> None:
    table = AliasTable(RULES)
    sxm = NameContext(provider="lambda", instance_type="gpu_1x_h100_sxm5")
    pcie = NameContext(provider="lambda", instance_type="gpu_1x_h100_pcie")
    assert table.resolve("H100", sxm) == "H100 SXM"
    assert table.resolve("H100", pcie) == "H100 PCIe"


def test_memory_and_regex_clauses() -> None:
    table = AliasTable(RULES)
    assert table.resolve("A100", NameContext(gpu_memory_gib=80)) == "A100 80GB SXM"
    assert table.resolve("A100", NameContext(gpu_memory_gib=40)) == "A100 40GB PCIe"
    assert table.resolve("L4", NameContext(file="serving.csv")) == "L4"


def test_tie_between_gpus_is_an_error_not_a_guess() -> None:
    table = AliasTable(RULES)
    with pytest.raises(UnresolvedGpuName, match="tie"):
        table.resolve("A100", NameContext(instance_type="p4d.24xlarge", gpu_memory_gib=40))


def test_ambiguous_name_without_matching_context_is_unresolved() -> None:
    with pytest.raises(UnresolvedGpuName, match="ambiguous"):
        AliasTable(RULES).resolve("H100", NameContext(provider="aws"))


def test_unknown_name_is_unresolved() -> None:
    with pytest.raises(UnresolvedGpuName, match="unknown GPU name"):
        AliasTable(RULES).resolve("Z900")


def test_bad_clause_is_rejected() -> None:
    with pytest.raises(AliasRuleError):
        AliasTable([AliasRule(alias="X", canonical_gpu="X", context="vendor=nvidia")])
    with pytest.raises(AliasRuleError):
        AliasTable([AliasRule(alias="X", canonical_gpu="X", context="instance_type matches (")])


def test_shipped_alias_table_points_only_at_catalog_gpus() -> None:
    names = {g.name for g in read_gpu_specs()}
    assert {r.canonical_gpu for r in read_alias_rules()} <= names


def test_every_gpu_name_in_shipped_data_resolves() -> None:
    catalog = read_seed_catalog()
    unresolved = [p for p in catalog.problems if p.column in ("gpu", "accelerator")]
    assert unresolved == []
    assert len(catalog.offers.offers) == 930
    # Every profile row resolved: the three files hold 1350 + 309 + 138 rows.
    assert len(catalog.profiles.items) == 1807  # 10 at-scale training runs added (issue 22)
