#!/usr/bin/python3
"""The project's model in PyTorch (model.py), against the project itself.

Run from the project's root with /usr/bin/python3, after testdata/torch/setup.sh.

  lm.py eval [--run runs/tiny | --checkpoint FILE] [--lens 128,256,512]
             [--dtype float32|float64] [--project-json FILE] [--tol T]
             [--max-tokens N] [--perturb NAME=DELTA]
      Loads the run's newest checkpoint (verifying its checksum) into the
      PyTorch model and scores the validation split of the run's corpus as
      `go run ./cmd/eval` does: at each length, non-overlapping windows, the
      tail as one shorter window, every token after the first scored once.
      With --project-json (the JSON of `cmd/eval --json`) it prints, per
      length, both perplexities and their relative difference, and exits 1
      if one is over --tol (default 1e-6 in float32; 1e-7 in float64, where
      the difference is the project's own float32 rounding). --perturb
      adds DELTA to the first element of weight NAME, to see the check fail.

  lm.py throughput --config configs/tiny.yaml --steps N [--precision fp32|bf16]
                   [--json OUT] [--threads N]
      Trains the config's model from scratch for N steps as the project's
      train package does (random windows of the training split, AdamW with
      decay on matrices only, warm-up then cosine schedule, global-norm
      clipping), with bf16 autocast for --precision bf16, and reports
      tokens/s over every step after the first five, as the project's
      summary.json does. --json writes
      {"tokens_per_second", "steps", "torch", "threads", "blas_core", ...}.
"""
import argparse
import ctypes
import hashlib
import json
import math
import os
import platform
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the project's tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runfiles  # noqa: E402
from model import LM, alibi_slopes  # noqa: E402

WARM_STEPS = 5  # steps left out of tokens/s, as in the project's train package
BATCH_TOKENS = 4096  # tokens per forward pass in eval, as cmd/eval's default


