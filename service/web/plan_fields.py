"""The plan form's fields: every input of a job plan request (``POST /v1/plans``, kinds train,
fine_tune and batch_inference), each with its form name, where it goes in the request body, its label
and how it is typed in. A choice's options are read from the request type itself
(``msgspec.inspect``), so the form offers exactly what the API accepts."""

from __future__ import annotations

import functools
from typing import Final, Literal, NamedTuple

import msgspec.inspect as mi

from solver import PLAN_REQUEST_KINDS

__all__ = [
    "FIELD_GROUPS",
    "PLAN_FORM_FIELDS",
    "SERVING_FORM_FIELDS",
    "SERVING_GROUPS",
    "FormField",
    "field_for_path",
    "options_of",
    "put_field",
]

Widget = Literal["text", "number", "whole", "select", "list", "check", "targets", "inventory"]


class FormField(NamedTuple):
    """One input: ``name`` in the query, ``path`` in the request body."""

    name: str
    path: tuple[str, ...]
    label: str
    hint: str
    widget: Widget
    group: str


def _f(name: str, label: str, hint: str, widget: Widget, group: str, *path: str) -> FormField:
    return FormField(name, path or (name,), label, hint, widget, group)


_W, _M, _T, _C, _L, _WH, _H, _S, _D, _R = (
    "Workload", "Your own model", "Training", "Choice", "Limits", "Where", "Host", "Software", "Data",
    "Reliability",
)  # fmt: skip
FIELD_GROUPS: Final = (_W, _M, _T, _C, _L, _WH, _H, _S, _D, _R)
"""The form's sections, in order (Workload open, the others folded)."""

