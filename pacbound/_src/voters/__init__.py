"""Voters and voter families (stumps, searches, RBF, ensembles, the Voters protocol). Private:
:mod:`pacbound.voters` is their public face."""
