"""pacbound._src.datasets.registry: every shared file loads with its expected shape; data dir."""

import numpy as np
import pytest

from pacbound._src.datasets import registry as R

# (rows, features after one-hot encoding and missing-value handling) of every registry file.
EXPECTED = {
    "australian": (690, 14), "breast": (683, 9), "bupa": (345, 6), "car": (1728, 21),
    "cmc": (1473, 9), "credit": (653, 42), "cylinder": (365, 19), "ecoli": (336, 7),
    "glass": (214, 9), "haberman": (306, 3), "heart": (270, 13), "horse": (300, 22),
    "ionosphere": (351, 33), "letter": (1555, 16), "monks": (432, 6), "mushroom": (5644, 92),
    "optdigits": (1130, 64), "pima": (768, 8), "ringnorm": (7400, 20), "sonar": (208, 60),
    "titanic": (2201, 3), "usvotes": (435, 16), "vote": (232, 16), "wdbc": (569, 30),
    "wine": (178, 13), "yeast": (1484, 8), "zoo": (101, 16), "banana": (5300, 2),
    "breast-ljubljana": (277, 36), "german": (1000, 59), "magic": (19020, 10),
    "spambase": (4597, 57), "twonorm": (7400, 20), "breast-cancer-wisconsin": (683, 9),
    "satimage": (6435, 36), "segment": (2310, 19), "texture": (5500, 40), "vowel": (990, 13),
    "vehicle": (846, 18),
    "ecoli-uci": (336, 7), "german-uci": (1000, 59), "glass-uci": (214, 9),
    "ionosphere-uci": (351, 34), "pima-uci": (768, 8), "sonar-uci": (208, 60),
    "wine-uci": (178, 13), "breast-cancer": (277, 48), "cleveland": (297, 22),
    "credit-g": (1000, 61), "hungarian": (294, 22), "hypothyroid": (3772, 32), "labor": (57, 26),
}  # fmt: skip


def test_every_shared_file_loads(shared_data):
    files = {
        str(p.relative_to(shared_data))
        for p in shared_data.rglob("*")
        if p.suffix in (".dat", ".csv", ".arff")
    }
    registered = {e.path for e in R.REGISTRY.values() if e.path is not None}
    assert files == registered, f"unregistered: {files - registered}"
    for name, entry in R.REGISTRY.items():
        if entry.path is None:
            continue
        ds = R.load_registered(name + (":ab" if name == "letter" else ""), shared_data)
        assert ds.X.shape == EXPECTED[name], name
        assert ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
        assert set(np.unique(ds.y)) == {-1.0, 1.0}, name
        assert len(ds.feature_names) == ds.X.shape[1]


def test_data_dir_errors(monkeypatch, tmp_path):
    monkeypatch.delenv("PACBOUND_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="PACBOUND_DATA"):
        R.resolve_data_dir()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        R.resolve_data_dir(tmp_path / "absent")
