"""One subpackage per study: its loaders, prompts, parsers, metrics and tables."""