def fail(msg):
    print(f"lm.py: {msg}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- eval


def perplexity(model, val, length, max_tokens):
    """Mean NLL in nats and tokens scored, over non-overlapping windows of
    length (the tail one shorter) of val, cut to its first max_tokens+1."""
    toks = torch.from_numpy(np.frombuffer(val[:available(val, max_tokens)], dtype=np.uint8).astype(np.int64))
    n = len(toks) - 1  # targets
    starts = list(range(0, n, length))
    groups = [[s for s in starts if s + length <= n], [s for s in starts if s + length > n]]
    total, scored = 0.0, 0
    with torch.no_grad():
        for group in groups:
            if not group:
                continue
            win = min(length, n - group[0])
            per = max(1, BATCH_TOKENS // win)
            for k in range(0, len(group), per):
                x = torch.stack([toks[s:s + win] for s in group[k:k + per]])
                y = torch.stack([toks[s + 1:s + win + 1] for s in group[k:k + per]])
                logits = model(x)
                nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
                total += nll.to(torch.float64).sum().item()
                scored += y.numel()
    return total / scored, scored


def parse_lens(text):
    lens = []
    for f in text.split(","):
        if not f.strip().isdigit() or int(f) < 1:
            raise ValueError(f"--lens: {f!r} is not a positive length")
        lens.append(int(f))
    return lens


def available(val, max_tokens):
    """The tokens scored from: all of val, or its first max_tokens+1."""
    return min(len(val), max_tokens + 1) if max_tokens else len(val)


def project_results(path):
    """cmd/eval's JSON: {length: (ppl, tokens scored)} of its one run, non-overlapping windows."""
    with open(path) as f:
        report = json.load(f)
    runs = report.get("runs", [])
    if len(runs) != 1:
        raise ValueError(f"{path}: {len(runs)} runs, want the one evaluated")
    return {r["len"]: (r["ppl"], r["tokens"]) for r in runs[0]["results"] if r["protocol"] == "nonoverlap"}


def eval_command(args):
    if args.checkpoint:
        ckpt, cfg_path = runfiles.Checkpoint(args.checkpoint), None
    else:
        ckpt, cfg_path = runfiles.latest_checkpoint(args.run), os.path.join(args.run, "config.yaml")
    mc = ckpt.model
    if ckpt.tokenizer != "bytes" or mc["vocab"] != 256:
        raise ValueError(f"{ckpt.path}: tokenizer {ckpt.tokenizer}, vocabulary {mc['vocab']}: lm.py scores byte-level runs only")
    if cfg_path and os.path.exists(cfg_path):
        # The run's config.yaml and its checkpoint must describe one model.
        yc = runfiles.load_config(cfg_path)["model"]
        for k, v in mc.items():
            if yc.get(k, v) != v and not (k == "logit_scale" and {v, yc.get(k)} <= {"", "none"}):
                raise ValueError(f"{cfg_path}: model.{k} is {yc.get(k)!r}, the checkpoint's {v!r}")
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    if ckpt.meta.get("model.positions_dropped") == "true":
        mc = dict(mc, pos="none")  # DroPE dropped the rotation: the weights now run without it
    model = LM(mc).to(dtype)
    model.load_weights(ckpt.tensors)
    if mc["pos"] == "alibi":
        ours = np.array(alibi_slopes(mc["n_heads"]), dtype=np.float32)
        if not np.array_equal(ours, ckpt.tensors["buffers.alibi_slopes"]):
            raise ValueError(f"the checkpoint's ALiBi slopes {ckpt.tensors['buffers.alibi_slopes']} are not {ours}")
    if args.perturb:
        name, _, delta = args.perturb.partition("=")
        weights = {n: p for n, p, _ in model.project_weights()}
        if name not in weights:
            raise ValueError(f"--perturb: the model has no weight {name!r}")
        try:
            delta = float(delta)
        except ValueError:
            raise ValueError(f"--perturb: {args.perturb!r} is not NAME=DELTA") from None
        with torch.no_grad():
            weights[name].view(-1)[0] += delta
        print(f"perturbed {name}[0] by {delta}")
    model.eval()
    corpus = runfiles.load_corpus(ckpt.corpus)
    if ckpt.corpus_sha256 and hashlib.sha256(corpus).hexdigest() != ckpt.corpus_sha256:
        raise ValueError(f"corpus {ckpt.corpus} is not the one the run trained on (its SHA-256 differs)")
    _, val = runfiles.split(corpus, ckpt.val_frac)
    project = project_results(args.project_json) if args.project_json else {}
    tol = args.tol if args.tol is not None else {"float32": 1e-6, "float64": 1e-7}[args.dtype]
    lens = parse_lens(args.lens) if args.lens else [mc["train_len"] * m for m in (1, 2, 4)]
    for length in lens:
        if length >= available(val, args.max_tokens):
            raise ValueError(f"length {length} does not fit in {available(val, args.max_tokens)} validation tokens")
    print(f"checkpoint {ckpt.path} ({mc['pos']}, L = {mc['train_len']}); corpus {ckpt.corpus or 'builtin:opticks'}, "
          f"{len(val)} validation tokens; PyTorch {torch.__version__} in {args.dtype}")
    print(f"{'len':>6} {'tokens':>8} {'pytorch ppl':>14} {'project ppl':>14} {'rel diff':>9}")
    worst = 0.0
    for length in lens:
        t0 = time.perf_counter()
        nats, scored = perplexity(model, val, length, args.max_tokens)
        ppl = math.exp(nats)
        line = f"{length:6d} {scored:8d} {ppl:14.8f}"
        if length in project:
            theirs, their_tokens = project[length]
            if their_tokens != scored:
                raise ValueError(f"length {length}: the project scored {their_tokens} tokens, PyTorch {scored}")
            rel = abs(ppl - theirs) / theirs
            worst = max(worst, rel)
            line += f" {theirs:14.8f} {rel:9.1e}"
        elif project:
            line += f" {'(not in JSON)':>14}"
        print(line + f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    if project:
        verdict = "within" if worst <= tol else "OVER"
        print(f"largest relative difference {worst:.1e}: {verdict} the tolerance {tol:.0e}")
        if worst > tol:
            sys.exit(1)


# ---------------------------------------------------------------- throughput


def lr_at(step, t):
    """The project's schedule: linear warm-up to lr, then cosine to min_lr at the last step."""
    if step < t["warmup"]:
        return t["lr"] * (step + 1) / t["warmup"]
    prog = min(1.0, (step - t["warmup"]) / max(1, t["steps"] - t["warmup"]))
    return t["min_lr"] + 0.5 * (t["lr"] - t["min_lr"]) * (1 + math.cos(math.pi * prog))


def blas():
    """The BLAS library PyTorch loaded, and OpenBLAS's kernel set (its core type) if it is OpenBLAS."""
    with open("/proc/self/maps") as f:
        libs = sorted({ln.split()[-1] for ln in f if "blas" in ln.rsplit("/", 1)[-1]})
    core = "unknown"
    for lib in libs:
        try:
            fn = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        core = fn().decode()
    return libs, core


def processor():
    with open("/proc/cpuinfo") as f:
        for ln in f:
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    return platform.processor()


def throughput_command(args):
    if args.steps <= WARM_STEPS:
        fail(f"--steps must be more than the {WARM_STEPS} warm-up steps, got {args.steps}")
    cfg = runfiles.load_config(args.config)
    m, t = cfg["model"], dict(cfg["train"], steps=args.steps)
    if cfg["data"]["tokenizer"] != "bytes" or m["vocab"] != 256:
        fail(f"{args.config}: tokenizer {cfg['data']['tokenizer']}: lm.py trains byte-level models only")
    torch.manual_seed(m["seed"])
    train_tokens, _ = runfiles.split(runfiles.load_corpus(cfg["data"]["corpus"]), cfg["data"]["val_frac"])
    data = torch.from_numpy(np.frombuffer(train_tokens, dtype=np.uint8).astype(np.int64))
    model = LM(m)
    model.train()
    params = list(model.parameters())
    opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": t["weight_decay"]},
                             {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}],
                            lr=t["lr"], betas=(t["beta1"], t["beta2"]), eps=t["eps"])
    gen = torch.Generator().manual_seed(m["seed"])
    B, L = t["batch"], m["train_len"]
    offsets = torch.arange(L + 1)
    bf16 = args.precision == "bf16"
    timed, step_seconds = 0.0, []
    for step in range(args.steps):
        t0 = time.perf_counter()
        rows = data[torch.randint(0, len(data) - L, (B,), generator=gen)[:, None] + offsets]
        x, y = rows[:, :-1], rows[:, 1:]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, t)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if t["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, t["clip"])
        opt.step()
        final_loss = loss.item()
        dt = time.perf_counter() - t0
        step_seconds.append(dt)
        if step >= WARM_STEPS:
            timed += dt
    libs, core = blas()
    tps = (args.steps - WARM_STEPS) * B * L / timed
    out = {"tokens_per_second": tps, "steps": args.steps, "torch": torch.__version__,
           "threads": torch.get_num_threads(), "blas_core": core, "blas": libs,
           "precision": args.precision, "config": args.config, "batch": B, "train_len": L,
           "warm_steps": WARM_STEPS, "median_step_ms": 1e3 * float(np.median(step_seconds[WARM_STEPS:])),
           "final_loss": final_loss, "processor": processor(), "python": platform.python_version()}
    print(f"PyTorch {torch.__version__} {args.precision}, {out['threads']} threads, OpenBLAS core {core}: "
          f"{args.steps} steps of {B} x {L}, {tps:,.0f} tokens/s after {WARM_STEPS} warm-up steps, "
          f"final loss {final_loss:.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    ev = sub.add_parser("eval", help="score a checkpoint as cmd/eval does and compare")
    ev.add_argument("--run", default="runs/tiny", help="run directory: its newest good checkpoint (default runs/tiny)")
    ev.add_argument("--checkpoint", help="a checkpoint file instead of --run's newest")
    ev.add_argument("--lens", default="", help="comma-separated lengths (default 1x, 2x, 4x train_len)")
    ev.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ev.add_argument("--project-json", help="cmd/eval --json output to compare with")
    ev.add_argument("--tol", type=float, help="largest relative difference accepted (default 1e-6 in float32, 1e-7 in float64)")
    ev.add_argument("--max-tokens", type=int, default=0, help="score only the first N tokens (as cmd/eval --max-tokens)")
    ev.add_argument("--perturb", help="NAME=DELTA: add DELTA to the first element of weight NAME")
    tp = sub.add_parser("throughput", help="train for --steps and report tokens/s")
    tp.add_argument("--config", default="configs/tiny.yaml")
    tp.add_argument("--steps", type=int, default=150)
    tp.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    tp.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="PyTorch's threads (default: the cores this process may use)")
    tp.add_argument("--json", help="write the result here")
    args = ap.parse_args()
    torch.set_num_threads(getattr(args, "threads", len(os.sched_getaffinity(0))))
    try:
        (eval_command if args.mode == "eval" else throughput_command)(args)
    except (OSError, ValueError, KeyError) as e:
        fail(str(e))


if __name__ == "__main__":
    main()
