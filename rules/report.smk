# Cheap rules run on the submitting host, never as cluster jobs.
localrules:
    all,
    adhoc_requests,
