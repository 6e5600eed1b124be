"""The built-in model catalog and loose name lookup."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.catalog.models import ModelArch, active_params, list_models, lookup_model, normalise_name
from solver.errors import InvalidWorkload, UnknownModel

# Model strings of the measured profiles the throughput model maps onto the catalog.
PROFILE_NAMES = {
    "Llama 3 8B": "Llama 3 8B",
    "Llama 3 70B": "Llama 3 70B",
    "Llama 3.1 8B": "Llama 3.1 8B",
    "Llama 3.1 405B": "Llama 3.1 405B",
    "Llama 3.3 70B": "Llama 3.3 70B",
    "Llama 4 Scout": "Llama 4 Scout",
    "Llama 4 Maverick": "Llama 4 Maverick",
    "Qwen2.5-0.5B": "Qwen2.5-0.5B",
    "Qwen2.5-7B": "Qwen2.5-7B",
    "Qwen2.5-32B": "Qwen2.5-32B",
    "Qwen3-30B-A3B": "Qwen3-30B-A3B",
    "Qwen3-235B-A22B": "Qwen3-235B-A22B",
    "Llama 2 70B Chat": "Llama 2 70B",
    "Mixtral 8x7B": "Mixtral 8x7B",
    "DeepSeek-R1": "DeepSeek-R1",
    "GPT-J 6B (CNN/DailyMail summarization)": "GPT-J 6B",
    "Llama 3.1 8B (CNN/DailyMail summarization)": "Llama 3.1 8B",
    "BERT-large (SQuAD v1.1 fine-tune)": "BERT-large",
    "BERT-base (SQuAD v1.1 fine-tune)": "BERT-base",
    "BERT-large (SQuAD v1.1 inference)": "BERT-large",
    "ResNet-50": "ResNet-50",
    "ResNet-50 (inference)": "ResNet-50",
    "Llama-2-7b": "Llama 2 7B",
}

HUB_IDS = {
    "meta-llama/Llama-2-7b-hf": "Llama 2 7B",
    "meta-llama/Llama-2-7b-chat-hf": "Llama 2 7B",
    "meta-llama/Meta-Llama-3-8B": "Llama 3 8B",
    "meta-llama/Meta-Llama-3-8B-Instruct": "Llama 3 8B",
    "meta-llama/Llama-3.1-70B-Instruct": "Llama 3.1 70B",
    "Qwen/Qwen2.5-7B": "Qwen2.5-7B",
    "Qwen/Qwen2.5-7B-Instruct": "Qwen2.5-7B",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "Qwen3-235B-A22B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "Mixtral 8x7B",
    "mistralai/Mistral-7B-Instruct-v0.2": "Mistral 7B",
    "google/gemma-2-9b-it": "Gemma 2 9B",
    "bigcode/octocoder": "StarCoder",
    "bigscience/bloomz-7b1": "BLOOM 7B1",
    "Llama 3 70B Chat": "Llama 3 70B",
    "llama-3-8b": "Llama 3 8B",
    "LLAMA_3_8B": "Llama 3 8B",
    "  Llama 3 8B  ": "Llama 3 8B",
}


@pytest.mark.parametrize(("spelling", "expected"), sorted({**PROFILE_NAMES, **HUB_IDS}.items()))
def test_lookup_accepts_common_spellings(spelling: str, expected: str) -> None:
    assert lookup_model(spelling).name == expected


def test_catalog_names_are_unique_and_resolve_to_themselves() -> None:
    models = list_models()
    assert len({m.name for m in models}) == len(models)
    for arch in models:
        assert lookup_model(arch.name) is arch
        for alias in arch.aliases:
            assert lookup_model(alias) is arch


def test_catalog_entries_are_consistent() -> None:
    for arch in list_models():
        assert arch.params_b > 0
        assert arch.source
        assert 1 <= arch.active_experts <= arch.experts
        if arch.is_transformer:
            assert arch.attention_heads % arch.kv_heads == 0, arch.name
            assert arch.max_seq_len > 0 and arch.vocab_size > 0
            assert arch.embedding_params < arch.params_b * 1e9, arch.name
            if arch.head_dim is None:
                assert arch.hidden_size % arch.attention_heads == 0, arch.name
        else:
            assert arch.saved_activations_per_sample, arch.name
            assert arch.reference_input


def test_published_shapes() -> None:
    llama = lookup_model("Llama 3 8B")
    assert (llama.layers, llama.hidden_size, llama.intermediate_size) == (32, 4096, 14336)
    assert (llama.attention_heads, llama.kv_heads, llama.vocab_size) == (32, 8, 128256)
    assert llama.effective_head_dim == 128
    assert lookup_model("Llama 3.1 405B").layers == 126
    assert lookup_model("Qwen3-32B").effective_head_dim == 128  # 64 heads of 128 on a 5120-wide model
    assert lookup_model("Gemma 2 9B").effective_head_dim == 256


def test_kv_elements_per_token_layer() -> None:
    assert lookup_model("Llama 2 7B").kv_elements_per_token_layer == 2 * 32 * 128
    assert lookup_model("Llama 3 70B").kv_elements_per_token_layer == 2 * 8 * 128
    assert lookup_model("DeepSeek-V3").kv_elements_per_token_layer == 576  # MLA latent + RoPE key


def test_active_params() -> None:
    assert active_params(lookup_model("Llama 3 8B")) == lookup_model("Llama 3 8B").params_b
    mixtral = lookup_model("Mixtral 8x7B")
    assert active_params(mixtral) == pytest.approx(12.88)
    assert active_params(mixtral) < mixtral.params_b
    assert active_params(lookup_model("Qwen3-30B-A3B")) == pytest.approx(3.3)


def test_cnn_has_no_transformer_shape() -> None:
    resnet = lookup_model("resnet50")
    assert not resnet.is_transformer
    assert resnet.family == "vision"
    assert resnet.effective_head_dim == 0


def test_unknown_model_names_field_and_suggests() -> None:
    with pytest.raises(UnknownModel) as info:
        lookup_model("Llama 3 9B")
    error = info.value
    assert isinstance(error, InvalidWorkload)
    assert error.field == "model.name"
    assert 1 <= len(error.suggestions) <= 5
    assert "Llama 3 8B" in error.suggestions
    assert "Llama 3 9B" in error.message


def test_unknown_model_without_close_match_has_no_suggestions() -> None:
    with pytest.raises(UnknownModel) as info:
        lookup_model("zzzzzzzz")
    assert info.value.suggestions == []


def test_normalise_name() -> None:
    assert normalise_name("Llama-3 8B") == normalise_name("llama 3_8b") == "llama38b"
    assert normalise_name("meta-llama/Meta-Llama-3-8B") == "llama38b"
    assert normalise_name("GPT-J 6B (CNN/DailyMail summarization)") == "gptj6b"


def test_list_models_is_a_copy() -> None:
    models = list_models()
    models.clear()
    assert list_models()


def _respell(name: str, upper: list[bool], separators: list[str]) -> str:
    chars = [c.upper() if up else c.lower() for c, up in zip(name, upper, strict=False)]
    text = "".join(chars) + name[len(chars) :]
    pieces = text.replace("-", " ").split(" ")
    out = pieces[0]
    for piece, sep in zip(pieces[1:], separators * len(pieces), strict=False):
        out += sep + piece
    return out


@given(
    arch=st.sampled_from(list_models()),
    upper=st.lists(st.booleans(), max_size=40),
    separators=st.lists(st.sampled_from([" ", "-", "_", "  "]), min_size=1, max_size=5),
)
def test_lookup_ignores_case_and_separators(
    arch: ModelArch, upper: list[bool], separators: list[str]
) -> None:
    assert lookup_model(_respell(arch.name, upper, separators)) is arch
