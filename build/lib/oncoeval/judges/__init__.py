"""Judges you can trust: validation against human labels, rates corrected for judge error."""
