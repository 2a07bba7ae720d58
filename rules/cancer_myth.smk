# The cancer_myth study: rules land with its issue.

STUDY_TARGETS["cancer_myth"] = lambda: []
