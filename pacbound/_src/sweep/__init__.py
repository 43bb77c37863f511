"""Grids, k-fold cross-validation, bound-based selection and sharding. Private:
:mod:`pacbound.sweep` is their public face."""
