# The toy study's own tests import `oncoeval.studies.toy`, which exists only in the workflow copy
# that tests/spine/test_fifth_study.py builds; they run there, not in the repository's suite.
collect_ignore = ["tests"]
