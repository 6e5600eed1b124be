"""The built-in model catalog: published architecture numbers, one entry per architecture.

Entries are plain data validated into :class:`solver.catalog.models.ModelArch` at import time. Numbers come from
each model's Hugging Face ``config.json`` (``num_hidden_layers``, ``hidden_size``,
``intermediate_size``, ``num_attention_heads``, ``num_key_value_heads``, ``vocab_size``,
``max_position_embeddings``, ``tie_word_embeddings``) and the parameter counts from the model cards or
papers. Chat/instruct variants share their base model's architecture, so they resolve to the same entry.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CATALOG_ENTRIES"]


def _hf(repo: str) -> str:
    """The config.json a catalog entry's shape was read from."""
    return f"https://huggingface.co/{repo}/blob/main/config.json"


def _tf(
    name: str,
    params_b: float,
    shape: tuple[int, int, int, int, int],
    vocab_size: int,
    max_seq_len: int,
    source: str,
    *aliases: str,
    **extra: object,
) -> dict[str, object]:
    """One transformer entry; ``shape`` is (layers, hidden, intermediate, heads, kv_heads)."""
    layers, hidden, intermediate, heads, kv_heads = shape
    return {
        "name": name,
        "family": extra.pop("family", "decoder"),
        "params_b": params_b,
        "layers": layers,
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "attention_heads": heads,
        "kv_heads": kv_heads,
        "vocab_size": vocab_size,
        "max_seq_len": max_seq_len,
        "source": source,
        "aliases": list(aliases),
        **extra,
    }


_L2 = "config.json of meta-llama/Llama-2-{}-hf; params from Touvron et al. 2023 (Llama 2)"
_L3 = "config.json of meta-llama/{}; params from the model card"
_QW = "config.json of Qwen/{}; params from the model card"
_MOE = "; {} total / {} active params, model card"
_MPT = (
    "mosaicml/llm-foundry:scripts/train/yamls/pretrain/mpt-{0}.yaml (d_model, n_heads, n_layers, expansion_ratio 4,"
    " vocab_size 50368); params = NumParams {1} of the 2048-token rows of"
    " scripts/train/benchmarking/README.md@061f2c7c minus the learned position embedding 2048·{2}"
)
_MPT_CONTEXT = 65536
"""llm-foundry's benchmark sweep sets ``max_seq_len`` per run (512 to 65,536 tokens, the position
embedding sized to match), so the benchmarked shapes admit that whole range."""
_MPT_RELEASED = "; the released mosaicml/mpt-{0} uses ALiBi and a 50432-entry vocabulary"
_NEMO_GPT3 = (
    "NVIDIA/NeMo-Framework-Launcher:launcher_scripts/conf/training/gpt3/{0} ({1}, ffn 4·hidden, seq 2048,"
    " GPT2BPETokenizer); params computed from the shape: 12·L·h² + V·h + 2048·h"
)
_MEGATRON_TABLE1: Final = (
    "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM,"
    " Table 1 ({} row: layers, hidden size, attention heads; parameters by Eq. 2 with V 51,200, s 2,048)"
)
_NEMOTRON = (
    "NVIDIA/NeMo:nemo/collections/llm/gpt/model/nemotron.py@0037ec8c {0} (squared ReLU, no bias, untied"
    " embeddings); params computed from the shape"
)
_SHAPE = "; params computed from the shape"
_GPT2 = (
    _hf("openai-community/{0}") + " (n_layer {1}, n_embd {2}, n_head {3}, n_positions 1024; 4·n_embd GELU MLP"
    " with biases, learned positions, tied head)" + _SHAPE + ": 12·L·h² + 13·L·h + V·h + 1024·h + 2h"
)
_OPT = (
    " (ReLU 4·hidden MLP with biases, learned positions (2050 rows), tied head, vocab 50272)"
    + _SHAPE
    + ": 12·L·h² + 13·L·h + V·h + 2050·h + 2h"
)
_LLAMA1 = (
    _hf("huggyllama/llama-{0}") + " (the LLaMA 1 shapes of Touvron et al. 2023, Table 2: SwiGLU, untied head,"
    " 2048-token context)" + _SHAPE
)
_OLMO2 = (
    _hf("allenai/{0}") + " (SwiGLU, untied head, vocab 100352; QK-norm and post-norms as in"
    " allenai/OLMo-core TransformerConfig.{1})" + _SHAPE
)
_GEMMA3 = (
    _hf("google/gemma-3-{0}-it")
    + " (text_config: GeGLU, tied head, head_dim {1}, QK-norm; 5 of every 6 layers use 1024-token"
    " sliding-window attention, which the catalog cannot express, so long-context KV is overstated)"
    + _SHAPE
    + " (the text model; the SigLIP vision tower is not counted)"
)
_GPT_OSS = (
    _hf("openai/gpt-oss-{0}") + " and openai/gpt-oss gpt_oss/torch/model.py (head_dim 64, experts {1}, top-4;"
    " biases and attention sinks; sliding-window attention (128 tokens) on every other layer, which the"
    " catalog cannot express, so long-context KV is overstated; the experts ship in MXFP4, the request's"
    " precision picks the bytes); {2} params = the Hub's safetensors metadata: {3} BF16 weights plus {4}"
    " MXFP4 expert weights (its U8 count less one scale per 32), equal to the shape's count (the model card's"
    " {5}); active computed from the shape as every weight one token touches, both embeddings included like"
    " the other MoE entries (the model card states {6} active)"
)
_PLAIN = {"gated_mlp": False}
_TIED = {"tied_embeddings": True}

