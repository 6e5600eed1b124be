"""The host CPUs an image-training job needs to decode its JPEGs as fast as its GPUs train on them.

A vision model trains on images its data loader decodes on the host's CPUs (torchvision's
``ImageFolder`` opens every JPEG with Pillow); when the CPUs cannot keep up the GPUs wait, whatever
their speed. The rule, per GPU:

    vCPUs needed = 1 + images/s per GPU × (1 ÷ :data:`JPEG_DECODES_PER_VCPU_S` + :data:`RESIZE_S`)

- **1 vCPU for the training process**: each GPU is driven by one process (PyTorch
  DistributedDataParallel runs one process per GPU), which runs the Python training loop and is busy
  launching kernels;
- **Pillow JPEG decoding at 537 images/s per vCPU**: the single-thread decode rate of Pillow on
  ImageNet's validation JPEGs, decoded from memory, on a Google Cloud AMD EPYC 9B14 (Zen 4) — the
  slowest of the three x86 server CPUs measured (577 on Intel Xeon Platinum 8581C, 726 on EPYC 9B45)
  (Iglovikov and Kosarevsky, "Single-Thread JPEG Decoder Benchmarks Mis-Evaluate ML Data Loaders",
  arXiv:2605.08731, 2026; the ternaus/imread_benchmark tables);
- **resizing the crop to 224 × 224 at 1.0 ms an image**: PyTorch's single-thread benchmark of
  ``interpolate()`` (bilinear) from a 600 × 400 image to 224 × 224, measured "in a typical torchvision
  ImageNet training job (where num_threads=1 because of DataLoader multi-processing)" (pytorch/pytorch
  pull request 86361, 2022).

Together 2.86 ms of CPU an image, 349 images/s per vCPU. The flip, the conversion to a tensor and the
normalisation, and two threads sharing one core, only add to it, so the rule is a floor — a host below
it cannot feed its GPUs; one above it may still be short. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "IMAGES_PER_VCPU_S",
    "JPEG_DECODES_PER_VCPU_S",
    "RESIZE_S",
    "TRAINING_PROCESS_VCPUS",
    "decode_shortfall",
    "vcpus_to_decode",
]

JPEG_DECODES_PER_VCPU_S: Final = 537.0
"""Pillow's single-thread JPEG decode rate on ImageNet validation images, AMD EPYC 9B14 (arXiv:2605.08731)."""
RESIZE_S: Final = 1.0e-3
"""Seconds of one CPU thread to resize an image to 224 × 224 (pytorch/pytorch PR 86361's benchmark)."""
IMAGES_PER_VCPU_S: Final = 1.0 / (1.0 / JPEG_DECODES_PER_VCPU_S + RESIZE_S)
"""Images one vCPU decodes and resizes a second (349)."""
TRAINING_PROCESS_VCPUS: Final = 1.0
"""The vCPU each GPU's own training process takes (one process per GPU, PyTorch DDP)."""


def vcpus_to_decode(images_per_s_per_gpu: float) -> float:
    """The vCPUs per GPU that decode ``images_per_s_per_gpu`` JPEGs and run the GPU's process."""
    return TRAINING_PROCESS_VCPUS + images_per_s_per_gpu / IMAGES_PER_VCPU_S


def decode_shortfall(images_per_s_per_gpu: float, vcpus_per_gpu: float) -> str | None:
    """Why a host of ``vcpus_per_gpu`` cannot feed ``images_per_s_per_gpu`` per GPU, or None."""
    needed = vcpus_to_decode(images_per_s_per_gpu)
    if vcpus_per_gpu >= needed:
        return None
    return (
        f"decoding {images_per_s_per_gpu:,.0f} images/s per GPU needs {needed:.1f} vCPUs per GPU (1 for the "
        f"training process + {images_per_s_per_gpu:,.0f} ÷ {IMAGES_PER_VCPU_S:,.0f} images/s a vCPU decodes and"
        " resizes: Pillow on ImageNet JPEGs, arXiv:2605.08731, and a 224 × 224 resize, pytorch PR 86361); "
        f"the offer has {vcpus_per_gpu:g} per GPU, "
        f"{needed - vcpus_per_gpu:.1f} short"
    )
