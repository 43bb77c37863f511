"""The papers' Table 1 protocols: learners, grids and folds (:mod:`.protocols`), the published
numbers (:mod:`.paper_tables`), the runner (:mod:`.runner`) and the ``pacbound reproduce``
command (:mod:`.command`).
"""
