"""Model architectures the memory and throughput models need, and lookup by (loose) name.

The built-in catalog lives in :mod:`solver.catalog.model_data`; every entry names the source of its numbers
(the model's ``config.json`` or paper). :func:`lookup_model` accepts the spellings found in the wild:
Hugging Face repo ids, ``"Llama 3 8B"``, ``"llama-3-8b"``, chat/instruct variants and quantised uploads
(``-FP8``, ``-AWQ``, ``-GPTQ-Int4``..., which share the base architecture) and a trailing parenthesised remark
such as ``"GPT-J 6B (CNN/DailyMail summarization)"``.
"""

from __future__ import annotations

import difflib
import re
from typing import Final, Literal

import msgspec

from solver.catalog.model_data import CATALOG_ENTRIES
from solver.errors import UnknownModel

__all__ = ["ModelArch", "ModelFamily", "active_params", "list_models", "lookup_model", "normalise_name"]

ModelFamily = Literal["decoder", "encoder", "encoder_decoder", "vision", "diffusion"]
"""What kind of network a model is; only transformer families have a layer/hidden/head shape."""


class ModelArch(msgspec.Struct, frozen=True, kw_only=True):
    """The architecture numbers of one model, as published in its ``config.json`` or paper.

    Transformer models (``layers > 0``) carry their shape. Non-transformer models (CNNs) have
    ``layers == hidden_size == ... == 0`` and instead state ``saved_activations_per_sample``: the
    number of activation elements kept for the backward pass per sample at their reference input.
    ``intermediate_size`` of a mixture-of-experts model is the size of one expert's MLP.
    """

    name: str
    family: ModelFamily
    params_b: float
    layers: int
    hidden_size: int
    intermediate_size: int
    attention_heads: int
    kv_heads: int
    vocab_size: int
    max_seq_len: int
    source: str
    experts: int = 1
    active_experts: int = 1
    active_params_b: float | None = None
    head_dim: int | None = None
    """Per-head size when it is not ``hidden_size / attention_heads`` (Gemma 2, Qwen3, Llama 4)."""
    kv_cache_width: int | None = None
    """Elements cached per token per layer (K and V together) when it is not ``2·kv_heads·head_dim``:
    multi-head latent attention (DeepSeek-V3) caches one compressed latent plus a RoPE key."""
    saved_activations_per_sample: float | None = None
    """Non-transformer models only: activation elements saved for backward per sample."""
    tied_embeddings: bool = False
    """Whether the output head shares the input embedding matrix (counted once in ``params_b``)."""
    gated_mlp: bool = True
    """Whether the MLP is gated (SwiGLU/GeGLU: three matrices) rather than two plain matrices."""
    reference_input: str = ""
    """The input size ``saved_activations_per_sample`` refers to (e.g. ``"224x224"``)."""
    aliases: tuple[str, ...] = ()

    @property
    def is_transformer(self) -> bool:
        """Whether the model has a transformer shape the per-layer formulas apply to."""
        return self.layers > 0

    @property
    def is_decoder_llm(self) -> bool:
        """Whether the model is a decoder-only language model (generates token by token, a KV cache)."""
        return self.family == "decoder" and self.is_transformer

    @property
    def embedding_params(self) -> int:
        """Parameters in the token embedding and output head (kept in 16-bit by weight quantisers)."""
        return self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)

    @property
    def effective_head_dim(self) -> int:
        """Size of one attention head (0 for non-transformer models)."""
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden_size // self.attention_heads if self.attention_heads else 0

    @property
    def kv_elements_per_token_layer(self) -> int:
        """Elements of KV cache one token occupies in one layer."""
        if self.kv_cache_width is not None:
            return self.kv_cache_width
        return 2 * self.kv_heads * self.effective_head_dim


def active_params(arch: ModelArch) -> float:
    """Parameters (billions) that take part in processing one token: ``params_b`` for dense models."""
    return arch.active_params_b if arch.active_params_b is not None else arch.params_b


_REMARK = re.compile(r"\s*\([^()]*\)\s*$")
_META_PREFIX = re.compile(r"^meta[\s_.-]+(?=llama)")
_VARIANT_SUFFIX = re.compile(
    r"[\s_.-]+(hf|instruct|chat|it|base|v\d+\.\d+|\d{4}"
    # Quantised uploads (-FP8, -FP8-dynamic, -AWQ, -GPTQ-Int4, -quantized.w8a8, -bnb-4bit, -GGUF...) hold
    # the same architecture; the request's precision field, not the name, says how the weights are stored.
    r"|fp8(?:[\s_.-]+dynamic)?|nvfp4|awq|gptq|int[48]|gguf"
    r"|(?:quantized[\s_.-]+)?w\d+a\d+|(?:bnb[\s_.-]+)?[48]bit)$"
)
_SEPARATORS = re.compile(r"[\s_.\-]+")


def _strip_decorations(name: str) -> str:
    """Lower-case, drop a trailing ``(remark)``, an ``org/`` prefix and a ``Meta-`` before ``Llama``."""
    text = _REMARK.sub("", name.strip().lower())
    text = text.rsplit("/", 1)[-1].strip()
    return _META_PREFIX.sub("", text)


def normalise_name(name: str) -> str:
    """The separator-free key of a model name: ``"Llama-3 8B"`` and ``"llama 3_8b"`` → ``"llama38b"``."""
    return _SEPARATORS.sub("", _strip_decorations(name))


def _candidate_keys(name: str) -> list[str]:
    """Keys to try, the exact spelling first, then with variant suffixes (-Instruct, -chat, -hf) and
    quantisation suffixes (-FP8, -AWQ, -GPTQ-Int4, -w8a8, -bnb-4bit) removed one at a time."""
    text = _strip_decorations(name)
    keys = [_SEPARATORS.sub("", text)]
    while (stripped := _VARIANT_SUFFIX.sub("", text)) != text:
        text = stripped
        keys.append(_SEPARATORS.sub("", text))
    return keys


def _build_catalog() -> tuple[tuple[ModelArch, ...], dict[str, ModelArch]]:
    """Validate the catalog entries and index every name and alias; a key clash is a bug."""
    models = tuple(msgspec.convert(entry, ModelArch) for entry in CATALOG_ENTRIES)
    index: dict[str, ModelArch] = {}
    for arch in models:
        for spelling in (arch.name, *arch.aliases):
            key = normalise_name(spelling)
            other = index.setdefault(key, arch)
            if other is not arch:
                raise ValueError(f"catalog key {key!r} names both {other.name!r} and {arch.name!r}")
    return models, index


_MODELS, _INDEX = _build_catalog()
_MAX_SUGGESTIONS: Final = 5


def list_models() -> list[ModelArch]:
    """Every built-in model, in catalog order."""
    return list(_MODELS)


def lookup_model(name: str) -> ModelArch:
    """The catalog entry for ``name`` (case, separators, org prefix and chat/instruct suffix ignored).

    Raises :class:`~solver.errors.UnknownModel` (field ``model.name``) with up to five close names.
    """
    for key in _candidate_keys(name):
        if (arch := _INDEX.get(key)) is not None:
            return arch
    key = normalise_name(name)
    close = difflib.get_close_matches(key, list(_INDEX), n=3 * _MAX_SUGGESTIONS, cutoff=0.6)
    suggestions: list[str] = []
    for match in close:
        canonical = _INDEX[match].name
        if canonical not in suggestions:
            suggestions.append(canonical)
    raise UnknownModel(name, suggestions[:_MAX_SUGGESTIONS])
