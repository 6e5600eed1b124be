"""Tests of solver/optimise."""