# fmt: off
PLAN_FORM_FIELDS: Final[tuple[FormField, ...]] = (
    _f("model", "Model", "a catalog name, e.g. Llama 3.1 8B", "text", _W, "model", "name"),
    _f("kind", "Kind", "", "select", _W),
    _f("method", "Method", "qlora needs a 4-bit precision (nf4 or int4)", "select", _W),
    _f("precision", "Precision", "of the weights (default bf16)", "select", _W),
    _f("tokens", "Tokens", "trained on, or generated", "whole", _W),
    _f("samples", "or samples", "per epoch (vision, encoders)", "whole", _W),
    _f("epochs", "Epochs", "passes over the samples", "number", _W),
    _f("seq_len", "Sequence length", "tokens per sequence", "whole", _W),
    _f("batch_size", "Batch size", "training: the global batch in sequences, optional", "whole", _W),
    _f("output_len", "Output length", "batch inference: tokens generated per request", "whole", _W),
    _f("kv_cache", "KV cache", "inference: auto (16-bit) or fp8", "select", _W),
    _f("model_params_b", "Parameters", "billions, for a model not in the catalog (leave Model empty)", "number", _M, "model", "params_b"),
    _f("model_layers", "Layers", "transformer layers", "whole", _M, "model", "layers"),
    _f("model_hidden_size", "Hidden size", "model (embedding) width", "whole", _M, "model", "hidden_size"),
    _f("model_intermediate_size", "MLP width", "one expert's, for MoE", "whole", _M, "model", "intermediate_size"),
    _f("model_attention_heads", "Attention heads", "query heads", "whole", _M, "model", "attention_heads"),
    _f("model_kv_heads", "KV heads", "key/value heads (GQA/MQA)", "whole", _M, "model", "kv_heads"),
    _f("model_vocab_size", "Vocabulary", "tokens", "whole", _M, "model", "vocab_size"),
    _f("model_max_seq_len", "Longest context", "tokens", "whole", _M, "model", "max_seq_len"),
    _f("model_head_dim", "Head size", "if not hidden size ÷ heads", "whole", _M, "model", "head_dim"),
    _f("model_experts", "Experts", "MoE experts per layer", "whole", _M, "model", "experts"),
    _f("model_active_experts", "Active experts", "MoE experts routed per token", "whole", _M, "model", "active_experts"),
    _f("model_active_params_b", "Active parameters", "MoE, billions per token", "number", _M, "model", "active_params_b"),
    _f("optimizer", "Optimizer", "training (default adamw)", "select", _T),
    _f("recompute", "Recompute", "activation checkpointing; empty: the least that fits", "select", _T),
    _f("lora_rank", "LoRA rank", "r (default 8)", "whole", _T),
    _f("lora_targets", "LoRA targets", "a preset (qv, qkv, attention, mlp, all_linear) or module names, comma-separated", "targets", _T),
    _f("lora_dropout", "LoRA dropout", "probability, default 0", "number", _T),
    _f("master_weights", "Master weights", "fp32 (mixed precision) or none (pure 16-bit)", "select", _T),
    _f("offload", "CPU offload", "", "select", _T),
    _f("attention", "Attention kernel", "", "select", _T),
    _f("stack", "Software style", "optimized or standard (default by kind)", "select", _T),
    _f("micro_batch", "Micro-batch", "sequences per GPU, optional", "whole", _T),
    _f("global_batch_tokens", "Global batch tokens", "tokens per optimizer step, optional", "whole", _T),
    _f("gradient_accumulation_steps", "Accumulation steps", "micro-batches per step (default 1)", "whole", _T),
    _f("optimizer_in_backward", "Optimizer step in backward", "", "check", _T),
    _f("mfu", "MFU override", "model FLOPs utilisation (0-1], optional", "number", _T, "efficiency", "mfu"),
    _f("bandwidth_utilization", "Bandwidth use override", "share of memory bandwidth (0-1], optional", "number", _T, "efficiency", "bandwidth_utilization"),
    _f("acquisition", "Acquire", "", "select", _C),
    _f("objective", "Minimise", "", "select", _C),
    _f("top_k", "Alternatives", "how many to list (default 5)", "whole", _C),
    _f("owned_utilization", "Owned GPUs busy", "share of their life (default 0.85)", "number", _C),
    _f("deadline_hours", "Deadline", "hours, optional", "number", _L, "constraints", "deadline_hours"),
    _f("budget_usd", "Budget", "USD, optional", "number", _L, "constraints", "budget_usd"),
    _f("max_gpus", "GPUs at most", "default 64", "whole", _L, "constraints", "max_gpus"),
    _f("memory_headroom", "Memory headroom", "share of each GPU's memory left free (default 0.1)", "number", _L, "constraints", "memory_headroom"),
    _f("gpus", "Only these GPUs", "comma-separated names, optional", "list", _L, "constraints", "gpus"),
    _f("exclude_gpus", "Never these GPUs", "comma-separated names", "list", _L, "constraints", "exclude_gpus"),
    _f("mig", "MIG slices too", "inference: slices of the GPUs named above", "check", _L, "constraints", "mig"),
    _f("interconnect", "Interconnect at least", "inside an instance", "select", _L, "constraints", "interconnect"),
    _f("ecc", "ECC memory only", "", "check", _L, "constraints", "ecc"),
    _f("spot", "Allow spot prices", "", "check", _L, "constraints", "spot"),
    _f("reserved", "Allow reserved prices", "billed for the whole term", "check", _L, "constraints", "reserved"),
    _f("providers", "Providers", "rent only from these, comma-separated", "list", _WH, "constraints", "providers"),
    _f("regions", "Regions", "rent only in these, comma-separated", "list", _WH, "constraints", "regions"),
    _f("countries", "Countries", "ISO codes, e.g. US, DE", "list", _WH, "constraints", "countries"),
    _f("exclude_countries", "Not in countries", "ISO codes", "list", _WH, "constraints", "exclude_countries"),
    _f("cpu_cores_per_gpu", "vCPUs per GPU", "at least", "number", _H, "host", "cpu_cores_per_gpu"),
    _f("host_ram_gib_per_gpu", "Host memory per GPU", "GiB, at least", "number", _H, "host", "host_ram_gib_per_gpu"),
    _f("storage_read_gbps", "Storage reads per GPU", "Gbit/s, at least", "number", _H, "host", "storage_read_gbps"),
    _f("software_stack", "Stack", "cuda, rocm or any", "select", _S, "software", "stack"),
    _f("requires", "Requires", "libraries or kernels, comma-separated", "list", _S, "software", "requires"),
    _f("dataset_gb", "Dataset", "GB (default: from the work)", "number", _D, "data", "dataset_gb"),
    _f("checkpoint_gb", "Checkpoint", "GB each (default: from the model state)", "number", _D, "data", "checkpoint_gb"),
    _f("checkpoint_every_hours", "Checkpoint every", "hours of work", "number", _D, "data", "checkpoint_every_hours"),
    _f("egress_gb", "Egress", "GB sent out", "number", _D, "data", "egress_gb"),
    _f("interruptions_per_gpu_hour", "Interruptions", "per GPU-hour", "number", _R, "reliability", "interruptions_per_gpu_hour"),
    _f("restart_minutes", "Restart", "minutes after an interruption", "number", _R, "reliability", "restart_minutes"),
    _f("owned_inventory", "GPUs already owned", "GPU:count[:$ per GPU-hour], comma-separated, e.g. H100 SXM:16:0.9", "inventory", _C),
    _f("preemptions_per_hour", "Spot preemptions", "per instance-hour", "number", _R, "reliability", "preemptions_per_hour"),
)
# fmt: on
"""Every field of the form, in the order shown."""

