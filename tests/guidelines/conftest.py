"""Shared bits of the guidelines tests."""

from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "guidelines"
