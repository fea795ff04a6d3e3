"""PyTorch's side of BENCHMARKS.md group 7: the workload of a file that `export_workload` wrote (dispatch's initial
weights, the batch, dispatch's first losses), trained in plain PyTorch eager with the same math as dispatch-nn's
models. Before anything is timed, the first losses must equal dispatch's within a relative 1e-4 (a NaN fails).

    python peers/torch/step.py check gpt.safetensors --threads 2
    python peers/torch/step.py time gpt.safetensors --threads 2 --warmup 3 --steps 20

`check` prints both sides' losses; `time` checks, then times each of `steps` steps after `warmup` more and prints one
JSON line (the same fields as dispatch's `step_timing`: `ms_per_step` the median step, `mean_ms` the mean).
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn

# Relative tolerance between PyTorch's loss and dispatch's: f32 in another order of operations, over a few AdamW steps.
LOSS_TOLERANCE = 1e-4


class Attention(nn.Module):
    """dispatch_nn's CausalSelfAttention: one qkv projection split into heads, scores scaled by 1/sqrt(head width),
    the future masked to -inf before the softmax, heads mixed back by `proj`."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        batch, time_, width = x.shape
        head_width = width // self.heads
        queries, keys, values = (
            part.reshape(batch, time_, self.heads, head_width).permute(0, 2, 1, 3)
            for part in self.qkv(x).split(width, dim=2)
        )
        scores = queries @ keys.transpose(2, 3) * (1.0 / math.sqrt(head_width))
        future = torch.ones(time_, time_, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=3)
        mixed = (weights @ values).permute(0, 2, 1, 3).reshape(batch, time_, width)
        return self.proj(mixed)


class Mlp(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))  # the exact GELU (erf), as dispatch's


class Block(nn.Module):
    """Pre-norm: x + attention(norm1(x)), then x + mlp(norm2(x))."""

    def __init__(self, width, heads, eps):
        super().__init__()
        self.norm1 = nn.LayerNorm(width, eps=eps)
        self.attention = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width, eps=eps)
        self.mlp = Mlp(width)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Gpt(nn.Module):
    """dispatch_nn::models::Gpt: token and position embeddings, the blocks, a final norm, a head without bias."""

    def __init__(self, vocabulary, context, width, heads, layers, eps):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads, eps) for _ in range(layers))
        self.norm = nn.LayerNorm(width, eps=eps)
        self.head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.tokens(ids) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def loss(self, batch):
        inputs, targets = batch
        logits = self(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class LeNet(nn.Module):
    """dispatch_nn::models::LeNet: two 5x5 convolutions (the first padded) with ReLU and 2x2 max pooling, then
    three linear layers."""

    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, images):
        x = F.max_pool2d(F.relu(self.conv1(images)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc3(F.relu(self.fc2(x)))

    def loss(self, batch):
        images, labels = batch
        return F.cross_entropy(self(images), labels)


def load_weights(model, named):
    """Copies dispatch's initial parameters (`named`, by dispatch's dotted names) into `model`. A linear layer's
    weight is [inputs, outputs] in dispatch and [outputs, inputs] here; a norm's weight and bias are dispatch's gamma
    and beta. Every name must match one to one, and every shape."""
    loaded = set()
    with torch.no_grad():
        for module_name, module in model.named_modules():
            prefix = f"{module_name}." if module_name else ""
            for param_name, param in module.named_parameters(recurse=False):
                if isinstance(module, nn.LayerNorm):
                    name = prefix + {"weight": "gamma", "bias": "beta"}[param_name]
                else:
                    name = prefix + param_name
                if name not in named:
                    sys.exit(f"dispatch's file has no parameter `{name}` (PyTorch's `{prefix}{param_name}`)")
                value = named[name]
                if isinstance(module, nn.Linear) and param_name == "weight":
                    value = value.t()
                if value.shape != param.shape:
                    sys.exit(f"`{name}`: dispatch's {tuple(value.shape)}, PyTorch's {tuple(param.shape)}")
                param.copy_(value)
                loaded.add(name)
    unused = sorted(set(named) - loaded)
    if unused:
        sys.exit(f"dispatch's file has parameters this model lacks: {', '.join(unused)}")


class Workload:
    """A workload file's model (with dispatch's weights), batch, AdamW as dispatch's, and dispatch's losses."""

    def __init__(self, path):
        with safe_open(path, framework="pt") as file:
            meta = file.metadata()
            tensors = {name: file.get_tensor(name) for name in file.keys()}
        self.name = meta["workload"]
        self.exported_on = meta["device"]
        number = lambda key: float(meta[key])
        count = lambda key: int(meta[key])
        if "vocabulary" in meta:
            self.model = Gpt(
                count("vocabulary"),
                count("context"),
                count("width"),
                count("heads"),
                count("layers"),
                number("layer_norm_eps"),
            )
            self.batch = (tensors["workload.inputs"].long(), tensors["workload.targets"].long())
        else:
            self.model = LeNet(count("classes"))
            self.batch = (tensors["workload.images"], tensors["workload.labels"].long())
        params = {name[len("model.") :]: value for name, value in tensors.items() if name.startswith("model.")}
        load_weights(self.model, params)
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(),
            lr=number("learning_rate"),
            betas=(number("beta1"), number("beta2")),
            eps=number("eps"),
            weight_decay=number("weight_decay"),
        )
        self.dispatch_losses = tensors["workload.losses"].tolist()

    def step(self):
        """One training step; the loss before it, read to the host as dispatch's step reads it."""
        self.optimizer.zero_grad()
        loss = self.model.loss(self.batch)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def check(workload):
    """Trains as many steps as dispatch recorded; exits unless every loss is finite and within LOSS_TOLERANCE
    (relative) of dispatch's. Returns the largest relative gap."""
    worst = 0.0
    for step, expected in enumerate(workload.dispatch_losses, start=1):
        got = workload.step()
        gap = abs(got - expected) / max(abs(expected), 1e-12)
        print(f"  step {step}: PyTorch {got:.6f}, dispatch {expected:.6f}, relative gap {gap:.1e}", file=sys.stderr)
        # Written so that a NaN on either side fails: every comparison with NaN is false.
        if not (math.isfinite(got) and math.isfinite(expected) and gap <= LOSS_TOLERANCE):
            sys.exit(
                f"{workload.name}: PyTorch's loss {got} before step {step}, dispatch's {expected} on "
                f"{workload.exported_on} (relative tolerance {LOSS_TOLERANCE}): the models do not compute the "
                "same thing, so their times do not compare"
            )
        worst = max(worst, gap)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["check", "time"])
    parser.add_argument("file", help="a workload file of export_workload")
    parser.add_argument("--threads", type=int, required=True, help="torch.set_num_threads")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    workload = Workload(args.file)
    worst = check(workload)
    if args.mode == "check":
        print(f"{workload.name}: PyTorch agrees with dispatch ({workload.exported_on}) within {worst:.1e} relative")
        return
    for _ in range(args.warmup):
        workload.step()
    steps = max(args.steps, 1)
    step_ms = []
    for _ in range(steps):
        start = time.perf_counter()
        workload.step()
        step_ms.append((time.perf_counter() - start) * 1e3)
    line = {
        "side": "pytorch",
        "workload": workload.name,
        "device": "cpu",
        "threads": torch.get_num_threads(),
        "agreed_steps": len(workload.dispatch_losses),
        "warmup": args.warmup,
        "steps": steps,
        "ms_per_step": round(statistics.median(step_ms), 4),
        "mean_ms": round(statistics.fmean(step_ms), 4),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