_ENGINE: Final = "Model and engine"
_SERVING_SHARED: Final = {
    "precision": _ENGINE, "kv_cache": _ENGINE, "stack": _ENGINE, "mfu": _ENGINE, "bandwidth_utilization": _ENGINE,
    "owned_utilization": _C, "owned_inventory": _C, "gpus": _L, "exclude_gpus": _L, "mig": _L, "interconnect": _L, "ecc": _L, "spot": _L,
    "reserved": _L, "memory_headroom": _L, "providers": _WH, "regions": _WH, "countries": _WH,
    "exclude_countries": _WH, "cpu_cores_per_gpu": _H, "host_ram_gib_per_gpu": _H, "storage_read_gbps": _H,
    "software_stack": _S, "requires": _S,
}  # fmt: skip
SERVING_GROUPS: Final = (_ENGINE, _M, _C, _L, _WH, _H, _S)
"""The serving form's folded sections, in order (its own fields come first, unfolded)."""
SERVING_FORM_FIELDS: Final[tuple[FormField, ...]] = (
    *(f._replace(group=_SERVING_SHARED[f.name]) for f in PLAN_FORM_FIELDS if f.name in _SERVING_SHARED),
    *(f for f in PLAN_FORM_FIELDS if f.group == _M),  # a model of one's own shape, as on the plan form
    _f("quantisation", "Quantised weights to try", "fp8, int8, int4 (comma-separated), beside the precision",
       "list", _ENGINE),
    _f("percentile", "SLO percentile", "of requests the TTFT and TPOT targets hold for (default 90)", "number", _L,
       "slo", "percentile"),
)  # fmt: skip
"""The serving request's fields the serving page adds to its rate, mix, SLO and fleet rules: the
shared ones (precision, limits, where, host, software) as the plan form has them, and its own."""

_BY_PATH: Final = {f.path: f.name for f in (*PLAN_FORM_FIELDS, *SERVING_FORM_FIELDS)}
_CHECKED: Final = ("on", "true", "1")


def _value(field: FormField, text: str) -> object:
    if field.widget == "check":
        return text in _CHECKED
    if field.widget == "list":
        return [part.strip() for part in text.split(",") if part.strip()]
    if field.widget == "inventory":
        return [_owned(item) for item in text.split(",") if item.strip()]
    if field.widget == "targets" and text not in options_of("lora_targets"):
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _owned(item: str) -> dict[str, str]:
    """One ``GPU:count[:usd per GPU-hour]`` of the owned-inventory field (the API checks the values)."""
    parts = [part.strip() for part in item.split(":")]
    return dict(zip(("gpu", "count", "usd_per_gpu_hour"), parts, strict=False))


def put_field(body: dict[str, object], field: FormField, text: str) -> None:
    """``text`` of ``field`` put into the request ``body`` at its path (lists split at commas, a
    checkbox as true or false)."""
    for part in field.path[:-1]:
        inner = body.setdefault(part, {})
        if not isinstance(inner, dict):
            raise TypeError(f"{part} holds {inner!r}, not an object")
        body = inner
    body[field.path[-1]] = _value(field, text)


def field_for_path(path: str) -> str:
    """The form field a request path names (``constraints.providers[0]`` → ``providers``; the model's
    own fields → ``model``)."""
    parts = tuple(p.split("[")[0] for p in path.removeprefix("$.").split(".") if p)
    for end in range(len(parts), 0, -1):
        if parts[:end] in _BY_PATH:
            return _BY_PATH[parts[:end]]
    if parts and parts[0] == "model":
        return "model"
    return parts[-1] if parts else "model"


def _literals(t: mi.Type) -> tuple[str, ...]:
    if isinstance(t, mi.LiteralType):
        return tuple(str(v) for v in t.values)
    if isinstance(t, mi.UnionType):
        return tuple(v for inner in t.types for v in _literals(inner))
    if isinstance(t, mi.Metadata):
        return _literals(t.type)
    if isinstance(t, mi.ListType):
        return _literals(t.item_type)
    return ()


def _field_type(t: mi.Type, name: str) -> mi.Type:
    while isinstance(t, (mi.Metadata, mi.UnionType)):
        t = (
            t.type
            if isinstance(t, mi.Metadata)
            else next(x for x in t.types if not isinstance(x, mi.NoneType))
        )
    if not isinstance(t, mi.StructType):
        raise KeyError(name)
    return next(f.type for f in t.fields if f.name == name)


@functools.cache
def options_of(name: str) -> tuple[str, ...]:
    """The values a choice field accepts, read from the request type (kind: the job kinds)."""
    jobs = [k for k in PLAN_REQUEST_KINDS if k.__struct_config__.tag != "serving"]
    if name == "kind":
        return tuple(str(k.__struct_config__.tag) for k in jobs)
    field = next(f for f in PLAN_FORM_FIELDS if f.name == name)
    t: mi.Type = mi.type_info(jobs[-1])
    for part in field.path:
        t = _field_type(t, part)
    return _literals(t)
