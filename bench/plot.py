"""The PNG timeline: one panel per run, one lane per target, every request a dot coloured by outcome.

Needs matplotlib (bench/requirements.txt, the plotting venv of bench/env.sh); Agg backend, no display.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from .stats import outcome

STYLE = {  # outcome: (colour, marker, size, z-order); failures drawn big and on top
    "ok": ("#2ca02c", ".", 4, 1),
    "unserved_404": ("#a6cee3", ".", 4, 1),  # right answer: no target had served it yet
    "not_sent": ("#9e9e9e", "|", 10, 1),
    "http_error": ("#ff7f0e", "s", 16, 3),
    "transport_error": ("#333333", "x", 16, 3),
    "false_404": ("#d62728", "X", 28, 4),
}
KIND_OFFSET = {"new-only": 0.18, "core": -0.18}


def timeline(runs: list, path) -> None:
    """``runs``: [{"label", "records", "windows", "transitions"}]."""
    height = 1.3 + 0.45 * max(len({r["target"] for r in run["records"] if r["kind"] != "version"}) for run in runs)
    fig, axes = plt.subplots(len(runs), 1, figsize=(13, height * len(runs)), squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        _panel(ax, run)
    handles = [
        plt.Line2D([], [], color=c, marker=m, linestyle="", markersize=7, label=k.replace("_", " "))
        for k, (c, m, _s, _z) in STYLE.items()
    ]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="#fff3b0", label="mixed versions (observed)"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _panel(ax, run: dict) -> None:
    records = [r for r in run["records"] if r["kind"] != "version"]
    t0 = min(r["t"] for r in run["records"])
    lanes = sorted({r["target"] for r in records}, key=lambda n: (not n.startswith("lb"), n))
    lane = {name: i for i, name in enumerate(lanes)}
    for a, b in run["windows"]:
        ax.axvspan(a - t0, b - t0, color="#fff3b0", zorder=0)
    for what, (colour, marker, size, z) in STYLE.items():
        pts = [r for r in records if outcome(r) == what]
        ax.scatter(
            [r["t"] - t0 for r in pts],
            [lane[r["target"]] + KIND_OFFSET.get(r["kind"], 0) for r in pts],
            c=colour,
            marker=marker,
            s=size,
            zorder=z,
            linewidths=0.6,
            rasterized=True,
        )
    for i, mark in enumerate(run["transitions"]):
        x = mark["t"] - t0
        ax.axvline(x, color="#1f77b4", linestyle="--", linewidth=0.8, zorder=2)
        ax.text(
            x,
            len(lanes) - 0.5 + 0.22 * (i % 3),
            mark["event"],
            fontsize=6.5,
            color="#1f77b4",
            rotation=0,
            ha="left",
            va="bottom",
        )
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"{n}  new-only ▲ / core ▼" if i == 0 else n for i, n in enumerate(lanes)], fontsize=8)
    ax.set_ylim(-0.6, len(lanes) + 0.3)
    ax.set_xlabel("seconds since the load started")
    ax.set_title(run["label"], loc="left", fontsize=10)
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
