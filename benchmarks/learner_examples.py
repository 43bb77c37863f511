"""The learners' small-run settings the benchmark scripts share (plain data: no JAX import, so
that bench_first_call's fresh processes time ``import pacbound`` alone).

``EXAMPLES``: learner name -> (hyperparameters, options) of a small run (as
tests/test_protocol.py); ``"unlabeled"`` stands for ``H[:10]``. ``GREEDY``: the learners that
search a ``pacbound.voters.Voters`` family matrix-free.
"""

EXAMPLES: dict[str, tuple[tuple, dict]] = {
    "mincq": ((0.05,), {}),
    "tmincq": ((0.05,), {"H_unlabeled": "unlabeled"}),
    "cqboost": ((0.05,), {"max_columns": 6}),
    "lpboost": ((1.0,), {"max_columns": 6}),
    "cgboost": ((1.0,), {"max_columns": 6}),
    "mdboost": ((10.0,), {"max_columns": 6}),
    "cbboost": ((6,), {}),
    "gbcbboost": ((6,), {}),
    "adaboost": ((6,), {}),
    "vebboost": ((0.5, 6), {}),
    "kl_coordinate_descent": ((1.0, 0.5), {"max_iter": 50}),
    "kl_ql": ((1.0, 0.5), {"max_iter": 50}),
    "kl_el": ((1.0, 0.5), {"max_iter": 50}),
    "minimize_bound": (("seeger",), {"max_iter": 30}),
    "minimize_dirichlet_bound": (("seeger",), {"max_iter": 30}),
}

GREEDY = ("cbboost", "gbcbboost", "adaboost", "vebboost", "cqboost", "lpboost", "cgboost",
          "mdboost")  # fmt: skip
