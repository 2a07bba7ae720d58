# The side_effects study: rules land with its issue.

STUDY_TARGETS["side_effects"] = lambda: []
