#!/usr/bin/env python3
"""Medians and ratios of the benchmark groups in BENCHMARKS.md, read from criterion's saved estimates.

Usage: report.py [criterion_dir] [baseline ...]
       report.py --paired LOG ...

criterion_dir defaults to $CARGO_TARGET_DIR/criterion (or target/criterion); criterion stores the group
`dispatch/candle/add_1` as the folder `dispatch_candle_add_1`. Each baseline is a name given to
`cargo bench -- --save-baseline NAME`; the default is criterion's latest run, `new`. With several baselines, every
ratio is computed within each run (the machine is shared and noisy) and reported as the median over the runs,
with the smallest and largest value.

With --paired, it reads the `paired ...` lines that `DISPATCH_PAIRED=1 cargo bench --bench dispatch_overhead`
prints, from any number of processes, and reports each ratio as the median over processes with the smallest and
largest value (each process has its own memory layout, which moves a tiny op's ratio by a few percent).
"""

import json
import os
import re
import statistics
import sys
from pathlib import Path


def median_ns(directory, baseline):
    """The median time of one benchmark in one run, in nanoseconds, or None if it did not run."""
    path = directory / baseline / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


def human(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def spread(values):
    """`median (min-max)` of a ratio over runs, or the value alone for one run."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def medians(group_dir, ids, baselines):
    """{id: [median per run]} for the benchmarks `ids` of one criterion group."""
    return {name: [median_ns(group_dir / name, b) for b in baselines] for name in ids}


def ratio_per_run(numerator, denominator):
    return [n / d if n is not None and d else None for n, d in zip(numerator, denominator)]


def middle(values):
    values = [v for v in values if v is not None]
    return human(statistics.median(values)) if values else "n/a"


def dispatch_table(root, baselines):
    designs = ["a_direct", "b_derived", "c_box_dyn", "d_hand_match"]
    print("### Group 1: dispatch overhead (medians; ratios within each run)\n")
    print("| backend/op | (a) direct | (b) derived | (c) Box<dyn> | (d) hand match | (b)/(a) | (b)/(d) | (b)/(c) |")
    print("|---|---|---|---|---|---|---|---|")
    for backend in ("candle", "ndarray"):
        for op in ("add_1", "matmul_256", "matmul_1024", "exp_1m"):
            group = root / f"dispatch_{backend}_{op}"
            if not group.exists():
                continue
            m = medians(group, designs, baselines)
            ratios = [
                spread(ratio_per_run(m["b_derived"], m[other])) for other in ("a_direct", "d_hand_match", "c_box_dyn")
            ]
            cells = [middle(m[d]) for d in designs]
            print(f"| {backend}/{op} | " + " | ".join(cells + ratios) + " |")
    print()


def autodiff_table(root, baselines):
    autodiff_ids = [
        "candle_var",
        "autodiff_candle",
        "autodiff_ndarray",
        "derived_autodiff_candle",
        "derived_autodiff_ndarray",
    ]
    step_ids = autodiff_ids + ["by_hand_candle", "by_hand_ndarray"]
    forward_ids = autodiff_ids + ["untracked_candle", "untracked_ndarray"]
    steps = medians(root / "autodiff_step", step_ids, baselines)
    forwards = medians(root / "autodiff_forward", forward_ids, baselines)
    print("### Group 2: MLP training step (medians; ratios within each run)\n")
    print("| implementation | step (fwd+bwd) | forward | step / candle_var step | backward / forward |")
    print("|---|---|---|---|---|")
    for name in autodiff_ids:
        backward_over_forward = [
            (s - f) / f if s is not None and f else None for s, f in zip(steps[name], forwards[name])
        ]
        against_candle = spread(ratio_per_run(steps[name], steps["candle_var"]))
        print(f"| {name} | {middle(steps[name])} | {middle(forwards[name])} | {against_candle} | "
              f"{spread(backward_over_forward)} |")
    for plain in ("candle", "ndarray"):
        step, forward = steps[f"by_hand_{plain}"], forwards[f"untracked_{plain}"]
        against_candle = spread(ratio_per_run(step, steps["candle_var"]))
        print(f"| {plain}, backprop by hand (reference) | {middle(step)} | {middle(forward)} (untracked) | "
              f"{against_candle} | {spread([(s - f) / f if s is not None and f else None for s, f in zip(step, forward)])} |")
    print()
    print("| derived #[autodiff] variant against Autodiff<B> directly | step | forward |")
    print("|---|---|---|")
    for base in ("candle", "ndarray"):
        derived, direct = f"derived_autodiff_{base}", f"autodiff_{base}"
        step = spread(ratio_per_run(steps[derived], steps[direct]))
        forward = spread(ratio_per_run(forwards[derived], forwards[direct]))
        print(f"| {base} | {step} | {forward} |")
    print()


def derive_table(root, baselines):
    print("### Group 3: derive expansion time (medians)\n")
    print("| series | variants | expansion | per variant | per variant / per variant at 4 |")
    print("|---|---|---|---|---|")
    for series in ("backends", "with_autodiff"):
        group = root / f"derive_{series}"
        if not group.exists():
            continue
        sizes = [4, 16, 64, 256]
        m = medians(group, [str(size) for size in sizes], baselines)
        base = [t / 4 if t is not None else None for t in m["4"]]
        for size in sizes:
            per_variant = [t / size if t is not None else None for t in m[str(size)]]
            growth = spread(ratio_per_run(per_variant, base))
            print(f"| {series} | {size} | {middle(m[str(size)])} | {middle(per_variant)} | {growth} |")
    print()


def collectives_table(root, baselines):
    group = root / "collectives_all_reduce_sum_1M_f32_2_ranks"
    if not group.exists():
        return
    ids = [
        "in_process_host_values",
        "in_process_ndarray_tensor",
        "mpi_raw_rsmpi",
        "mpi_engine_host_values",
        "mpi_engine_ndarray_tensor",
    ]
    m = medians(group, ids, baselines)
    print("### Group 4: all_reduce (sum) of 1M f32 over 2 ranks (medians; ratios within each run)\n")
    print("| variant | median | / in-process host values | / raw Open MPI |")
    print("|---|---|---|---|")
    for name in ids:
        over_in_process = spread(ratio_per_run(m[name], m["in_process_host_values"]))
        over_mpi = spread(ratio_per_run(m[name], m["mpi_raw_rsmpi"]))
        print(f"| {name} | {middle(m[name])} | {over_in_process} | {over_mpi} |")
    print()


PAIRED_LINE = re.compile(
    r"^paired dispatch/(\S+): \(b\)/\(a\) (\S+) .*\(b\)/\(d\) (\S+) .*\(b\)/\(c\) (\S+) "
)


def paired_table(logs):
    ratios = {}
    for log in logs:
        for line in Path(log).read_text().splitlines():
            match = PAIRED_LINE.match(line)
            if match:
                group = ratios.setdefault(match.group(1), ([], [], []))
                for values, value in zip(group, match.groups()[1:]):
                    values.append(float(value))
    print("### Group 1, paired: median over processes (min-max) of each process's median round ratio\n")
    print("| backend/op | processes | (b)/(a) | (b)/(d) | (b)/(c) |")
    print("|---|---|---|---|---|")
    for name, (over_direct, over_hand, over_boxed) in ratios.items():
        print(f"| {name} | {len(over_direct)} | {spread(over_direct)} | {spread(over_hand)} | {spread(over_boxed)} |")
    print()


def main():
    args = sys.argv[1:]
    if args[:1] == ["--paired"]:
        paired_table(args[1:])
        return
    default_root = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "criterion"
    root = Path(args[0]) if args else default_root
    baselines = args[1:] or ["new"]
    print(f"runs: {', '.join(baselines)}\n")
    dispatch_table(root, baselines)
    autodiff_table(root, baselines)
    derive_table(root, baselines)
    collectives_table(root, baselines)


if __name__ == "__main__":
    main()
