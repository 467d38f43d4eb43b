"""Result objects: the CLI's output table as NumPy columns, its metadata and jackknife."""

import json

import numpy as np


class RunMetadata:
    """The run's metadata, ``meta``, as the CLI's JSON output has it; ``backend``, ``device``,
    ``threads``, ``seconds``, ``pairs`` (pairs evaluated) and ``plan`` are its main keys."""

    meta: dict

    backend = property(lambda self: self.meta.get("backend"))
    device = property(lambda self: self.meta.get("device"))
    threads = property(lambda self: self.meta.get("threads"))
    seconds = property(lambda self: self.meta.get("wall_seconds"))
    pairs = property(lambda self: self.meta.get("pairs_evaluated"))
    plan = property(lambda self: self.meta.get("plan"))


class Jackknife:
    """Leave-one-region-out samples of the vector a result's table shows (its ``xi`` column, or
    ``wp``, or the multipoles stacked), with their mean, standard errors and covariance."""

    def __init__(self, d):
        self.regions = int(d["regions"])
        self.layout = d["layout"]
        self.estimator = d["estimator"]
        self.fitted_on_data = bool(d["fitted_on_data"])
        self.n_data = d["n_data"]
        self.n_randoms = d["n_randoms"]
        self.labels = d.get("labels")
        self.samples = d["samples"]  # regions x n
        self.mean = d["mean"]
        self.sigma = d["sigma"]
        self.covariance = d["covariance"]  # n x n

    def __repr__(self):
        return f"<Jackknife: {self.regions} regions, {self.estimator}; {self.layout}>"


class Result(RunMetadata):
    """One statistic's result. Every column of the CLI's table for the same run is an attribute
    (``r.lo``, ``r.hi``, ``r.npairs``, ``r.g_r``, ``r.xi_landy_szalay``, ...), a NumPy array;
    ``r.columns`` holds them in the CLI's order. ``r.meta`` is the run's metadata as the CLI's JSON
    output has it; ``backend``, ``device``, ``seconds``, ``pairs`` and ``plan`` are its main keys.
    ``r.jackknife`` (with ``r.covariance``) when jackknife regions were used."""

    def __init__(self, statistic, raw, plot_spec=None):
        self.statistic = statistic
        self.columns = {name: values for name, values in raw.get("columns", [])}
        self.meta = json.loads(raw["meta"])
        self.jackknife = Jackknife(raw["jackknife"]) if "jackknife" in raw else None
        self.matrix = raw.get("matrix")
        self._plot_spec = plot_spec

    def __getattr__(self, name):
        columns = self.__dict__.get("columns", {})
        if name in columns:
            return columns[name]
        raise AttributeError(f"{type(self).__name__} of {self.__dict__.get('statistic')} has no column {name!r} "
                             f"(columns: {', '.join(columns)})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.columns))

    def __getitem__(self, name):
        return self.columns[name]

    def __len__(self):
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __repr__(self):
        rows = len(self)
        return (f"<twobody.Result {self.statistic}: {rows} rows, columns {', '.join(self.columns)}; "
                f"{self.backend}, {self.seconds:.3g} s>")

    @property
    def covariance(self):
        """The jackknife covariance (n x n), or None without jackknife regions."""
        return None if self.jackknife is None else self.jackknife.covariance

    def to_pandas(self):
        """The table as a pandas DataFrame (needs pandas); the metadata in ``df.attrs``."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        df = pd.DataFrame(dict(self.columns))
        df.attrs["meta"] = self.meta
        return df

    def plot(self, ax=None, **kwargs):
        """Plots the result's main column against the bins' centres (matplotlib, imported here),
        with jackknife error bars when there are any; 2-D bins as a colour map. Returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("plot() needs matplotlib: pip install matplotlib") from e
        spec = self._plot_spec
        if spec is None:
            raise TypeError(f"{self.statistic} has no plot")
        if ax is None:
            _, ax = plt.subplots()
        if spec.get("kind") == "2d":
            return self._plot_2d(ax, spec, **kwargs)
        if spec.get("kind") == "hist":
            ax.hist(self.columns[spec["y"]], bins=kwargs.pop("bins", 50), **kwargs)
            ax.set_xlabel(spec["ylabel"])
            ax.set_ylabel("points")
            ax.set_title(self.statistic)
            return ax
        lo, hi = self.columns[spec["prefix"] + "lo"], self.columns[spec["prefix"] + "hi"]
        log_x = bool(np.all(lo > 0) and len(lo) > 1 and np.allclose(hi / lo, hi[0] / lo[0]))
        x = np.sqrt(lo * hi) if log_x else 0.5 * (lo + hi)
        y = np.asarray(self.columns[spec["y"]], dtype=float)
        err = None
        if spec.get("yerr") in self.columns:
            err = self.columns[spec["yerr"]]
        elif spec.get("varxi") in self.columns:
            err = np.sqrt(self.columns[spec["varxi"]])
        kwargs.setdefault("marker", "o")
        kwargs.setdefault("label", spec["ylabel"])
        if err is not None:
            kwargs.setdefault("capsize", 2)
            ax.errorbar(x, y, yerr=err, **kwargs)
        else:
            ax.plot(x, y, **kwargs)
        if log_x:
            ax.set_xscale("log")
        if spec.get("log_y") and np.all(y > 0):
            ax.set_yscale("log")
        ax.set_xlabel(spec["xlabel"])
        ax.set_ylabel(spec["ylabel"])
        ax.set_title(self.statistic)
        return ax

    def _plot_2d(self, ax, spec, **kwargs):
        outer, inner = spec["outer"], spec["inner"]
        o_edges = np.append(self.columns[outer + "_lo"], self.columns[outer + "_hi"][-1])
        i_edges = np.append(self.columns[inner + "_lo"], self.columns[inner + "_hi"][-1])
        o_edges, i_edges = np.unique(o_edges), np.unique(i_edges)
        z = np.asarray(self.columns[spec["y"]], dtype=float).reshape(len(o_edges) - 1, len(i_edges) - 1)
        mesh = ax.pcolormesh(o_edges, i_edges, z.T, **kwargs)
        ax.figure.colorbar(mesh, ax=ax, label=spec["ylabel"])
        ax.set_xlabel(spec["xlabel"])
        ax.set_ylabel(spec["inner_label"])
        ax.set_title(self.statistic)
        return ax
