"""The run's config: files read strictly (``files``), checked against the schemas and settled
(``checks``), and the configuration reference written from the schemas (``reference``).
"""
