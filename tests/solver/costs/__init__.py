"""Tests of solver/costs."""
