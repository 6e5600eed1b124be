"""GPU, model, network, MIG and measured-profile facts: the catalog every other room reads.

The face of ``solver.catalog``: every public name of its modules."""

from solver.catalog.gpus import INTERCONNECT_RANK, NODE_GPUS, GpuSpec, Interconnect, gpu_id_for, node_gpus
from solver.catalog.mig import MigProfile, SliceSpec, parent_gpus_for, slice_id, slice_spec, slices_of
from solver.catalog.model_data import CATALOG_ENTRIES
from solver.catalog.models import (
    ModelArch,
    ModelFamily,
    active_params,
    list_models,
    lookup_model,
    normalise_name,
)
from solver.catalog.network import (
    FABRIC_TRAITS,
    NETWORK_CLASSES,
    FabricTraits,
    Network,
    NetworkClass,
    achievable_gbps,
    reference_cluster_network,
    reference_nic_gbps,
    spans_instances,
)
from solver.catalog.precisions import (
    ARCHITECTURES,
    FORMATS,
    Format,
    KvCache,
    PrecisionClass,
    class_formats,
    kv_element_bytes,
    measured_kv_cache,
    needed_formats,
    precision_refusal,
)
from solver.catalog.profiles import MeasuredProfile, ServingProfile
from solver.catalog.providers import (
    OWNED_PROVIDER,
    PROVIDER_CLASS_OF,
    PROVIDER_CLASSES,
    UNKNOWN_PROVIDER_CLASS,
    ProviderClass,
    provider_class,
)
from solver.catalog.stacks import STACK_PARALLELISM, StackParallelism, stack_parallelism

__all__ = [
    "ARCHITECTURES",
    "CATALOG_ENTRIES",
    "FABRIC_TRAITS",
    "FORMATS",
    "INTERCONNECT_RANK",
    "NETWORK_CLASSES",
    "NODE_GPUS",
    "OWNED_PROVIDER",
    "PROVIDER_CLASSES",
    "PROVIDER_CLASS_OF",
    "STACK_PARALLELISM",
    "UNKNOWN_PROVIDER_CLASS",
    "FabricTraits",
    "Format",
    "GpuSpec",
    "Interconnect",
    "KvCache",
    "MeasuredProfile",
    "MigProfile",
    "ModelArch",
    "ModelFamily",
    "Network",
    "NetworkClass",
    "PrecisionClass",
    "ProviderClass",
    "ServingProfile",
    "SliceSpec",
    "StackParallelism",
    "achievable_gbps",
    "active_params",
    "class_formats",
    "gpu_id_for",
    "kv_element_bytes",
    "list_models",
    "lookup_model",
    "measured_kv_cache",
    "needed_formats",
    "node_gpus",
    "normalise_name",
    "parent_gpus_for",
    "precision_refusal",
    "provider_class",
    "reference_cluster_network",
    "reference_nic_gbps",
    "slice_id",
    "slice_spec",
    "slices_of",
    "spans_instances",
    "stack_parallelism",
]
