"""`Benchmark` and `perf_report`: run a benchmark function over a grid of inputs and tabulate it.

The shape is Triton's: one row per value of the x axis, one column per line (a provider, a
variant). Output is a plain-text table and a CSV file, so neither pandas nor matplotlib is needed;
`return_df=True` and `show_plots=True` use them when they are installed.
"""

from __future__ import annotations

import csv
import importlib
import os
from dataclasses import dataclass, field


@dataclass
class Benchmark:
    """One benchmark grid.

    `fn(**{x_name: x for x_name in x_names}, **{line_arg: line_val}, **args)` is measured for every
    x in `x_vals` (a scalar, given to every x name, or a tuple with one value per x name) and every
    line value; `line_names` label the lines in the table.
    """

    x_names: list[str]
    x_vals: list
    line_arg: str
    line_vals: list
    line_names: list[str]
    plot_name: str
    args: dict = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    styles: list | None = None


@dataclass
class _Table:
    """Measured values: per row, the x values, then mean, min and max per line."""

    columns: list[str]
    rows: list[list] = field(default_factory=list)


def _measure(fn, bench: Benchmark, kwargs: dict) -> _Table:
    lines = bench.line_names
    table = _Table(
        bench.x_names + lines + [f"{n}-min" for n in lines] + [f"{n}-max" for n in lines]
    )
    for x in bench.x_vals:
        xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
        if len(xs) != len(bench.x_names):
            raise ValueError(f"x value {x!r} does not give one value per name in {bench.x_names}")
        x_args = dict(zip(bench.x_names, xs))
        means, mins, maxs = [], [], []
        for y in bench.line_vals:
            result = fn(**x_args, **{bench.line_arg: y}, **bench.args, **kwargs)
            mean, low, high = result if isinstance(result, (list, tuple)) else (result,) * 3
            means.append(mean)
            mins.append(low)
            maxs.append(high)
        table.rows.append(xs + means + mins + maxs)
    return table


def _format(table: _Table, n_columns: int) -> str:
    """Right-aligned columns; numbers with 6 significant digits."""
    cells = [table.columns[:n_columns]]
    for row in table.rows:
        cells.append([f"{v:.6g}" if isinstance(v, float) else str(v) for v in row[:n_columns]])
    widths = [max(len(r[i]) for r in cells) for i in range(n_columns)]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells)


def _write_csv(table: _Table, n_columns: int, path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(table.columns[:n_columns])
        writer.writerows(row[:n_columns] for row in table.rows)


def _require(module: str, flag: str):
    """Import an optional dependency up front, before any measuring time is spent."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise ImportError(f"{flag} needs {package} (pip install {package})") from None


def _plot(plt, table: _Table, bench: Benchmark, save_path: str) -> None:
    n_x = len(bench.x_names)
    xs = [row[0] for row in table.rows]
    fig, ax = plt.subplots()
    for i, name in enumerate(bench.line_names):
        style = bench.styles[i] if bench.styles else (None, "-")
        ax.plot(xs, [row[n_x + i] for row in table.rows], label=name, color=style[0], ls=style[1])
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")
    ax.set_title(bench.plot_name)
    ax.legend()
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    plt.show()


class Mark:
    """A benchmark function bound to its grids; `run` measures and reports them."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        """Measure every grid; extra keyword arguments go to the benchmark function.

        Prints the table of means when `print_data`, writes `<plot_name>.csv` (the means) under
        `save_path` when given, and returns the tables as pandas DataFrames (means, mins and
        maxes) when `return_df`: one frame, or a list for a list of benchmarks.
        """
        single = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if single else list(self.benchmarks)
        pd = _require("pandas", "return_df=True") if return_df else None
        plt = _require("matplotlib.pyplot", "show_plots=True") if show_plots else None
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        frames = []
        for bench in benchmarks:
            table = _measure(self.fn, bench, kwargs)
            n_columns = len(bench.x_names) + len(bench.line_names)
            if print_data:
                print(f"{bench.plot_name}:\n{_format(table, n_columns)}")
            if save_path:
                _write_csv(table, n_columns, os.path.join(save_path, f"{bench.plot_name}.csv"))
            if show_plots:
                _plot(plt, table, bench, save_path)
            if return_df:
                frames.append(pd.DataFrame(table.rows, columns=table.columns))
        if return_df:
            return frames[0] if single else frames
        return None


def perf_report(benchmarks):
    """Decorator: `@perf_report(Benchmark(...))` turns a measuring function into a `Mark`."""
    return lambda fn: Mark(fn, benchmarks)
