"""The measured LLM training throughput table the throughput model calibrates on.

Checks the file's shape and vocabulary, that every GPU and model name resolves, and that the numbers hold
together: where a source states its own utilisation (``mfu=``) or model TFLOP/s per GPU (``model_tflops=``),
the figure implied by the row's tokens/s and :func:`solver.throughput.workcost.train_flops_per_token` must agree within
20 %. That catches transcription slips (a wrong GPU count, a per-GPU figure taken for an aggregate) and wrong
catalog shapes. Sources count FLOPs slightly differently; a row whose source counts the whole T×T attention
score matrix (PaLM/MPT convention, ``attn_flops=full``) is compared with the causal half doubled. Run with
``-s`` to print the comparison table.
"""

from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path
from typing import Final

from pricing.rules.aliases import AliasTable
from service.db.seed_files import read_alias_rules, read_gpu_specs
from solver.catalog.models import ModelArch, active_params, lookup_model
from solver.throughput.workcost import forward_flops, train_flops_per_token

DATA_FILE: Final = Path(__file__).resolve().parents[3] / "service" / "data" / "throughput_training_llm.csv"
PROFILES_FILE: Final = DATA_FILE.with_name("throughput_profiles.csv")
TOLERANCE: Final = 0.20

FP8_AT_TWICE_BF16: Final = frozenset(
    {"H100 SXM", "H100 PCIe", "H100 NVL", "H200 SXM", "H200 NVL", "GH200 96GB", "GH200 144GB", "B200", "GB200",
     "B300", "GB300", "MI300X", "MI325X", "MI350X", "MI355X"}
)  # fmt: skip
"""GPUs whose dense FP8 matrix peak is twice their dense BF16 peak (Hopper, Blackwell, CDNA3/CDNA4)."""

INTERCONNECT = re.compile(
    r"^(none|nvlink|xgmi)$|^(nvlink|xgmi)\+(infiniband|roce|efa|ethernet|gpudirect_tcpx|multinode)$"
)
KEY_VALUE = re.compile(r"^[a-z_]+=[^=;]*\S$")


def _rows() -> list[dict[str, str]]:
    with DATA_FILE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _keys(notes: str) -> dict[str, str]:
    """The leading ``key=value`` segments of a notes cell (free text follows them)."""
    keys: dict[str, str] = {}
    for part in notes.split("; "):
        if not KEY_VALUE.match(part):
            break
        key, value = part.split("=", 1)
        keys[key] = value
    return keys


ROWS: Final = _rows()
ALIASES: Final = AliasTable(read_alias_rules())
BF16_TFLOPS: Final = {spec.name: spec.bf16_tflops for spec in read_gpu_specs()}


def test_columns_match_the_profiles_file_exactly() -> None:
    with DATA_FILE.open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    with PROFILES_FILE.open(newline="", encoding="utf-8") as handle:
        profiles_header = next(csv.reader(handle))
    assert table[0] == profiles_header
    assert len(profiles_header) == 12
    assert all(len(row) == 12 for row in table[1:])
    assert len(table) > 60


def test_every_gpu_resolves_to_a_catalog_gpu() -> None:
    for row in ROWS:
        assert ALIASES.resolve(row["gpu"]) in BF16_TFLOPS, row["gpu"]


def test_every_model_resolves() -> None:
    for row in ROWS:
        arch = lookup_model(row["model"])
        assert arch.is_transformer and arch.family == "decoder", row["model"]


def test_values_and_vocabulary() -> None:
    seen: set[tuple[str, ...]] = set()
    for row in ROWS:
        count = int(row["gpu_count"])
        assert count >= 1
        assert float(row["value"]) > 0
        assert int(row["batch_size"]) >= 1
        assert int(row["seq_len_or_resolution"]) >= 1
        assert row["metric"] == "tokens_per_s"
        assert row["task"] in {"train", "fine_tune"}
        assert row["precision"] in {"bf16", "fp16", "fp8"}
        assert INTERCONNECT.match(row["interconnect"]), row["interconnect"]
        assert (row["interconnect"] == "none") == (count == 1)
        assert ":" in row["source"] and row["notes"]
        key = tuple(row[c] for c in ("source", "gpu", "gpu_count", "model", "precision", "batch_size",
                                     "seq_len_or_resolution", "notes"))  # fmt: skip
        assert key not in seen, key
        seen.add(key)


