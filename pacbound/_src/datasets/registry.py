"""The papers' datasets: roy2016 Table 1, germain2009 Table 1 and every other shared file.

:data:`REGISTRY` names each file under a data directory (the ``data_dir`` argument or the
``PACBOUND_DATA`` environment variable) with its options for
:func:`~pacbound.datasets.load_file` and the binary split the papers use (or ours,
and why, where they do not say); :func:`load_registered` reads one. NumPy only, never traced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, NamedTuple, Unpack, overload

import numpy as np

from pacbound._src.datasets.tabular import (
    Dataset,
    MulticlassOption,
    dataset_from_cells,
    read_table,
)

__all__ = ["ALIASES", "REGISTRY", "RegistryEntry", "load_registered", "resolve_data_dir"]


class RegistryEntry(NamedTuple):
    """A named dataset under the data directory.

    Attributes:
      path: file relative to the data directory (``None``: not shipped, see ``openml``).
      papers: where the papers use it, with their name and ``(|S|, |T|)`` where printed.
      note: the binary split: the paper's where known, ours (and why) where not.
      options: :func:`load_file` keyword arguments (label column, split, missing policy).
      openml: the OpenML name to fetch it with when no file is shipped.
    """

    path: str | None
    papers: str
    note: str
    options: dict[str, Any]
    openml: str | None


# name | file under the data directory ("-": none) | load options | papers (|S|+|T|) | split
_TABLE = """
australian | keel/australian.dat | positive=1 | roy2016 | binary 0/1: 1 -> +1
balance | - | openml=balance-scale | roy2016 | split not given; no file here
breast | keel/wisconsin.dat | positive=4 | roy2016; germain2009 BreastCancer 343+340 \
  | Wisconsin original, 683 complete rows: malignant (4) -> +1
bupa | keel/bupa.dat | positive=2 | roy2016; germain2009 Liver 170+175 | selector 2 -> +1
car | keel/car-good.dat | positive=positive | roy2016 | split not given; ours: good vs rest
cmc | keel/contraceptive.dat | positive=1 | roy2016 | split not given; ours: 1 (no use) vs rest
credit | keel/crx.dat | positive=positive | roy2016; germain2009 Credit-A 353+300 \
  | 653 complete rows: approved (+) -> +1
cylinder | keel/bands.dat | positive=band | roy2016 | band -> +1
ecoli | keel/ecoli1.dat | positive=positive | roy2016 | split not given; ours: im vs rest
glass | keel/glass1.dat | positive=positive | roy2016; germain2009 Glass 107+107 \
  | split not given; ours: KEEL glass1, class 2 vs rest
haberman | keel/haberman.dat | positive=positive | germain2009 Haberman 144+150 | died -> +1
heart | keel/heart.dat | positive=2 | roy2016 | Statlog (270): presence (2) -> +1; \
  germain2009's Heart (297) is cleveland
hepatitis | - | openml=hepatitis | roy2016 | split not given; no file here
horse | uci/horse-colic.csv | label=23 drop=2,22,24,25,26 positive=1 | roy2016 \
  | surgical lesion (attr. 24) -> +1; hospital id, outcome, lesion type dropped (leaks)
ionosphere | keel/ionosphere.dat | positive=g | roy2016; germain2009 Ionosphere 176+175 \
  | good (g) -> +1
letter | keel/letter.dat | | roy2016 letter:ab; germain2009 Letter:AB, DO, OQ 500+rest \
  | pairs as named: letter:ab maps A -> +1, B -> -1
monks | keel/monk-2.dat | positive=1 | roy2016 | which MONK problem not given; ours: MONK-2
mnist | - | openml=mnist_784 | germain2009 MNIST:0vs8, 1vs7, 1vs8, 2vs3 | no file here
mushroom | keel/mushroom.dat | positive=p | germain2009 Mushroom 4062+4062 \
  | poisonous -> +1; this copy has 5644 rows (KEEL removed rows missing stalk-root)
optdigits | keel/optdigits.dat | split=4v9 | roy2016 | split not given; ours: 4 vs 9
pima | keel/pima.dat | positive=tested_positive | roy2016 | diabetic -> +1
ringnorm | keel/ring.dat | positive=1 | germain2009 Ringnorm 3700+3700 | 1 -> +1
sonar | keel/sonar.dat | positive=M | germain2009 Sonar 104+104 | mine (M) -> +1
titanic | keel/titanic.dat | positive=1 | roy2016 | survived (1) -> +1
usvotes | uci/vote.arff | positive=republican missing=impute | germain2009 Usvotes 235+200 \
  | all 435 rows, missing votes imputed (most frequent); republican -> +1
