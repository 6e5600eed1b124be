"""Tests of solver/throughput."""
