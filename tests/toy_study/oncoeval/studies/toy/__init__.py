"""toy: a test-only study (arithmetic questions answered with one number), the smallest study
that follows the contract (oncoeval/studies/contract.py)."""
