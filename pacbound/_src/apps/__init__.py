"""Applications built on the library: the ``pacbound`` command (:mod:`~pacbound._src.apps.cli`),
plots (:mod:`~pacbound._src.apps.plots`, the ``plot`` extra) and the papers' reproductions
(:mod:`~pacbound._src.apps.reproduce`, the ``sklearn`` extra). Nothing in the library imports them.
"""