# fmt: off
CATALOG_ENTRIES: Final[tuple[dict[str, object], ...]] = (
    # --- Llama 2 / Code Llama (SwiGLU MLP, untied head) -------------------------------------------
    _tf("Llama 2 7B", 6.74, (32, 4096, 11008, 32, 32), 32000, 4096, _L2.format("7b"),
        "meta-llama/Llama-2-7b-hf", "Llama-2-7b", "llama2-7b",
        # Vicuna v1.5 is a Llama 2 fine-tune (FastChat README): the same config.json, other weights.
        "lmsys/vicuna-7b-v1.5"),
    _tf("Llama 2 13B", 13.02, (40, 5120, 13824, 40, 40), 32000, 4096, _L2.format("13b"),
        "meta-llama/Llama-2-13b-hf", "llama2-13b",
        "lmsys/vicuna-13b-v1.5"),  # Vicuna v1.5: a Llama 2 fine-tune, same shape
    _tf("Llama 2 70B", 68.98, (80, 8192, 28672, 64, 8), 32000, 4096, _L2.format("70b"),
        "meta-llama/Llama-2-70b-hf", "llama2-70b"),
    _tf("Code Llama 34B", 33.74, (48, 8192, 22016, 64, 8), 32000, 16384,
        _hf("codellama/CodeLlama-34b-hf") + "; params from Rozière et al. 2023",
        "codellama/CodeLlama-34b-hf", "CodeLlama-34b", "CodeLlama-34b-Python"),
    _tf("Code Llama 70B", 68.98, (80, 8192, 28672, 64, 8), 32016, 16384,
        _hf("codellama/CodeLlama-70b-hf") + " (Llama 2 70B's shape with 16 more vocabulary rows; Lightning-AI/litgpt"
        " config.py)" + _SHAPE + " (Rozière et al. call it 70B)",
        "codellama/CodeLlama-70b-hf", "CodeLlama-70b-Python"),
    # --- Llama 3.x -------------------------------------------------------------------------------
    _tf("Llama 3 8B", 8.03, (32, 4096, 14336, 32, 8), 128256, 8192, _L3.format("Meta-Llama-3-8B"),
        "meta-llama/Meta-Llama-3-8B", "llama3-8b"),
    _tf("Llama 3 70B", 70.55, (80, 8192, 28672, 64, 8), 128256, 8192, _L3.format("Meta-Llama-3-70B"),
        "meta-llama/Meta-Llama-3-70B", "llama3-70b"),
    _tf("Llama 3.1 8B", 8.03, (32, 4096, 14336, 32, 8), 128256, 131072, _L3.format("Llama-3.1-8B"),
        "meta-llama/Meta-Llama-3.1-8B", "llama3.1-8b",
        # R1 distilled onto Llama 3.1 8B: the same config.json shape (Lightning-AI/litgpt config.py).
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"),
    _tf("Llama 3.1 70B", 70.55, (80, 8192, 28672, 64, 8), 128256, 131072, _L3.format("Llama-3.1-70B"),
        "meta-llama/Meta-Llama-3.1-70B", "llama3.1-70b",
        # NVIDIA's RLHF fine-tune of Llama 3.1 70B Instruct: the same config.json shape (litgpt config.py).
        "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "Llama-3.1-Nemotron-70B"),
    _tf("Llama 3.1 405B", 405.85, (126, 16384, 53248, 128, 8), 128256, 131072, _L3.format("Llama-3.1-405B"),
        "meta-llama/Meta-Llama-3.1-405B", "llama3.1-405b",
        "Llama 3 405B"),  # the Llama 3 paper's (Dubey et al. 2024) name for this model
    _tf("Llama 3.2 1B", 1.24, (16, 2048, 8192, 32, 8), 128256, 131072, _L3.format("Llama-3.2-1B"),
        "llama3.2-1b", **_TIED),
    _tf("Llama 3.2 3B", 3.21, (28, 3072, 8192, 24, 8), 128256, 131072, _L3.format("Llama-3.2-3B"),
        "llama3.2-3b", **_TIED),
    _tf("Llama 3.3 70B", 70.55, (80, 8192, 28672, 64, 8), 128256, 131072, 
        _L3.format("Llama-3.3-70B-Instruct"), "llama3.3-70b",
        # R1 distilled onto Llama 3.3 70B Instruct: the same config.json shape (litgpt config.py).
        "deepseek-ai/DeepSeek-R1-Distill-Llama-70B"),
    # --- Llama 4 (text tower; MoE: one routed + one shared expert per token) ------------------------
    _tf("Llama 4 Scout", 109.0, (48, 5120, 8192, 40, 8), 202048, 10485760,
        _hf("meta-llama/Llama-4-Scout-17B-16E") + " (text_config)" + _MOE.format("109B", "17B"),
        "meta-llama/Llama-4-Scout-17B-16E", "Llama-4-Scout-17B-16E", "llama4-scout",
        experts=16, active_experts=1, active_params_b=17.0, head_dim=128),
    _tf("Llama 4 Maverick", 400.0, (48, 5120, 8192, 40, 8), 202048, 1048576,
        _hf("meta-llama/Llama-4-Maverick-17B-128E") + " (text_config; MoE on every other layer)"
        + _MOE.format("400B", "17B"),
        "meta-llama/Llama-4-Maverick-17B-128E", "Llama-4-Maverick-17B-128E", "llama4-maverick",
        experts=128, active_experts=1, active_params_b=17.0, head_dim=128),
    # --- Mistral -----------------------------------------------------------------------------------
    _tf("Mistral 7B", 7.24, (32, 4096, 14336, 32, 8), 32000, 32768,
        _hf("mistralai/Mistral-7B-v0.1") + "; Jiang et al. 2023", "mistralai/Mistral-7B-v0.1", "mistral-7b"),
    _tf("Mixtral 8x7B", 46.70, (32, 4096, 14336, 32, 8), 32000, 32768,
        _hf("mistralai/Mixtral-8x7B-v0.1") + _MOE.format("46.7B", "12.9B"),
        "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", experts=8, active_experts=2, active_params_b=12.88),
    _tf("Mixtral 8x22B", 140.63, (56, 6144, 16384, 48, 8), 32768, 65536,
        _hf("mistralai/Mixtral-8x22B-v0.1") + _MOE.format("141B", "39B"),
        "mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b", experts=8, active_experts=2, active_params_b=39.15),
    _tf("Mistral Small 24B", 23.57, (40, 5120, 32768, 32, 8), 131072, 32768,
        _hf("mistralai/Mistral-Small-24B-Base-2501") + " (head_dim 128, untied head; the release's params.json"
        " agrees); 23,572,403,200 params = the safetensors index's 47,144,806,400 bf16 bytes / 2, equal to the"
        " shape's count", "mistralai/Mistral-Small-24B-Base-2501", "Mistral Small 3", head_dim=128),
    _tf("Mistral Nemo 12B", 12.25, (40, 5120, 14336, 32, 8), 131072, 128000,
        _hf("mistralai/Mistral-Nemo-Base-2407") + " (head_dim 128, untied head)" + _SHAPE
        + " (the model card calls it 12B)", "mistralai/Mistral-Nemo-Base-2407", "Mistral-Nemo", head_dim=128),
    _tf("Mistral Large 2", 122.61, (88, 12288, 28672, 96, 8), 32768, 131072,
        _hf("mistralai/Mistral-Large-Instruct-2407") + " (Lightning-AI/litgpt config.py, where 2411 has the same"
        " shape; the 32768-entry vocabulary as in mistralai/mistral-inference's model table; 128k context)"
        + _SHAPE + " (the model card calls it 123B)",
        "mistralai/Mistral-Large-Instruct-2407", "mistralai/Mistral-Large-Instruct-2411", "Mistral-Large-2407",
        "Mistral Large 2 123B"),
    # --- Qwen2.5 (0.5B-3B tie their embeddings) ----------------------------------------------------
    _tf("Qwen2.5-0.5B", 0.49, (24, 896, 4864, 14, 2), 151936, 32768, _QW.format("Qwen2.5-0.5B"),
        "Qwen/Qwen2.5-0.5B", **_TIED),
    _tf("Qwen2.5-1.5B", 1.54, (28, 1536, 8960, 12, 2), 151936, 32768, _QW.format("Qwen2.5-1.5B"),
        "Qwen/Qwen2.5-1.5B", **_TIED),
    _tf("Qwen2.5-3B", 3.09, (36, 2048, 11008, 16, 2), 151936, 32768, _QW.format("Qwen2.5-3B"),
        "Qwen/Qwen2.5-3B", **_TIED),
    _tf("Qwen2.5-7B", 7.61, (28, 3584, 18944, 28, 4), 152064, 131072, _QW.format("Qwen2.5-7B"),
        "Qwen/Qwen2.5-7B",
        # Qwen2-7B: layers, hidden, intermediate, heads, kv heads and vocab equal Qwen2.5-7B's (its
        # Instruct config.json stops at 32768 positions); the R1 distill is Qwen2.5-Math-7B, this shape.
        "Qwen/Qwen2-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
    _tf("Qwen2.5-14B", 14.7, (48, 5120, 13824, 40, 8), 152064, 131072, _QW.format("Qwen2.5-14B"),
        "Qwen/Qwen2.5-14B",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B"),  # distilled onto Qwen2.5-14B, same shape
    _tf("Qwen2.5-32B", 32.5, (64, 5120, 27648, 40, 8), 152064, 131072, _QW.format("Qwen2.5-32B"),
        "Qwen/Qwen2.5-32B",
        # Both keep Qwen2.5-32B's config.json shape; the distill's safetensors hold 32,763,876,352 params,
        # exactly this shape's count.
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "Qwen/QwQ-32B"),
    _tf("Qwen2.5-72B", 72.7, (80, 8192, 29568, 64, 8), 152064, 131072, _QW.format("Qwen2.5-72B"),
        "Qwen/Qwen2.5-72B",
        "Qwen/Qwen2-72B"),  # Qwen2-72B: the same layers, widths, heads and vocab as Qwen2.5-72B
    # --- Qwen3 (head_dim 128 throughout; 0.6B-4B tie their embeddings) ------------------------------
    _tf("Qwen3-0.6B", 0.6, (28, 1024, 3072, 16, 8), 151936, 40960, _QW.format("Qwen3-0.6B"),
        "Qwen/Qwen3-0.6B", head_dim=128, **_TIED),
    _tf("Qwen3-1.7B", 1.7, (28, 2048, 6144, 16, 8), 151936, 40960, _QW.format("Qwen3-1.7B"),
        "Qwen/Qwen3-1.7B", head_dim=128, **_TIED),
    _tf("Qwen3-4B", 4.0, (36, 2560, 9728, 32, 8), 151936, 40960, _QW.format("Qwen3-4B"), "Qwen/Qwen3-4B",
        head_dim=128, **_TIED),
    _tf("Qwen3-8B", 8.2, (36, 4096, 12288, 32, 8), 151936, 40960, _QW.format("Qwen3-8B"), "Qwen/Qwen3-8B",
        head_dim=128),
    _tf("Qwen3-14B", 14.8, (40, 5120, 17408, 40, 8), 151936, 40960, _QW.format("Qwen3-14B"), "Qwen/Qwen3-14B",
        head_dim=128),
    _tf("Qwen3-32B", 32.8, (64, 5120, 25600, 64, 8), 151936, 40960, _QW.format("Qwen3-32B"), "Qwen/Qwen3-32B",
        head_dim=128),
    _tf("Qwen3-30B-A3B", 30.5, (48, 2048, 768, 32, 4), 151936, 40960,
        _QW.format("Qwen3-30B-A3B") + " (moe_intermediate_size 768)" + _MOE.format("30.5B", "3.3B"),
        "Qwen/Qwen3-30B-A3B", head_dim=128, experts=128, active_experts=8, active_params_b=3.3),
    _tf("Qwen3-235B-A22B", 235.0, (94, 4096, 1536, 64, 4), 151936, 40960,
        _QW.format("Qwen3-235B-A22B") + " (moe_intermediate_size 1536)" + _MOE.format("235B", "22B"),
        "Qwen/Qwen3-235B-A22B", head_dim=128, experts=128, active_experts=8, active_params_b=22.0),
    # --- DeepSeek-V3 / V2-Lite (MLA caches a 512-dim latent + 64-dim RoPE key per token and layer) ---
    _tf("DeepSeek-V3", 671.0, (61, 7168, 2048, 128, 128), 129280, 163840,
        _hf("deepseek-ai/DeepSeek-V3") + " (moe_intermediate_size 2048, kv_lora_rank 512,"
        " qk_rope_head_dim 64)"
        + "; 671B total / 37B active, DeepSeek-V3 technical report",
        "deepseek-ai/DeepSeek-V3", "DeepSeek-V3-0324",
        experts=256, active_experts=8, active_params_b=37.0, head_dim=128, kv_cache_width=576),
    _tf("DeepSeek-R1", 671.0, (61, 7168, 2048, 128, 128), 129280, 163840,
        _hf("deepseek-ai/DeepSeek-R1") + " (same architecture as DeepSeek-V3)", "deepseek-ai/DeepSeek-R1",
        experts=256, active_experts=8, active_params_b=37.0, head_dim=128, kv_cache_width=576),
    _tf("DeepSeek-V2-Lite", 15.71, (27, 2048, 1408, 16, 16), 102400, 163840,
        _hf("deepseek-ai/DeepSeek-V2-Lite") + " (MLA like DeepSeek-V3: kv_lora_rank 512 + qk_rope_head_dim 64"
        " cached, q_lora_rank null; moe_intermediate_size 1408, 64 routed experts, top-6; not expressed: the"
        " 2 shared experts and the dense first layer (intermediate 10944), both counted in the params; YaRN"
        " 4096 × 40 positions, the model card says 32k context); 15,706,484,224 params computed from the shape"
        " (the paper's 15.7B); active 2.66B computed the same way, both embeddings included like the other"
        " MoE entries (the paper states 2.4B)", "deepseek-ai/DeepSeek-V2-Lite",
        experts=64, active_experts=6, active_params_b=2.66, head_dim=128, kv_cache_width=576),
    # --- Gemma (GeGLU MLP, tied embeddings, wide heads) ---------------------------------------------
    _tf("Gemma 7B", 8.54, (28, 3072, 24576, 16, 16), 256000, 8192,
        _hf("google/gemma-7b") + "; 8.54B params, Gemma report (2024)", "google/gemma-7b",
        head_dim=256, **_TIED),
    _tf("Gemma 2 2B", 2.61, (26, 2304, 9216, 8, 4), 256000, 8192,
        _hf("google/gemma-2-2b") + "; params from the Gemma 2 report", "google/gemma-2-2b",
        head_dim=256, **_TIED),
    _tf("Gemma 2 9B", 9.24, (42, 3584, 14336, 16, 8), 256000, 8192,
        _hf("google/gemma-2-9b") + "; params from the Gemma 2 report", "google/gemma-2-9b",
        head_dim=256, **_TIED),
    _tf("Gemma 2 27B", 27.2, (46, 4608, 36864, 32, 16), 256000, 8192,
        _hf("google/gemma-2-27b") + "; params from the Gemma 2 report", "google/gemma-2-27b", head_dim=128,
        **_TIED),
    _tf("Gemma 3 4B", 3.88, (34, 2560, 10240, 8, 4), 262208, 131072, _GEMMA3.format("4b", 256),
        "google/gemma-3-4b-pt", head_dim=256, **_TIED),
    _tf("Gemma 3 12B", 11.77, (48, 3840, 15360, 16, 8), 262208, 131072, _GEMMA3.format("12b", 256),
        "google/gemma-3-12b-pt", head_dim=256, **_TIED),
    _tf("Gemma 3 27B", 27.01, (62, 5376, 21504, 32, 16), 262208, 131072, _GEMMA3.format("27b", 128),
        "google/gemma-3-27b-pt", head_dim=128, **_TIED),
    _tf("Gemma 2B", 2.51, (18, 2048, 16384, 8, 1), 256000, 8192,
        _hf("google/gemma-2b") + " (multi-query attention, head_dim 256, GeGLU MLP, tied head); Gemma Team 2024",
        "google/gemma-2b", "gemma-2b", head_dim=256, **_TIED),
    _tf("TinyLlama 1.1B", 1.10, (22, 2048, 5632, 32, 4), 32000, 2048,
        _hf("TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T") + " (Llama 2 architecture); Zhang et al. 2024",
        "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
        "tiny-llama", "tinyllama"),
    # --- Phi-3/4, Falcon, GPT-J, StarCoder, BLOOM ------------------------------------------------------
    _tf("Phi-3 mini", 3.82, (32, 3072, 8192, 32, 32), 32064, 4096,
        _hf("microsoft/Phi-3-mini-4k-instruct") + "; Abdin et al. 2024", "microsoft/Phi-3-mini-4k-instruct",
        "Phi-3-mini-4k"),
    _tf("Phi-3 medium", 13.96, (40, 5120, 17920, 40, 10), 32064, 4096,
        _hf("microsoft/Phi-3-medium-4k-instruct") + "; Abdin et al. 2024",
        "microsoft/Phi-3-medium-4k-instruct", "Phi-3-medium-4k"),
    _tf("Phi-4", 14.66, (40, 5120, 17920, 40, 10), 100352, 16384,
        _hf("microsoft/phi-4") + " (Phi3ForCausalLM: SwiGLU, untied head)" + _SHAPE
        + " (the model card calls it 14B)", "microsoft/phi-4"),
    _tf("Falcon 7B", 7.22, (32, 4544, 18176, 71, 1), 65024, 2048,
        _hf("tiiuae/falcon-7b") + " (multi-query attention, 4·hidden GELU MLP)", "tiiuae/falcon-7b",
        **_PLAIN),
    _tf("Falcon 40B", 41.84, (60, 8192, 32768, 128, 8), 65024, 2048,
        _hf("tiiuae/falcon-40b") + " (num_kv_heads 8, 4·hidden GELU MLP)", "tiiuae/falcon-40b", **_PLAIN),
    _tf("Falcon 180B", 179.52, (80, 14848, 59392, 232, 8), 65024, 2048,
        _hf("tiiuae/falcon-180B") + " (num_kv_heads 8, head_dim 64, 4·hidden GELU MLP, untied head like Falcon"
        " 40B; the Falcon-180B checkpoint config of TensorRT-LLM's benchmarks agrees)" + _SHAPE
        + " (the model card calls it 180B)",
        "tiiuae/falcon-180B", **_PLAIN),
    _tf("GPT-J 6B", 6.05, (28, 4096, 16384, 16, 16), 50400, 2048,
        _hf("EleutherAI/gpt-j-6b") + " (n_layer, n_embd, n_head, n_positions; 4·n_embd GELU MLP)",
        "EleutherAI/gpt-j-6b", "gpt-j-6b", "GPT-J", **_PLAIN),
    _tf("StarCoder", 15.52, (40, 6144, 24576, 48, 1), 49152, 8192,
        _hf("bigcode/starcoder") + " (GPTBigCode: multi-query attention, 4·n_embd GELU MLP, tied head);"
        " 15.5B params, Li et al. 2023",
        "bigcode/starcoder", "bigcode/starcoderbase", "bigcode/octocoder", "OctoCoder",
        **_PLAIN, **_TIED),
    _tf("BLOOM 7B1", 7.07, (30, 4096, 16384, 32, 32), 250880, 2048,
        _hf("bigscience/bloom-7b1") + " (n_layer 30, hidden 4096, n_head 32, 4·hidden GELU MLP, tied head; "
        "ALiBi positions, 2048-token training context)", "bigscience/bloom-7b1", "bigscience/bloomz-7b1",
        "bloomz-7b1", **_PLAIN, **_TIED),
    _tf("BLOOM 176B", 176.25, (70, 14336, 57344, 112, 112), 250880, 2048,
        _hf("bigscience/bloom") + " (n_layer 70, hidden 14336, n_head 112 as in bigscience's tr11-176B-ml"
        " training setup; 4·hidden GELU MLP, tied head; ALiBi positions, 2048-token training context)" + _SHAPE
        + ": 70·(12h² + 13h) + V·h + 4h = 176,247,271,424", "bigscience/bloom", "BLOOM", **_PLAIN, **_TIED),
    # --- More open decoders: GPT-2, OPT, GPT-NeoX, LLaMA 1, OLMo 1/2, Yi, Granite ----------------------
    _tf("GPT-2 124M", 0.1244, (12, 768, 3072, 12, 12), 50257, 1024, _GPT2.format("gpt2", 12, 768, 12),
        "openai-community/gpt2", "GPT-2 small", **_PLAIN, **_TIED),
    _tf("GPT-2 Medium", 0.3548, (24, 1024, 4096, 16, 16), 50257, 1024, _GPT2.format("gpt2-medium", 24, 1024, 16),
        "openai-community/gpt2-medium", "GPT-2 355M", **_PLAIN, **_TIED),
    _tf("GPT-2 Large", 0.7740, (36, 1280, 5120, 20, 20), 50257, 1024, _GPT2.format("gpt2-large", 36, 1280, 20),
        "openai-community/gpt2-large", "GPT-2 774M", **_PLAIN, **_TIED),
    _tf("GPT-2 XL", 1.5576, (48, 1600, 6400, 25, 25), 50257, 1024, _GPT2.format("gpt2-xl", 48, 1600, 25),
        "openai-community/gpt2-xl", "GPT-2 1.5B", **_PLAIN, **_TIED),
    _tf("OPT 13B", 12.85, (40, 5120, 20480, 40, 40), 50272, 2048, _hf("facebook/opt-13b") + _OPT,
        "facebook/opt-13b", **_PLAIN, **_TIED),
    _tf("OPT 30B", 29.97, (48, 7168, 28672, 56, 56), 50272, 2048, _hf("facebook/opt-30b") + _OPT,
        "facebook/opt-30b", **_PLAIN, **_TIED),
    _tf("OPT 66B", 65.72, (64, 9216, 36864, 72, 72), 50272, 2048, _hf("facebook/opt-66b") + _OPT,
        "facebook/opt-66b", **_PLAIN, **_TIED),
    _tf("OPT 175B", 174.60, (96, 12288, 49152, 96, 96), 50272, 2048,
        "Zhang et al. 2022, OPT: Open Pre-trained Transformer Language Models, Table 1 (96 layers, 96 heads,"
        " d_model 12288; not on the Hugging Face Hub), with the family's config.json conventions as in"
        " FMInference/FlexGen opt_config.py" + _OPT, "facebook/opt-175b", **_PLAIN, **_TIED),
    _tf("GPT-NeoX 20B", 20.55, (44, 6144, 24576, 64, 64), 50432, 2048,
        _hf("EleutherAI/gpt-neox-20b") + " (4·hidden GELU MLP with biases, parallel residual, rotary on a"
        " quarter of each head, untied head)" + _SHAPE + ": 20,554,567,680 (Black et al. 2022 call it 20B)",
        "EleutherAI/gpt-neox-20b", **_PLAIN),
    _tf("LLaMA 7B", 6.74, (32, 4096, 11008, 32, 32), 32000, 2048, _LLAMA1.format("7b"), "huggyllama/llama-7b"),
    _tf("LLaMA 13B", 13.02, (40, 5120, 13824, 40, 40), 32000, 2048, _LLAMA1.format("13b"), "huggyllama/llama-13b"),
    _tf("LLaMA 33B", 32.53, (60, 6656, 17920, 52, 52), 32000, 2048, _LLAMA1.format("30b"),
        "huggyllama/llama-30b", "LLaMA 30B"),  # the Hub's repositories call the 33B model "30b"
    _tf("LLaMA 65B", 65.29, (80, 8192, 22016, 64, 64), 32000, 2048, _LLAMA1.format("65b"), "huggyllama/llama-65b"),
    _tf("OLMo 1B", 1.18, (16, 2048, 8192, 16, 16), 50304, 2048,
        _hf("allenai/OLMo-1B-hf") + " (allenai/OLMo configs/official/OLMo-1B.yaml: d_model 2048, 16 heads, 16"
        " layers, SwiGLU with mlp_ratio 8, weight tying, embedding_size 50304, non-parametric LayerNorm)" + _SHAPE,
        "allenai/OLMo-1B", **_TIED),
    _tf("OLMo 7B", 6.89, (32, 4096, 11008, 32, 32), 50304, 2048,
        _hf("allenai/OLMo-7B-hf") + " (allenai/OLMo configs/official/OLMo-7B.yaml: d_model 4096, 32 heads, 32"
        " layers, SwiGLU mlp_hidden_size 22016 = 2 × 11008, untied head, embedding_size 50304)" + _SHAPE,
        "allenai/OLMo-7B"),
    _tf("OLMo 2 7B", 7.30, (32, 4096, 11008, 32, 32), 100352, 4096, _OLMO2.format("OLMo-2-1124-7B", "olmo2_7B"),
        "allenai/OLMo-2-1124-7B"),
    _tf("OLMo 2 13B", 13.72, (40, 5120, 13824, 40, 40), 100352, 4096,
        _OLMO2.format("OLMo-2-1124-13B", "olmo2_13B"), "allenai/OLMo-2-1124-13B"),
    _tf("OLMo 2 32B", 32.23, (64, 5120, 27648, 40, 8), 100352, 4096, _OLMO2.format("OLMo-2-0325-32B", "olmo2_32B"),
        "allenai/OLMo-2-0325-32B"),
    _tf("Yi 34B", 34.39, (60, 7168, 20480, 56, 8), 64000, 4096,
        _hf("01-ai/Yi-34B") + " (Llama architecture: SwiGLU, untied head)" + _SHAPE, "01-ai/Yi-34B"),
    _tf("Granite 3.1 8B", 8.17, (40, 4096, 12800, 32, 8), 49155, 131072,
        _hf("ibm-granite/granite-3.1-8b-base") + " (GraniteForCausalLM: SwiGLU, tied head, 128k context; vocab"
        " 49155, the Granite 3.0/3.1 tokenizer also in the 2b, 1b-a400m and 3b-a800m configs)" + _SHAPE,
        "ibm-granite/granite-3.1-8b-base", **_TIED),
    # --- gpt-oss (MoE on every layer, one expert size) ------------------------------------------------
    _tf("gpt-oss-20b", 20.91, (24, 2880, 2880, 64, 8), 201088, 131072,
        _GPT_OSS.format("20b", 32, "20,914,757,184", "1,804,459,584", "19,110,297,600", "21B", "3.6B"),
        "openai/gpt-oss-20b", experts=32, active_experts=4, active_params_b=4.19, head_dim=64),
    _tf("gpt-oss-120b", 116.83, (36, 2880, 2880, 64, 8), 201088, 131072,
        _GPT_OSS.format("120b", 128, "116,829,156,672", "2,167,371,072", "114,661,785,600", "117B", "5.1B"),
        "openai/gpt-oss-120b", experts=128, active_experts=4, active_params_b=5.75, head_dim=64),
    # --- Training-benchmark architectures (service/data/throughput_training_llm.csv) --------------------
    # MPT as benchmarked by llm-foundry: 4·d GELU MLP with biases, tied head, learned position embedding.
    _tf("MPT-125M", 0.1237, (12, 768, 3072, 12, 12), 50368, _MPT_CONTEXT, _MPT.format("125m", 125311488, 768),
        **_PLAIN, **_TIED),
    _tf("MPT-350M", 0.3539, (24, 1024, 4096, 16, 16), 50368, _MPT_CONTEXT, _MPT.format("350m", 355985408, 1024),
        **_PLAIN, **_TIED),
    _tf("MPT-760M", 0.7573, (24, 1536, 6144, 12, 12), 50368, _MPT_CONTEXT, _MPT.format("760m", 760470528, 1536),
        **_PLAIN, **_TIED),
    _tf("MPT-1B", 1.3118, (24, 2048, 8192, 16, 16), 50368, _MPT_CONTEXT, _MPT.format("1b", 1315950592, 2048),
        **_PLAIN, **_TIED),
    _tf("MPT-3B", 2.6466, (32, 2560, 10240, 20, 20), 50368, _MPT_CONTEXT, _MPT.format("3b", 2651837440, 2560),
        **_PLAIN, **_TIED),
    _tf("MPT-7B", 6.6505, (32, 4096, 16384, 32, 32), 50368, _MPT_CONTEXT,
        _MPT.format("7b", 6658859008, 4096) + _MPT_RELEASED.format("7b"), "mosaicml/mpt-7b", **_PLAIN, **_TIED),
    _tf("MPT-13B", 12.8435, (40, 5120, 20480, 40, 40), 50368, _MPT_CONTEXT, _MPT.format("13b", 12853954560, 5120),
        **_PLAIN, **_TIED),
    _tf("MPT-30B", 29.9605, (48, 7168, 28672, 56, 56), 50368, _MPT_CONTEXT,
        _MPT.format("30b", 29975214080, 7168) + _MPT_RELEASED.format("30b"), "mosaicml/mpt-30b",
        **_PLAIN, **_TIED),
    _tf("MPT-70B", 64.8457, (80, 8192, 32768, 64, 64), 50368, _MPT_CONTEXT, _MPT.format("70b", 64862437376, 8192),
        **_PLAIN, **_TIED),
    # GPT-3 shapes as NeMo benchmarks them: GELU 4·h MLP, learned positions, tied head, GPT-2 BPE vocabulary.
    _tf("GPT-3 5B", 5.046, (24, 4096, 16384, 32, 32), 50257, 2048,
        _NEMO_GPT3.format("5b.yaml@00af8f26", "24 layers, hidden 4096, 32 heads"), "GPT3-5B", **_PLAIN, **_TIED),
    _tf("GPT-3 20B", 20.253, (44, 6144, 24576, 48, 48), 50257, 2048,
        _NEMO_GPT3.format("20b.yaml@056a90ed", "48 heads; 44 layers and hidden 6144 as in the launcher's"
                          " own config tests"), "GPT3-20B", **_PLAIN, **_TIED),
    _tf("GPT-3 175B", 174.589, (96, 12288, 49152, 96, 96), 50257, 2048,
        _NEMO_GPT3.format("175b.yaml@056a90ed", "96 layers, hidden 12288, 96 heads")
        + " (Brown et al. 2020 round to 175B)", "GPT3-175B", **_PLAIN, **_TIED),
    # Megatron-LM GPT shapes of Narayanan et al. 2021, Table 1 (arXiv 2104.04473): GELU 4·h MLP, learned
    # positions, tied head, vocabulary 51,200, sequence 2,048; parameters by the paper's Eq. 2.
    _tf("Megatron GPT 1.7B", 1.652, (24, 2304, 9216, 24, 24), 51200, 2048, _MEGATRON_TABLE1.format("1.7B"),
        **_PLAIN, **_TIED),
    _tf("Megatron GPT-3 175B", 175.62, (96, 12288, 49152, 96, 96), 131072, 4096,
        "NVIDIA/Megatron-LM README.md, Training Speed and Scalability: the standard GPT-3 model with a"
        " 131,072-token vocabulary and 4,096-token sequences ('slightly more than 175 billion parameters');"
        " parameters by Narayanan et al. 2021 Eq. 2", **_PLAIN, **_TIED),
    _tf("Megatron GPT 530B", 529.6, (105, 20480, 81920, 128, 128), 51200, 2048, _MEGATRON_TABLE1.format("529.6B"),
        "MT-NLG 530B", **_PLAIN, **_TIED),
    _tf("Megatron GPT 1T", 1008.0, (128, 25600, 102400, 160, 160), 51200, 2048, _MEGATRON_TABLE1.format("1008.0B"),
        **_PLAIN, **_TIED),
    # Nemotron (NeMo 2.0 configs): squared-ReLU 4·h MLP without bias, untied head, 256k vocabulary.
    _tf("Nemotron-3 8B", 8.540, (32, 4096, 16384, 32, 32), 256000, 4096,
        _NEMOTRON.format("Nemotron3Config8B") + "; vocabulary assumed equal to Nemotron-4's (LOW confidence)",
        "Nemotron-8B", "nvidia/nemotron-3-8b-base-4k", **_PLAIN),
    _tf("Nemotron-4 15B", 15.628, (32, 6144, 24576, 48, 8), 256000, 4096,
        _NEMOTRON.format("Nemotron4Config15B") + "; 15.6B matches the report's 3.2B embedding + 12.5B other",
        "Nemotron-15B", "nvidia/Nemotron-4-15B", **_PLAIN),
    _tf("Nemotron-4 340B", 341.022, (96, 18432, 73728, 96, 8), 256000, 4096,
        _NEMOTRON.format("Nemotron4Config340B"), "Nemotron-340B", "nvidia/Nemotron-4-340B-Base", **_PLAIN),
    # Qwen (1st generation): intermediate_size 22016 in its config is two SwiGLU halves (w1, w2) of 11008.
    _tf("Qwen-7B", 7.721, (32, 4096, 11008, 32, 32), 151936, 8192,
        "configuration_qwen.py defaults shipped with Qwen/Qwen-7B (vocab 151936, hidden 4096, 32 layers,"
        " 32 heads, kv_channels 128, intermediate_size 22016 = w1 + w2 of 11008, untied head; 8k context);"
        " params computed from the shape: 32·(4·h² + 3·h + 3·h·11008) + 2·V·h = 7.72B",
        "Qwen/Qwen-7B", "Qwen-7B-Chat-Int4"),
    # --- Encoders and encoder-decoders (layers counts encoder + decoder) --------------------------------
    _tf("BERT-base", 0.110, (12, 768, 3072, 12, 12), 30522, 512,
        _hf("google-bert/bert-base-uncased") + "; 110M params, Devlin et al. 2019",
        "bert-base-uncased", "bert-base-cased", "BERT base", family="encoder", **_PLAIN, **_TIED),
    _tf("BERT-large", 0.335, (24, 1024, 4096, 16, 16), 30522, 512,
        _hf("google-bert/bert-large-uncased") + "; 335M params (Devlin et al. 2019 round to 340M)",
        "bert-large-uncased", "bert-large-cased", "BERT large", family="encoder", **_PLAIN, **_TIED),
    _tf("ViT-L/16", 0.304, (24, 1024, 4096, 16, 16), 1000, 197,
        "torchvision vit_l_16 (Dosovitskiy et al. 2021: 24 layers, hidden 1024, MLP 4096 GELU, 16 heads; "
        "304M params); a 224x224 image is 196 patches + 1 class token; vocab_size is the 1000-class head",
        "vit_l_16", "google/vit-large-patch16-224", family="encoder", **_PLAIN),
    _tf("mT5-XXL", 12.92, (48, 4096, 10240, 64, 64), 250112, 1024,
        _hf("google/mt5-xxl") + " (24 encoder + 24 decoder layers, d_model 4096, d_ff 10240 gated-GELU,"
        " 64 heads of 64, untied head); 12.9B params", "google/mt5-xxl", "bigscience/mt0-xxl", "mt0-xxl",
        family="encoder_decoder"),
    # --- CNNs (no transformer shape) -------------------------------------------------------------------
    {
        "name": "ResNet-50",
        "family": "vision",
        "params_b": 0.0256,
        "layers": 0,
        "hidden_size": 0,
        "intermediate_size": 0,
        "attention_heads": 0,
        "kv_heads": 0,
        "vocab_size": 0,
        "max_seq_len": 0,
        "saved_activations_per_sample": 22.2e6,
        "reference_input": "224x224",
        "source": (
            "He et al. 2016; 25.6M params (torchvision resnet50). Conv outputs per 224x224 image: 11.1M "
            "elements ('acts' of Radosavovic et al. 2020, recomputed from the layer shapes); every conv "
            "output is kept twice for backward (BatchNorm input and ReLU output), so 22.2M saved elements"
        ),
        "aliases": ["resnet50", "ResNet-50 v1.5", "resnet50_v1.5"],
    },
)
# fmt: on
