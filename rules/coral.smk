# The coral study: rules land with its issue.

STUDY_TARGETS["coral"] = lambda: []
