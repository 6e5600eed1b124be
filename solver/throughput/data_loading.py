"""The host CPUs an image-training job needs to decode its JPEGs as fast as its GPUs train on them.

A vision model trains on images its data loader prepares on the host's CPUs (torchvision's
``ImageFolder`` opens every JPEG with Pillow, then the ImageNet recipe applies ``RandomResizedCrop`` to
the full decoded image, a flip, ``ToTensor`` and ``Normalize``, and the ``DataLoader`` collates the
samples and passes them between processes); when the CPUs cannot keep up the GPUs wait, whatever
their speed. The rule, per GPU:

    vCPUs needed = 1 + images/s per GPU ÷ :data:`IMAGES_PER_VCPU_S`

- **1 vCPU for the training process**: each GPU is driven by one process (PyTorch
  DistributedDataParallel runs one process per GPU), which runs the Python training loop and is busy
  launching kernels;
- **Pillow JPEG decoding at 537 images/s on one thread**: the single-thread decode rate of Pillow on
  ImageNet's validation JPEGs, decoded from memory, on a Google Cloud AMD EPYC 9B14 (Zen 4) — the
  slowest of the three x86 server CPUs measured (577 on Intel Xeon Platinum 8581C, 726 on EPYC 9B45)
  (Iglovikov and Kosarevsky, "Single-Thread JPEG Decoder Benchmarks Mis-Evaluate ML Data Loaders",
  arXiv:2605.08731, 2026; the ternaus/imread_benchmark tables);
- **RandomResizedCrop of the full decoded image to 224 × 224 at 1,282 images/s on one thread**: Pillow
  12.2's rate on ImageNet validation images, decoded in memory, one thread (albumentations-team/
  benchmark, its image table, the ``pillow`` column; torchvision's tensor version runs at 978);
- **a vCPU is one hyperthread**: two share a core, and when every data-loader worker is busy a thread
  on a busy core "can expect slightly more than half of the throughput that it obtains while running
  alone" (VMware vSphere Resource Management, *Hyperthreading*), and Intel "suggests a possible 30%
  performance increase" from the second thread (Bekman, *Machine Learning Engineering*,
  ``compute/cpu``). The single-thread rates above were measured alone on a core, so a vCPU delivers
  :data:`SMT_SHARE` = (1 + 0.3) ÷ 2 = 0.65 of them (Intel's best case, so the rule stays a floor).

Together 2.64 ms of one thread alone an image, 378 images/s, and 246 images/s per vCPU of a busy
host. The flip, ``ToTensor``, ``Normalize`` of the 224 × 224 crop, the collation and the transfer
between processes only add to it, and no source at hand measures them at that size, so they are left
out: the rule is a floor — a host below it cannot feed its GPUs; one above it may still be short.
A ResNet-50 at 833 images/s on one GPU needs 4.4 vCPUs: a 6-vCPU host passes the floor (the cited
figures do not show it short), two such GPUs on it do not. With NVIDIA DALI decoding on the GPU the
CPUs do little of this work (NVIDIA recommends DALI's GPU decoding on a DGX-2, 3 cores per V100, and
its CPU pipeline on a DGX-1 or DGX A100: NVIDIA DeepLearningExamples, ResNet50 v1.5 for PyTorch); the
rule is for the PyTorch data loader the throughput assumes. The practitioners' rule of thumb — a
core for the training process and one for each ``DataLoader`` worker, "3-4 and sometimes more" workers
for vision models (Bekman, *Machine Learning Engineering*, ``compute/cpu``) — would ask 8 to 10 vCPUs
of every image job whatever its rate; it is guidance, not a measurement, so the rule does not take it.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "IMAGES_PER_THREAD_S",
    "IMAGES_PER_VCPU_S",
    "JPEG_DECODES_PER_THREAD_S",
    "RANDOM_RESIZED_CROPS_PER_THREAD_S",
    "SMT_SHARE",
    "TRAINING_PROCESS_VCPUS",
    "decode_shortfall",
    "vcpus_to_decode",
]

JPEG_DECODES_PER_THREAD_S: Final = 537.0
"""Pillow's single-thread JPEG decode rate on ImageNet validation images, AMD EPYC 9B14 (arXiv:2605.08731)."""
RANDOM_RESIZED_CROPS_PER_THREAD_S: Final = 1282.0
"""Pillow's single-thread RandomResizedCrop to 224 × 224 of a decoded ImageNet validation image
(albumentations-team/benchmark, Pillow 12.2.0)."""
SMT_SHARE: Final = 0.65
"""The share of a lone thread's throughput one of two hyperthreads on a busy core delivers: (1 + 0.3) ÷ 2,
Intel's "possible 30%" gain from the second thread (VMware: "slightly more than half")."""
IMAGES_PER_THREAD_S: Final = 1.0 / (1.0 / JPEG_DECODES_PER_THREAD_S + 1.0 / RANDOM_RESIZED_CROPS_PER_THREAD_S)
"""Images one thread alone on a core decodes and crops a second (378)."""
IMAGES_PER_VCPU_S: Final = SMT_SHARE * IMAGES_PER_THREAD_S
"""Images one vCPU (a hyperthread of a busy core) decodes and crops a second (246)."""
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
        " crops: Pillow on ImageNet JPEGs, arXiv:2605.08731, RandomResizedCrop, albumentations-team/benchmark, "
        "a hyperthread's share of a busy core); "
        f"the offer has {vcpus_per_gpu:g} per GPU, "
        f"{needed - vcpus_per_gpu:.1f} short"
    )
