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


# Names published training runs and serving benchmarks use, and the catalog entry each must resolve to.
# Aliases: fine-tunes and distillations that keep their base's config.json shape (only the weights differ).
ALIAS_NAMES = {
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": "Llama 3.3 70B",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": "Llama 3.1 8B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": "Qwen2.5-32B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B": "Qwen2.5-14B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": "Qwen2.5-7B",
    "Qwen/QwQ-32B": "Qwen2.5-32B",
    "Qwen/Qwen2-7B-Instruct": "Qwen2.5-7B",
    "Qwen/Qwen2-72B-Instruct": "Qwen2.5-72B",
    "lmsys/vicuna-7b-v1.5": "Llama 2 7B",
    "lmsys/vicuna-13b-v1.5": "Llama 2 13B",
    "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF": "Llama 3.1 70B",
    "Llama 3 405B": "Llama 3.1 405B",
}

NEW_MODEL_NAMES = {
    "openai-community/gpt2": "GPT-2 124M",
    "gpt2": "GPT-2 124M",
    "gpt2-medium": "GPT-2 Medium",
    "openai-community/gpt2-medium": "GPT-2 Medium",
    "gpt2-large": "GPT-2 Large",
    "openai-community/gpt2-large": "GPT-2 Large",
    "gpt2-xl": "GPT-2 XL",
    "openai-community/gpt2-xl": "GPT-2 XL",
    "bigscience/bloom": "BLOOM 176B",
    "BLOOM-176B": "BLOOM 176B",
    "BLOOM": "BLOOM 176B",
    "tiiuae/falcon-180B": "Falcon 180B",
    "Falcon-180B": "Falcon 180B",
    "tiiuae/falcon-180B-chat": "Falcon 180B",
    "allenai/OLMo-1B": "OLMo 1B",
    "allenai/OLMo-1B-hf": "OLMo 1B",
    "allenai/OLMo-7B": "OLMo 7B",
    "allenai/OLMo-7B-hf": "OLMo 7B",
    "allenai/OLMo-2-1124-7B": "OLMo 2 7B",
    "allenai/OLMo-2-1124-7B-Instruct": "OLMo 2 7B",
    "allenai/OLMo-2-1124-13B": "OLMo 2 13B",
    "allenai/OLMo-2-0325-32B": "OLMo 2 32B",
    "allenai/OLMo-2-0325-32B-Instruct": "OLMo 2 32B",
    "facebook/opt-13b": "OPT 13B",
    "facebook/opt-30b": "OPT 30B",
    "facebook/opt-66b": "OPT 66B",
    "facebook/opt-175b": "OPT 175B",
    "OPT-175B": "OPT 175B",
    "EleutherAI/gpt-neox-20b": "GPT-NeoX 20B",
    "01-ai/Yi-34B": "Yi 34B",
    "01-ai/Yi-34B-Chat": "Yi 34B",
    "huggyllama/llama-7b": "LLaMA 7B",
    "LLaMA 7B": "LLaMA 7B",
    "huggyllama/llama-13b": "LLaMA 13B",
    "huggyllama/llama-30b": "LLaMA 33B",
    "huggyllama/llama-65b": "LLaMA 65B",
    "LLaMA-65B": "LLaMA 65B",
    "mistralai/Mistral-Small-24B-Base-2501": "Mistral Small 24B",
    "mistralai/Mistral-Small-24B-Instruct-2501": "Mistral Small 24B",
    "mistralai/Mistral-Nemo-Base-2407": "Mistral Nemo 12B",
    "mistralai/Mistral-Nemo-Instruct-2407": "Mistral Nemo 12B",
    "mistralai/Mistral-Large-Instruct-2407": "Mistral Large 2",
    "mistralai/Mistral-Large-Instruct-2411": "Mistral Large 2",
    "microsoft/phi-4": "Phi-4",
    "google/gemma-3-4b-it": "Gemma 3 4B",
    "google/gemma-3-4b-pt": "Gemma 3 4B",
    "google/gemma-3-12b-it": "Gemma 3 12B",
    "google/gemma-3-27b-it": "Gemma 3 27B",
    "codellama/CodeLlama-70b-hf": "Code Llama 70B",
    "codellama/CodeLlama-70b-Instruct-hf": "Code Llama 70B",
    "codellama/CodeLlama-70b-Python-hf": "Code Llama 70B",
    "openai/gpt-oss-20b": "gpt-oss-20b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "ibm-granite/granite-3.1-8b-base": "Granite 3.1 8B",
    "ibm-granite/granite-3.1-8b-instruct": "Granite 3.1 8B",
    "deepseek-ai/DeepSeek-V2-Lite": "DeepSeek-V2-Lite",
    "deepseek-ai/DeepSeek-V2-Lite-Chat": "DeepSeek-V2-Lite",
}

