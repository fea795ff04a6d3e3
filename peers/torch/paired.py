"""BENCHMARKS.md group 7: dispatch's training step against PyTorch eager's, from the same initial weights on the same
batch, on the same number of threads, in paired rounds of processes.

1. `export_workload` writes each workload's file (dispatch's initial weights, batch and first losses);
   `step.py check` stops the run unless PyTorch's first losses equal dispatch's (relative 1e-4).
2. The machine's f32 matmul peak: a large sgemm in PyTorch on the same threads, beside the nominal AVX2 peak.
3. For each workload and dispatch device, `rounds` rounds: a `step_timing` process (dispatch) and a `step.py time`
   process (PyTorch), in AB order on even rounds and BA on odd ones, each retraining and checking the first losses
   again, then timing each of `steps` steps after `warmup`. Each round gives a ratio of the two processes' median
   steps (dispatch / PyTorch), in which load that comes and goes on a shared machine mostly cancels; the summary
   gives the medians over rounds, min-max, and the same ratio of mean steps, which bursts of load move more.
4. For the GPTs, GFLOP/s from the step's FLOPs counted analytically (`gpt_step_flops`).

    python peers/torch/paired.py --threads 2 --rounds 9 | tee peers/results/group7-$(date +%F).txt
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors import safe_open

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent.parent

# (warm-up steps, timed steps) of each process, by workload: a few hundred ms to a few seconds of timing each.
STEPS = {"gpt": (3, 20), "lenet": (3, 30), "gpt-large": (1, 5)}

# Nominal f32 peak per core and cycle with AVX2: two 256-bit FMA pipes, 8 lanes each, 2 FLOPs per FMA. Also the peak
# of a Zen 4 core with AVX-512, which splits each 512-bit FMA over the same two 256-bit pipes.
AVX2_FLOPS_PER_CYCLE = 2 * 8 * 2


def gpt_step_flops(meta):
    """FLOPs of one training step of a GPT of the file's sizes, counted from its matmuls: forward 2 FLOPs per
    multiply-add of every linear layer (qkv 3d², proj d², MLP 8d² per block, the head dV) for every token, plus the
    attention's two batched products (QKᵀ and weights·V, 2·T²·d each per sequence and block, the masked half computed
    as dispatch and PyTorch compute it); backward twice the forward. Embedding look-ups, norms, element-wise ops
    and the optimizer are left out (a few percent)."""
    d, vocabulary, layers = int(meta["width"]), int(meta["vocabulary"]), int(meta["layers"])
    sequences, context = int(meta["sequences"]), int(meta["context"])
    tokens = sequences * context
    linear_params = layers * 12 * d * d + d * vocabulary
    attention = layers * sequences * 2 * (2 * context * context * d)
    forward = 2 * linear_params * tokens + attention
    return 3 * forward


def measured_sgemm_gflops(threads, size=2048, repeats=8):
    """The best GFLOP/s of a size x size f32 matmul in PyTorch on `threads` threads."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def nominal_peak_gflops(cores):
    """Cores x AVX2 FLOPs per cycle x the clock /proc/cpuinfo reports (None where it reports none)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            mhz = next(float(line.split(":")[1]) for line in cpuinfo if line.startswith("cpu MHz"))
    except (OSError, StopIteration, ValueError):
        return None, None
    return cores * AVX2_FLOPS_PER_CYCLE * mhz / 1e3, mhz


def run(command, env):
    """Runs `command`; its last line of output, a JSON object. Exits with its output if it fails."""
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values, digits):
    """`median (min-max)`."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--workloads", default="gpt,lenet,gpt-large")
    parser.add_argument("--devices", default="autodiff:ndarray,autodiff:candle")
    parser.add_argument("--export-device", default="autodiff:ndarray", help="the device whose losses the file keeps")
    default_examples = Path(os.environ.get("CARGO_TARGET_DIR", REPOSITORY / "peers" / "target")) / "release/examples"
    parser.add_argument("--examples", type=Path, default=default_examples, help="where the release examples are")
    parser.add_argument("--files", type=Path, default=Path("/tmp/dispatch-group7"), help="for the workload files")
    parser.add_argument("--note", default="", help="a line printed first, e.g. what else ran on the machine")
    args = parser.parse_args()
    workloads, devices = args.workloads.split(","), args.devices.split(",")
    threads = str(args.threads)

    # The same thread count for every library on either side, and the same allocator settings: `step_timing` calls
    # `dispatch_core::memory::keep_freed_memory`, which sets glibc's thresholds as these variables do for PyTorch.
    env = dict(
        os.environ,
        RAYON_NUM_THREADS=threads,
        OMP_NUM_THREADS=threads,
        MALLOC_MMAP_THRESHOLD_="33554432",
        MALLOC_TRIM_THRESHOLD_="1073741824",
    )
    step_py = [sys.executable, str(HERE / "step.py")]
    if args.note:
        print(args.note)
    print(f"PyTorch {torch.__version__}, {args.threads} threads on each side; load average {os.getloadavg()}")
    print(torch.__config__.parallel_info().strip())

    args.files.mkdir(parents=True, exist_ok=True)
    files, meta = {}, {}
    for workload in workloads:
        files[workload] = args.files / f"{workload}.safetensors"
        command = [args.examples / "export_workload", workload, args.export_device, files[workload]]
        exported = subprocess.run(command, env=env, capture_output=True, text=True)
        if exported.returncode != 0:
            sys.exit(f"export_workload {workload} failed:\n{exported.stdout}{exported.stderr}")
        print(exported.stdout.strip())
        checked = subprocess.run(
            step_py + ["check", files[workload], "--threads", threads], env=env, capture_output=True, text=True
        )
        print(checked.stderr.rstrip())
        if checked.returncode != 0:
            sys.exit(f"step.py check {workload} failed:\n{checked.stdout}")
        print(checked.stdout.strip())
        with safe_open(files[workload], framework="pt") as file:
            meta[workload] = file.metadata()

    measured = measured_sgemm_gflops(args.threads)
    nominal, mhz = nominal_peak_gflops(args.threads)
    print(f"f32 peak: sgemm 2048 in PyTorch on {args.threads} threads {measured:.1f} GFLOP/s", end="")
    if nominal is not None:
        print(f"; nominal AVX2 {args.threads} x {AVX2_FLOPS_PER_CYCLE} FLOPs x {mhz:.0f} MHz = {nominal:.1f} GFLOP/s")
    else:
        print()

    summary = []
    for workload in workloads:
        warmup, steps = STEPS.get(workload, (3, 20))
        flops = gpt_step_flops(meta[workload]) if "vocabulary" in meta[workload] else None
        for device in devices:
            print(f"\n{workload} on {device} against PyTorch: {args.rounds} rounds, {warmup} warm-up + {steps} steps")
            dispatch = [args.examples / "step_timing", files[workload], device, str(warmup), str(steps)]
            pytorch = step_py + ["time", files[workload], "--threads", threads, "--warmup", str(warmup)]
            pytorch += ["--steps", str(steps)]
            sides = {"dispatch": dispatch, "pytorch": pytorch}
            times = {"dispatch": [], "pytorch": []}
            ratios, mean_ratios = [], []
            for round_ in range(args.rounds):
                order = ["dispatch", "pytorch"] if round_ % 2 == 0 else ["pytorch", "dispatch"]
                measured_ms, mean_ms = {}, {}
                for side in order:
                    line = run(sides[side], env)
                    print(f"  {json.dumps(line)}")
                    measured_ms[side], mean_ms[side] = line["ms_per_step"], line["mean_ms"]
                    times[side].append(line["ms_per_step"])
                ratios.append(measured_ms["dispatch"] / measured_ms["pytorch"])
                mean_ratios.append(mean_ms["dispatch"] / mean_ms["pytorch"])
                print(f"  round {round_ + 1} ({order[0]} first): dispatch / PyTorch = {ratios[-1]:.3f}")
            summary.append((workload, device, ratios, mean_ratios, times, flops))
            print(f"  ratio dispatch / PyTorch: {spread(ratios, 3)}")

    print(f"\nsummary ({args.rounds} rounds each; median (min-max); load average {os.getloadavg()})")
    for workload, device, ratios, mean_ratios, times, flops in summary:
        print(f"{workload} on {device}: dispatch / PyTorch {spread(ratios, 3)} (of mean steps {spread(mean_ratios, 3)})")
        for side in ("dispatch", "pytorch"):
            line = f"  {side:<8} {spread(times[side], 2)} ms/step"
            if flops is not None:
                gflops = [flops / (ms * 1e-3) / 1e9 for ms in times[side]]
                percent = 100 * statistics.median(gflops) / measured
                line += f", {spread(gflops, 1)} GFLOP/s ({percent:.0f}% of the measured sgemm peak"
                if nominal is not None:
                    line += f", {100 * statistics.median(gflops) / nominal:.0f}% of the nominal peak"
                line += ")"
            print(line)
        if flops is not None:
            print(f"  step FLOPs (analytic): {flops / 1e9:.3f} GFLOP")


if __name__ == "__main__":
    main()
