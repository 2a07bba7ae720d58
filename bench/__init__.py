"""Benchmarks (never part of the test run): ``python -m bench [NAME ...]``."""
