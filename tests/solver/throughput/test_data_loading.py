"""The host CPU rule for image training: vCPUs per GPU = 1 + images/s per GPU ÷ the images a vCPU
decodes and resizes a second, from the two cited single-thread measurements."""

from __future__ import annotations

import pytest

from solver.throughput.data_loading import (
    IMAGES_PER_VCPU_S,
    JPEG_DECODES_PER_VCPU_S,
    RESIZE_S,
    decode_shortfall,
    vcpus_to_decode,
)


def test_a_vcpu_decodes_and_resizes_349_images_a_second() -> None:
    assert JPEG_DECODES_PER_VCPU_S == 537
    assert abs(RESIZE_S - 1e-3) < 1e-12
    assert abs(IMAGES_PER_VCPU_S - 1 / (1 / 537 + 1e-3)) < 1e-9
    assert round(IMAGES_PER_VCPU_S) == 349


def test_the_issues_resnet_at_833_images_per_second() -> None:
    """833 images/s on one GPU needs 3.4 vCPUs: a 6-vCPU host with one GPU passes the floor, with two
    it does not; a 2-vCPU host cannot feed one."""
    assert vcpus_to_decode(833) == pytest.approx(1 + 833 / IMAGES_PER_VCPU_S)
    assert decode_shortfall(833, 6) is None
    two = decode_shortfall(833, 3)  # a 6-vCPU host with two such GPUs
    assert two is not None and "needs 3.4 vCPUs per GPU" in two and "0.4 short" in two
    thin = decode_shortfall(833, 2)
    assert thin is not None and "arXiv:2605.08731" in thin and "pytorch PR 86361" in thin
