"""Error types that carry enough context for a user to fix their input."""


class OncoEvalError(Exception):
    """Base class for errors the workflow reports to users."""


class ConfigError(OncoEvalError):
    """The configuration is invalid; the message names the key."""


class InputError(OncoEvalError):
    """An input file is invalid; the message names the file, the record and what is wrong."""

    def __init__(self, path, record, problem):
        self.path = str(path)
        self.record = record
        self.problem = problem
        where = f"{self.path}" + (f", {record}" if record not in (None, "") else "")
        super().__init__(f"{where}: {problem}")