vote | keel/housevotes.dat | positive=republican | roy2016 | 232 complete rows; republican -> +1
waveform | - | openml=waveform-5000 | germain2009 Waveform 4000+4000 | split not given; no file
wdbc | keel/wdbc.dat | positive=M | germain2009 Wdbc 285+284 | malignant (M) -> +1
wine | keel/wine.dat | positive=1 | roy2016 | split not given; ours: cultivar 1 vs rest
yeast | keel/yeast1.dat | positive=positive | roy2016 | split not given; ours: NUC vs rest
zoo | keel/zoo-3.dat | positive=positive | roy2016 | split not given; ours: class 3 vs rest
banana | keel/banana.dat | positive=1 | - | 1 -> +1
breast-ljubljana | keel/breast.dat | positive=recurrence-events | - | recurrence -> +1
german | keel/german.dat | positive=2 | - | credit-g: bad (2) -> +1
magic | keel/magic.dat | positive=g | - | gamma (g) -> +1
spambase | keel/spambase.dat | positive=1 | - | spam (1) -> +1
twonorm | keel/twonorm.dat | positive=1 | - | 1 -> +1
satimage | keel/satimage.dat | positive=1 | - | multiclass (6); binary: class 1 vs rest
segment | keel/segment.dat | positive=1 | - | multiclass (7); binary: class 1 vs rest
texture | keel/texture.dat | positive=2 | - | multiclass (11); binary: class 2 vs rest
vowel | keel/vowel.dat | positive=0 | - | multiclass (11); binary: class 0 vs rest
vehicle | keel/vehicle.dat | positive=van | - | multiclass (4); binary: van vs rest
breast-cancer-wisconsin | uci/breast-cancer-wisconsin.csv | positive=4 | - \
  | no id column in this copy (10 fields); malignant (4) -> +1; 16 incomplete rows dropped
ecoli-uci | uci/ecoli.csv | positive=im | - | im vs rest (as KEEL ecoli1)
german-uci | uci/german.csv | positive=2 | - | bad (2) -> +1
glass-uci | uci/glass.csv | positive=2 | - | class 2 vs rest (as KEEL glass1)
ionosphere-uci | uci/ionosphere.csv | positive=g | - | good (g) -> +1
pima-uci | uci/pima-indians-diabetes.csv | positive=1 | - | diabetic (1) -> +1
sonar-uci | uci/sonar.csv | positive=M | - | mine (M) -> +1
wine-uci | uci/wine.csv | positive=1 | - | cultivar 1 vs rest
breast-cancer | uci/breast-cancer.arff | positive=recurrence-events | - | Ljubljana; recurrence
cleveland | uci/cleveland.arff | positive=1,2,3,4 | germain2009 Heart 150+147 \
  | 297 complete rows; disease (num > 0) -> +1
credit-g | uci/credit-g.arff | positive=bad | - | bad -> +1
hungarian | uci/hungarian.arff | positive=1,2,3,4 | - | disease (num > 0) -> +1; imputed
hypothyroid | uci/hypothyroid.arff \
  | positive=compensated_hypothyroid,primary_hypothyroid,secondary_hypothyroid \
  | - | hypothyroid (any kind) -> +1, negative -> -1; imputed
