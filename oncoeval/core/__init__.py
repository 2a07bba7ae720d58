"""The foundation floor: what every other part of the package stands on, importing nothing above.

Errors that name file, record and problem (``errors``), readers of user files (``inputs``) and
file helpers (``io``), how values are written (``format``), where results lie (``layout``),
names that become paths (``names``), the workflow's own files (``source``), schema defaults
(``schema``), API keys kept out of every output (``credentials``), the request and response
records that cross the `generate` rule (``records``, ``shapes``), the guards of the answer
parsers (``parsing``) and how a study's config block is read (``blocks``).
"""
