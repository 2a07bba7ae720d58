"""OncoEval: evaluate language models on four oncology tasks from published studies.

The package holds the logic; the Snakemake rules under ``rules/`` and the thin entry points under
``scripts/`` only wire files to it.
"""

__version__ = "0.1.0"