labor | uci/labor.arff | positive=good | - | good -> +1; imputed
"""


def _parse_options(text: str) -> tuple[dict[str, Any], str | None]:
    options: dict[str, Any] = {}
    openml: str | None = None
    for item in text.split():
        key, value = item.split("=")
        parts = value.split(",")
        if key == "openml":
            openml = value
        elif key in ("label", "drop"):
            ints = tuple(int(v) for v in parts)
            options["label_column" if key == "label" else "drop_columns"] = (
                ints[0] if key == "label" else ints
            )
        else:
            options[key] = tuple(parts) if len(parts) > 1 else value
    return options, openml


def _parse_registry(table: str) -> dict[str, RegistryEntry]:
    registry = {}
    for line in table.strip().splitlines():
        name, path, opts, papers, note = (" ".join(f.split()) for f in line.split("|"))
        options, openml = _parse_options(opts)
        registry[name] = RegistryEntry(None if path == "-" else path, papers, note, options, openml)
    return registry


REGISTRY: dict[str, RegistryEntry] = _parse_registry(_TABLE)
ALIASES = {
    "liver": "bupa", "breastcancer": "breast", "credit-a": "credit", "bands": "cylinder",
    "monk-2": "monks", "ring": "ringnorm", "heart-cleveland": "cleveland",
    "housevotes": "vote", "contraceptive": "cmc", "credit-approval": "credit",
}  # fmt: skip


def resolve_data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path`` if given, else ``$PACBOUND_DATA``.

    Raises:
      FileNotFoundError: neither is set, or the directory does not exist.

    Example:
      >>> import tempfile
      >>> from pathlib import Path
      >>> with tempfile.TemporaryDirectory() as folder:
      ...     print(resolve_data_dir(folder) == Path(folder))
      True
      >>> resolve_data_dir("/no/such/folder")
      Traceback (most recent call last):
        ...
      FileNotFoundError: data directory /no/such/folder does not exist
    """
    path = path if path is not None else os.environ.get("PACBOUND_DATA")
    if path is None:
        raise FileNotFoundError("no data directory: pass data_dir= or set PACBOUND_DATA")
    if not Path(path).is_dir():
        raise FileNotFoundError(f"data directory {path} does not exist")
    return Path(path)


@overload
def load_registered(
    name: str,
    data_dir: str | os.PathLike | None = ...,
    *,
    return_X_y: Literal[False] = ...,
    **options: Unpack[MulticlassOption],
) -> Dataset: ...


@overload
def load_registered(
    name: str,
    data_dir: str | os.PathLike | None = ...,
    *,
    return_X_y: Literal[True],
    **options: Unpack[MulticlassOption],
) -> tuple[np.ndarray, np.ndarray]: ...


def load_registered(
    name: str,
    data_dir: str | os.PathLike | None = None,
    *,
    return_X_y: bool = False,
    multiclass: bool = False,
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a :data:`REGISTRY` dataset (or an alias) from the data directory.

    ``name`` may carry a class split for the multiclass sets: ``"letter:ab"``, ``"letter:dvo"``,
    ``"optdigits:1v7"``; it overrides the entry's default split. ``multiclass=True`` gives the
    labels as class indices and, without a split in the name, drops the entry's default binary
    split (``"wine"``: its 3 cultivars; see :func:`pacbound._src.datasets.load`).

    Raises:
      KeyError: unknown name (listing the known ones).
      FileNotFoundError: no data directory, or the set is not shipped (naming its OpenML name).

    Example:
      >>> import tempfile
      >>> from pathlib import Path
      >>> with tempfile.TemporaryDirectory() as folder:  # a tiny stand-in for keel/haberman.dat
      ...     (Path(folder) / "keel").mkdir()
      ...     rows = "30,64,1,negative\\n31,65,4,positive\\n40,60,0,negative\\n"
      ...     _ = (Path(folder) / "keel" / "haberman.dat").write_text(rows)
      ...     ds = load_registered("haberman", folder)
      >>> ds.X.shape, ds.y.tolist()
      ((3, 3), [-1.0, 1.0, -1.0])
      >>> ds.notes[0]  # where the papers use it, and the split
      'germain2009 Haberman 144+150: died -> +1'
    """
    base, _, spec = name.strip().partition(":")
    key = ALIASES.get(base.lower(), base.lower())
    if key not in REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known: {sorted(REGISTRY)}")
    entry = REGISTRY[key]
    if entry.path is None:
        raise FileNotFoundError(
            f"{key!r} has no file in the data directory; fetch it with "
            f"load_openml({entry.openml!r}, ...) ({entry.note})"
        )
    options = dict(entry.options, **({"split": spec} if spec else {}))
    if spec or multiclass:
        options.pop("positive", None)
    if multiclass and not spec:
        options.pop("split", None)
    path = resolve_data_dir(data_dir) / entry.path
    cells, names, levels = read_table(path, ",", False)
    ds = dataset_from_cells(cells, names, levels, name, multiclass=multiclass, **options)
    ds = ds._replace(notes=(f"{entry.papers}: {entry.note}", *ds.notes))
    return (ds.X, ds.y) if return_X_y else ds