# Quantised uploads name their base model plus the storage format; the precision is a separate field.
QUANTISED_NAMES = {
    "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8": "Llama 3.1 8B",
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic": "Llama 3.1 8B",
    "meta-llama/Llama-3.1-405B-Instruct-FP8": "Llama 3.1 405B",
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen3-235B-A22B",
    "Qwen/Qwen2.5-72B-Instruct-AWQ": "Qwen2.5-72B",
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4": "Qwen2.5-7B",
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8": "Qwen2.5-7B",
    "Qwen/Qwen2.5-32B-Instruct-GPTQ": "Qwen2.5-32B",
    "Qwen/Qwen2.5-14B-Instruct-Int4": "Qwen2.5-14B",
    "Qwen/Qwen2.5-14B-Instruct-Int8": "Qwen2.5-14B",
    "RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w8a8": "Llama 3.1 70B",
    "neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16": "Llama 3.1 8B",
    "RedHatAI/Llama-3.3-70B-Instruct-w8a8": "Llama 3.3 70B",
    "unsloth/Llama-3.2-3B-Instruct-bnb-4bit": "Llama 3.2 3B",
    "unsloth/mistral-7b-v0.3-bnb-4bit": "Mistral 7B",
    "TheBloke/Llama-2-7B-GGUF": "Llama 2 7B",
    "mistralai/Mistral-Nemo-Instruct-FP8-2407": "Mistral Nemo 12B",
    "Qwen/Qwen-7B-Chat-Int4": "Qwen-7B",
}


@pytest.mark.parametrize(
    ("spelling", "expected"), sorted({**ALIAS_NAMES, **NEW_MODEL_NAMES, **QUANTISED_NAMES}.items())
)
def test_published_names_resolve(spelling: str, expected: str) -> None:
    assert lookup_model(spelling).name == expected


def test_a_quantised_upload_is_its_base_architecture() -> None:
    for spelling, expected in QUANTISED_NAMES.items():
        assert lookup_model(spelling) is lookup_model(expected), spelling
    with pytest.raises(UnknownModel):
        lookup_model("Llama 3 9B-FP8")


def _shape_params(arch: ModelArch) -> float:
    """Billions of weights in the matrices the shape names (attention, MLP of every expert, embeddings)."""
    q_width = arch.attention_heads * arch.effective_head_dim
    kv_width = arch.kv_heads * arch.effective_head_dim
    mlp = (3 if arch.gated_mlp else 2) * arch.hidden_size * arch.intermediate_size * arch.experts
    per_layer = 2 * arch.hidden_size * (q_width + kv_width) + mlp
    return (arch.layers * per_layer + arch.embedding_params) / 1e9


NEW_ENTRIES = sorted({*NEW_MODEL_NAMES.values()} - {"DeepSeek-V2-Lite"})
"""DeepSeek-V2-Lite's shared experts and dense first layer are outside the shape (as for DeepSeek-V3)."""


@pytest.mark.parametrize("name", NEW_ENTRIES)
def test_new_entries_params_match_their_shape(name: str) -> None:
    """Norms, biases and position tables aside, the parameter count is what the shape implies: a
    mistyped width, head count or vocabulary shows up here."""
    arch = lookup_model(name)
    assert _shape_params(arch) == pytest.approx(arch.params_b, rel=0.01)


NEW_FAMILY_SHAPES = [
    ("gpt2-xl", "layers", 48),
    ("gpt2", "max_seq_len", 1024),
    ("gpt2", "tied_embeddings", True),
    ("gpt2", "gated_mlp", False),
    ("BLOOM 176B", "attention_heads", 112),
    ("Falcon 180B", "hidden_size", 14848),
    ("Falcon 180B", "effective_head_dim", 64),
    ("OPT 175B", "layers", 96),
    ("OPT 66B", "attention_heads", 72),
    ("GPT-NeoX 20B", "vocab_size", 50432),
    ("Yi 34B", "intermediate_size", 20480),
    ("LLaMA 33B", "hidden_size", 6656),
    ("OLMo 1B", "tied_embeddings", True),
    ("OLMo 2 32B", "kv_heads", 8),
    ("Mistral Small 24B", "effective_head_dim", 128),  # 32 heads of 128 on a 5120 model
    ("Mistral Nemo 12B", "kv_elements_per_token_layer", 2 * 8 * 128),
    ("Mistral Large 2", "layers", 88),
    ("Phi-4", "kv_heads", 10),
    ("Gemma 3 27B", "effective_head_dim", 128),
    ("Gemma 3 12B", "vocab_size", 262208),
    ("Code Llama 70B", "vocab_size", 32016),
    ("Granite 3.1 8B", "intermediate_size", 12800),
]


@pytest.mark.parametrize(("name", "attribute", "expected"), NEW_FAMILY_SHAPES)
def test_new_family_shapes(name: str, attribute: str, expected: object) -> None:
    assert getattr(lookup_model(name), attribute) == expected


def test_mixture_of_experts_additions() -> None:
    oss = lookup_model("gpt-oss-120b")
    assert (oss.experts, oss.active_experts, oss.effective_head_dim) == (128, 4, 64)
    assert lookup_model("gpt-oss-20b").experts == 32
    assert active_params(oss) < oss.params_b
    lite = lookup_model("DeepSeek-V2-Lite")
    assert lite.kv_elements_per_token_layer == 576  # MLA: 512-wide latent + 64-wide RoPE key, as DeepSeek-V3
    assert (lite.experts, lite.active_experts) == (64, 6)
