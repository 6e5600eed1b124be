"""Tests of solver/catalog."""