def test_notes_start_with_the_key_value_prefix() -> None:
    for row in ROWS:
        keys = _keys(row["notes"])
        assert keys.get("stack") in {"optimized", "standard"}, row["notes"]
        assert keys.get("method") in {"full", "lora", "qlora"}, row["notes"]
        assert "framework" in keys, row["notes"]
        if row["task"] == "train":
            assert keys["method"] == "full", row["notes"]


def _peak_flops(gpu: str, precision: str) -> float:
    """Dense peak FLOP/s at the row's precision (BF16 from gpu_specs; FP8 twice that where the GPU has it)."""
    bf16 = BF16_TFLOPS[ALIASES.resolve(gpu)]
    assert bf16 is not None, gpu
    if precision == "fp8":
        assert gpu in FP8_AT_TWICE_BF16, gpu
        return 2e12 * bf16
    return 1e12 * bf16


def _flops_per_token(arch: ModelArch, seq: int, keys: dict[str, str]) -> float:
    """Model FLOPs per token in the row's source convention (no recomputation counted)."""
    method = "lora" if keys["method"] == "lora" else "full"
    flops = train_flops_per_token(arch, seq, method, "none")
    if keys.get("attn_flops") == "full":
        causal_attention = forward_flops(arch, seq) / seq - 2.0 * active_params(arch) * 1e9
        flops += (2.0 if method == "lora" else 3.0) * causal_attention
    return flops


def _comparisons() -> list[tuple[dict[str, str], str, float, float]]:
    """(row, quantity, stated, implied) for every row that states a utilisation figure."""
    out = []
    for row in ROWS:
        keys = _keys(row["notes"])
        if "mfu" not in keys and "model_tflops" not in keys:
            continue
        assert keys["method"] != "qlora", "QLoRA rows carry no FLOPs figure to check"
        per_gpu = float(row["value"]) / int(row["gpu_count"])
        flops = per_gpu * _flops_per_token(
            lookup_model(row["model"]), int(row["seq_len_or_resolution"]), keys
        )
        if "mfu" in keys:
            out.append((row, "mfu", float(keys["mfu"]), flops / _peak_flops(row["gpu"], row["precision"])))
        if "model_tflops" in keys:
            out.append((row, "model_tflops", float(keys["model_tflops"]), flops / 1e12))
    return out


def test_stated_utilisation_matches_the_row() -> None:
    comparisons = _comparisons()
    assert len(comparisons) > 50
    print(f"\n{'source':<45} {'gpu':<14} {'n':>5} {'model':<16} {'prec':<5} {'seq':>6} {'what':<12} "
          f"{'stated':>8} {'implied':>8} {'ratio':>6}")  # fmt: skip
    for row, what, stated, implied in comparisons:
        print(f"{row['source'].split(':')[0][-45:]:<45} {row['gpu']:<14} {row['gpu_count']:>5} "
              f"{row['model']:<16} {row['precision']:<5} {row['seq_len_or_resolution']:>6} {what:<12} "
              f"{stated:>8.3f} {implied:>8.3f} {implied / stated:>6.3f}")  # fmt: skip
    ratios = [implied / stated for _, _, stated, implied in comparisons]
    print(f"ratio min {min(ratios):.3f} median {statistics.median(ratios):.3f} max {max(ratios):.3f}")
    bad = [(r["model"], r["gpu"], w, s, i) for r, w, s, i in comparisons if abs(i / s - 1) > TOLERANCE]
    assert not bad


def test_the_check_catches_a_per_gpu_figure_taken_for_an_aggregate() -> None:
    row, _, stated, implied = next(c for c in _comparisons() if int(c[0]["gpu_count"]) >= 8)
    assert abs(implied / stated - 1) <= TOLERANCE
    assert abs(implied / int(row["gpu_count"]) / stated - 1) > TOLERANCE
