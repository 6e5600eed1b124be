"""Which linear layers carry LoRA adapters: presets, module names and their common aliases.

Module names follow Hugging Face's Llama implementation (``q_proj`` … ``down_proj``), the names PEFT's
``target_modules`` uses for most decoder models. The aliases are the same matrices under the names
other code bases give them, so a request copied from one of those configs resolves unchanged:

* ``wq``/``wk``/``wv``/``wo`` and ``w1``/``w3``/``w2`` (gate/up/down): Meta's reference Llama
  ``model.py`` and the Mixtral expert layers;
* ``query``/``key``/``value``: BERT-family attention and LitGPT's ``lora_query``/``lora_key``/
  ``lora_value`` switches;
* ``out_proj``/``output_proj`` for the attention output projection (``o_proj``; ``dense`` is not
  accepted because BERT-style models use it for the MLP output as well);
* ``fc1``/``fc2`` for the two matrices of a plain (non-gated) MLP (GPT-2/OPT/Phi-2 style);
* fused matrices that hold several of the above: ``qkv_proj`` and ``query_key_value`` (Phi-3, Falcon,
  GPT-NeoX, BLOOM) and ``gate_up_proj`` (Phi-3).

Presets: ``qv`` (the default: PEFT's built-in target for Llama-family models is ``["q_proj",
"v_proj"]``, LitGPT's LoRA defaults enable query and value only, and Hu et al. 2021 adapted W_q and
W_v), ``qkv``, ``attention`` (q, k, v, o), ``mlp`` and ``all_linear`` (every projection of every block,
PEFT's ``"all-linear"``, which leaves the output head out).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from solver.catalog.models import ModelArch
from solver.errors import InvalidWorkload

__all__ = [
    "DEFAULT_LORA_TARGETS",
    "LORA_MODULES",
    "LoraModule",
    "LoraPreset",
    "lora_adapter_params",
    "resolve_lora_targets",
]

LoraModule = Literal["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LoraPreset = Literal["qv", "qkv", "attention", "mlp", "all_linear"]

LORA_MODULES: Final[tuple[LoraModule, ...]] = get_args(LoraModule)
DEFAULT_LORA_TARGETS: Final[LoraPreset] = "qv"

_PRESETS: Final[dict[str, tuple[LoraModule, ...]]] = {
    "qv": ("q_proj", "v_proj"),
    "qkv": ("q_proj", "k_proj", "v_proj"),
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate_proj", "up_proj", "down_proj"),
    "all_linear": LORA_MODULES,
}
_ALIASES: Final[dict[str, tuple[LoraModule, ...]]] = {
    "q": ("q_proj",),
    "wq": ("q_proj",),
    "query": ("q_proj",),
    "k": ("k_proj",),
    "wk": ("k_proj",),
    "key": ("k_proj",),
    "v": ("v_proj",),
    "wv": ("v_proj",),
    "value": ("v_proj",),
    "o": ("o_proj",),
    "wo": ("o_proj",),
    "out_proj": ("o_proj",),
    "output_proj": ("o_proj",),
    "gate": ("gate_proj",),
    "w1": ("gate_proj",),
    "up": ("up_proj",),
    "w3": ("up_proj",),
    "fc1": ("up_proj",),
    "down": ("down_proj",),
    "w2": ("down_proj",),
    "fc2": ("down_proj",),
    "qkv_proj": ("q_proj", "k_proj", "v_proj"),
    "query_key_value": ("q_proj", "k_proj", "v_proj"),
    "gate_up_proj": ("gate_proj", "up_proj"),
}


def _names(spec: str | list[str]) -> list[tuple[str, tuple[LoraModule, ...]]]:
    """Each requested name with the canonical modules it stands for (preset, module or alias)."""
    if isinstance(spec, str):
        if spec not in _PRESETS:
            raise InvalidWorkload(
                "lora_targets",
                f"unknown preset {spec!r}; use one of {', '.join(_PRESETS)} or a list of modules",
            )
        return [(spec, _PRESETS[spec])]
    if not spec:
        raise InvalidWorkload("lora_targets", "give at least one module (or a preset such as 'qv')")
    resolved = []
    for raw in spec:
        name = raw.strip().lower()
        modules = (name,) if name in LORA_MODULES else _ALIASES.get(name)
        if modules is None:
            raise InvalidWorkload(
                "lora_targets",
                f"unknown module {raw!r}; valid modules: {', '.join(LORA_MODULES)} "
                f"(aliases: {', '.join(_ALIASES)})",
            )
        resolved.append((raw, tuple(modules)))
    return resolved


def resolve_lora_targets(spec: str | list[str], arch: ModelArch) -> tuple[LoraModule, ...]:
    """The canonical modules ``spec`` names on ``arch``, in block order, each once.

    A plain (non-gated) MLP has no gate matrix: the ``mlp``/``all_linear`` presets then mean its two
    matrices (up, down), and naming ``gate_proj`` explicitly is an error.
    """
    wanted: set[LoraModule] = set()
    for raw, modules in _names(spec):
        if not arch.gated_mlp and "gate_proj" in modules:
            if isinstance(spec, str):
                modules = tuple(m for m in modules if m != "gate_proj")
            else:
                raise InvalidWorkload(
                    "lora_targets",
                    f"{raw!r} names a gate projection, but {arch.name} has a plain two-matrix MLP "
                    "(use up_proj/fc1 and down_proj/fc2)",
                )
        wanted.update(modules)
    return tuple(m for m in LORA_MODULES if m in wanted)


def _module_shape(module: LoraModule, arch: ModelArch) -> tuple[int, int, int]:
    """(input width, output width, copies per layer) of one adapted matrix."""
    h, head_dim = arch.hidden_size, arch.effective_head_dim
    q_width, kv_width = arch.attention_heads * head_dim, arch.kv_heads * head_dim
    i, experts = arch.intermediate_size, arch.experts
    shapes: dict[LoraModule, tuple[int, int, int]] = {
        "q_proj": (h, q_width, 1),
        "k_proj": (h, kv_width, 1),
        "v_proj": (h, kv_width, 1),
        "o_proj": (q_width, h, 1),
        "gate_proj": (h, i, experts),
        "up_proj": (h, i, experts),
        "down_proj": (i, h, experts),
    }
    return shapes[module]


def lora_adapter_params(arch: ModelArch, rank: int, targets: tuple[LoraModule, ...]) -> float:
    """Adapter parameters: ``rank · (in + out)`` for each targeted matrix of every layer (and expert)."""
    per_layer = 0
    for module in targets:
        d_in, d_out, copies = _module_shape(module, arch)
        per_layer += (d_in + d_out) * copies
    return float(rank * arch.layers * per_layer)
