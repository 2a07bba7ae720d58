# The guidelines study: rules land with its issue.

STUDY_TARGETS["guidelines"] = lambda: []
