"""Registers the test-only `tiny` backend in every Python process of a test's workflow run (the
one registry line a new backend adds to oncoeval/backends/__init__.py)."""

from oncoeval.backends import BACKEND_MODULES

BACKEND_MODULES["tiny"] = "tiny"
