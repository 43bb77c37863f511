"""Loaders, the registry of the papers' sets and splits (NumPy, never traced). Private:
:mod:`pacbound.datasets` is their public face."""
