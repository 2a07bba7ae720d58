"""Statistics: the interval engine of tables, comparisons and the bench (``compare``: means and
paired differences over whole clusters, by the measure's declared kind and range) and the seeded
percentile bootstrap of whole-set statistics (``bootstrap``). Nothing here names a study.
"""
