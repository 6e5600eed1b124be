"""Tests of solver/memory."""
