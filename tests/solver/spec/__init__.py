"""Tests of solver/spec."""
