"""One subpackage per study: the logic behind its rules."""
