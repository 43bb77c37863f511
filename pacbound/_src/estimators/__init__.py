"""The scikit-learn estimators: one base and one declaration per learner. Private:
:mod:`pacbound.estimators` is their public face."""
