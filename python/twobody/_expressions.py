"""Pair functions written at run time: :func:`custom`, the command line's ``twobody custom``."""

import os
from collections.abc import Mapping
from typing import Optional, Sequence

import numpy as np

from . import _twobody
from ._api import _DEFAULT_MAX_PAIRS, ArrayLike, Bins, _edges, _raw, _run, _vectors
from ._errors import ConfigError, InputError
from ._results import Result

_EMITS = ("sum", "count", "histogram", "pairs", "per-point", "matrix")


def _named_columns(data, what):
    """{name: 1-D array} of a mapping (dict, pandas DataFrame) or a NumPy structured array; None
    for anything else."""
    if isinstance(data, np.ndarray) and data.dtype.names:
        return {name: data[name] for name in data.dtype.names}
    if isinstance(data, Mapping) or (hasattr(data, "keys") and hasattr(data, "__getitem__") and not isinstance(data, np.ndarray)):
        return {str(name): data[name] for name in data.keys()}
    return None


def _float_column(x, what):
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise InputError(f"{what}: expected real numbers, not dtype {a.dtype}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1:
        raise InputError(f"{what}: expected a 1-D column, not shape {a.shape}")
    return a


def _table(data, coordinates, columns, what):
    """(coordinates as an (n, d) array, {name: float64 column}) of one set."""
    named = _named_columns(data, what)
    extra = {} if columns is None else dict(columns)
    if named is None:
        if coordinates is not None:
            raise ConfigError(f"coordinates= names columns of a table (a dict, a structured array or a DataFrame), "
                              f"not of the {what} array")
        coords = _vectors(data, what)
        named = {}
    else:
        if not named:
            raise InputError(f"{what}: a table without columns")
        names = list(named) if coordinates is None else [str(c) for c in coordinates]
        if not names:
            raise ConfigError(f"{what}: coordinates= names no column")
        missing = [c for c in names if c not in named]
        if missing:
            raise ConfigError(f"{what}: no column {missing[0]!r} (columns: {', '.join(named)})")
        coords = np.column_stack([_float_column(named[c], f"{what} column {c!r}") for c in names])
    clash = set(named) & set(extra)
    if clash:
        raise ConfigError(f"{what}: column {sorted(clash)[0]!r} is given twice")
    named = {**named, **extra}
    return coords, {str(k): _float_column(v, f"{what} column {k!r}") for k, v in named.items()}


def _params(params):
    scalars, vectors = {}, {}
    for name, value in (params or {}).items():
        v = np.asarray(value)
        if v.ndim == 0 and v.dtype.kind in "fiub" and v.dtype.kind != "b":
            scalars[str(name)] = float(v)
        elif v.ndim == 1 and v.dtype.kind in "fiu":
            vectors[str(name)] = np.ascontiguousarray(v, dtype=np.float64)
        else:
            raise ConfigError(f"parameter {name!r}: a number or a 1-D array of d numbers, not {value!r}")
    return scalars, vectors


def custom(data: ArrayLike, pair: str, *, emit: str = "histogram", bins: Optional[Bins] = None,
           where: Optional[str] = None, params: Optional[Mapping] = None, coordinates: Optional[Sequence[str]] = None,
           columns: Optional[Mapping] = None, data2: Optional[ArrayLike] = None,
           coordinates2: Optional[Sequence[str]] = None, columns2: Optional[Mapping] = None,
           per_point: Optional[str] = None, cpu_codegen: str = "auto", backend: str = "auto", threads: int = 0,
           max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, explain: bool = False, out=None,
           dtype: str = "float64", path: str = "auto"):
    """A pair function written as an expression (docs/expressions.md), over every pair of ``data``
    (each unordered pair once) or of ``data`` x ``data2``, reduced as ``twobody custom --emit``
    does: 'sum' (columns ``sum``, ``pairs``), 'count' (``count``), 'histogram' (``lo``, ``hi``,
    ``count``), 'pairs' (``i``, ``j``, ``value``) or 'per-point' (``[set,] index, count`` and,
    but for ``per_point='count'``, ``sum``, ``min`` or ``max`` of the partners' values).

    ``data``: an (n, d) array of coordinates, ``a[0]`` ... ``a[d-1]`` (or the vector ``a``); or a
    table (a dict of 1-D columns, a NumPy structured array, a pandas DataFrame) whose columns are
    all named (``a.NAME``) and whose ``coordinates`` (default: every column) are the vector.
    ``columns``: more named columns ({name: 1-D array of n values}) beside an array. ``params``:
    {name: number or 1-D array of d numbers}. ``where``: a predicate; pairs where it is false
    give nothing. ``bins``: a value's bin edges (histogram) or range (its first and last edge:
    count, pairs and per-point counts of a value; a predicate takes none). The values are the
    expression's float64 evaluation, literally; sums are exact. ``explain=True`` returns the plan
    (a string) instead of running. ``backend='cuda'``: a kernel generated for the expression on the
    GPU (NVRTC and nvJitLink), the same results. ``path``: 'auto', or 'grid' / 'brute' to force or
    refuse the cell grid an expression with a cutoff on the points' distance may take (a ``where``
    such as ``norm(a - b) < 5``).

    ``emit='matrix'``: every pair's value, both orientations (i, j) and (j, i), as the (n1, n2)
    float64 ndarray (``dtype='float32'``: rounded once), or with ``out='m.npy'`` (or '.h5')
    streamed to the file a block of rows at a time and ``np.load(out, mmap_mode='r')`` returned
    (the path for other files): docs/matrices.md."""
    if emit not in _EMITS:
        raise ConfigError(f"emit must be one of {', '.join(_EMITS)}, not {emit!r}")
    if not isinstance(pair, str) or (where is not None and not isinstance(where, str)):
        raise ConfigError("pair and where are expressions, given as strings")
    coords, named = _table(data, coordinates, columns, "data")
    call = {"data": coords, "named": named, "data2": None, "named2": {}, "pair": pair, "where": where or "",
            "emit": emit, "per_point": per_point or "", "edges": None if bins is None else _edges(bins)}
    if data2 is not None:
        call["data2"], call["named2"] = _table(data2, coordinates2, columns2, "data2")
    elif coordinates2 is not None or columns2 is not None:
        raise ConfigError("coordinates2= and columns2= describe data2, which is not given")
    call["scalars"], call["vectors"] = _params(params)
    if path not in ("auto", "grid", "brute"):
        raise ConfigError(f"path must be 'auto', 'grid' or 'brute', not {path!r}")
    run = _run("custom", backend, threads, path, max_pairs, None if explain else progress)
    if emit == "matrix":
        return _matrix(call, run, cpu_codegen, explain, bins, per_point, out, dtype)
    if out is not None or dtype != "float64":
        raise ConfigError("out= and dtype= go with emit='matrix'")
    if explain:
        return _raw(_twobody.explain_custom, run, call, cpu_codegen)
    raw = _raw(_twobody.custom, run, call, cpu_codegen)
    return Result("custom", raw)


def _matrix(call, run, cpu_codegen, explain, bins, per_point, out, dtype):
    if bins is not None or per_point is not None:
        raise ConfigError("emit='matrix' holds every value: it takes no bins or per_point")
    path = "" if out is None else os.fspath(out)
    if explain:
        return _raw(_twobody.explain_custom_matrix, run, call, cpu_codegen, path, str(dtype))
    raw = _raw(_twobody.custom_matrix, run, call, cpu_codegen, path, str(dtype))
    if path:
        return np.load(path, mmap_mode="r") if path.endswith(".npy") else path
    return raw["matrix"].astype(np.float32) if dtype == "float32" else raw["matrix"]
