"""What lm.py reads of this project: checkpoints, run configs and corpora.

Each reader is written from the project's documented formats, not from its
Go code paths, so that a disagreement shows up as an error here:

  checkpoint  safetensors (8-byte little-endian header length, JSON header,
              data); the project's tag in __metadata__["format"], the model
              config as JSON in ["config"], the corpus in ["data.corpus"],
              ["data.val_frac"] and ["data.sha256"], the run's config (with
              its tokenizer) in ["train.config"], and a SHA-256 over every
              tensor and metadata entry in ["sha256"], verified here
  config      the YAML of configs/*.yaml or a run's config.yaml, over the
              project's defaults
  corpus      builtin:opticks (data/corpus/opticks.txt.gz), goroot:DIR, a
              file, or a directory (its non-hidden regular files in the order
              of their slash-separated relative paths)
"""
import glob
import gzip
import hashlib
import json
import os
import subprocess

import numpy as np
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMAT = "alibi-go/checkpoint/v1"
DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U32": "<u4", "U64": "<u8", "U8": "u1"}

# The defaults of a config file's keys (the project's train.Defaults).
DEFAULTS = {
    "model": {"vocab": 256, "pos": "alibi", "seed": 1337, "logit_scale": ""},
    "data": {"corpus": "builtin:opticks", "val_frac": 0.1, "tokenizer": "bytes"},
    "train": {"beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "clip": 1.0, "weight_decay": 0.0,
              "min_lr": 0.0, "warmup": 0, "precision": "fp32"},
}
MODEL_INTS = ("vocab", "d_model", "n_layers", "n_heads", "d_ff", "train_len", "seed")
TRAIN_FLOATS = ("lr", "min_lr", "beta1", "beta2", "eps", "weight_decay", "clip")


class Checkpoint:
    """A checkpoint's tensors (name -> numpy array) and metadata strings."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) < 8:
            raise ValueError(f"{path}: {len(raw)} bytes, not a safetensors file")
        n = int.from_bytes(raw[:8], "little")
        if n > len(raw) - 8:
            raise ValueError(f"{path}: header of {n} bytes is longer than the file")
        try:
            header = json.loads(raw[8:8 + n].decode("utf-8"))
        except ValueError as e:  # JSON and UTF-8 errors alike
            raise ValueError(f"{path}: the safetensors header is not valid JSON: {e}") from None
        self.meta = header.pop("__metadata__", {})
        data = memoryview(raw)[8 + n:]
        digest = hashlib.sha256()
        self.tensors = {}
        end = 0
        for name, e in sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"])):
            lo, hi = e["data_offsets"]
            if lo != end:
                raise ValueError(f"{path}: tensor {name} starts at {lo}, the previous one ends at {end}")
            end = hi
            chunk = bytes(data[lo:hi])
            shape = [int(d) for d in e["shape"]]
            # The checksum's record of a tensor: name|dtype|[d0 d1 ...]|bytes|, then its bytes.
            digest.update(f"{name}|{e['dtype']}|[{' '.join(map(str, shape))}]|{len(chunk)}|".encode())
            digest.update(chunk)
            self.tensors[name] = np.frombuffer(chunk, dtype=DTYPES[e["dtype"]]).reshape(shape)
        if end != len(data):
            raise ValueError(f"{path}: {len(data) - end} bytes after the last tensor")
        for k in sorted(k for k in self.meta if k != "sha256"):
            kb, vb = k.encode(), self.meta[k].encode()
            digest.update(b"%d|%s|%d|%s|" % (len(kb), kb, len(vb), vb))
        if self.meta.get("format") != FORMAT:
            raise ValueError(f"{path}: not a checkpoint of this project (format {self.meta.get('format')!r})")
        if digest.hexdigest() != self.meta.get("sha256"):
            raise ValueError(f"{path}: checksum mismatch: the file is corrupted")
        self.model = json.loads(self.meta["config"])
        self.model.setdefault("logit_scale", "")
        self.corpus = self.meta.get("data.corpus", "")
        self.corpus_sha256 = self.meta.get("data.sha256", "")  # absent in older checkpoints
        self.val_frac = float(self.meta.get("data.val_frac", "0.1"))
        run_data = json.loads(self.meta.get("train.config", "{}")).get("data", {})
        self.tokenizer = run_data.get("tokenizer") or "bytes"


def latest_checkpoint(run_dir):
    """The run's newest checkpoint that loads and verifies, as cmd/eval picks it."""
    paths = sorted(glob.glob(os.path.join(run_dir, "checkpoints", "step-*.safetensors")))
    if not paths:
        raise ValueError(f"no checkpoint in {os.path.join(run_dir, 'checkpoints')}")
    errors = []
    for p in reversed(paths):
        try:
            return Checkpoint(p)
        except (ValueError, KeyError, OSError) as e:
            errors.append(str(e))
    raise ValueError(f"none of the checkpoints of {run_dir} loads: {'; '.join(errors)}")


def load_config(path):
    """A config file over the project's defaults, with its numbers as numbers
    (YAML 1.1 reads 1e-08 as a string)."""
    with open(path) as f:
        raw = yaml.safe_load(f) or {}
    cfg = {}
    for section, defaults in DEFAULTS.items():
        cfg[section] = dict(defaults, **(raw.get(section) or {}))
    for k in MODEL_INTS:
        if k in cfg["model"]:
            cfg["model"][k] = int(cfg["model"][k])
    for k in TRAIN_FLOATS:
        if k in cfg["train"]:
            cfg["train"][k] = float(cfg["train"][k])
    cfg["data"]["val_frac"] = float(cfg["data"]["val_frac"])
    cfg["name"] = raw.get("name", "")
    return cfg


def _goroot():
    return os.environ.get("GOROOT") or subprocess.run(
        ["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()


def _tree(root, keep):
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and not os.path.islink(os.path.join(d, x))]
        for x in names:
            p = os.path.join(d, x)
            if not x.startswith(".") and keep(x) and os.path.isfile(p) and not os.path.islink(p):
                files.append((os.path.relpath(p, root).replace(os.sep, "/").encode(), p))
    out = bytearray()
    for _, p in sorted(files):
        with open(p, "rb") as f:
            out += f.read()
    return bytes(out)


def load_corpus(spec):
    """The corpus's bytes, which are its tokens."""
    if spec in ("", "builtin:opticks"):
        with gzip.open(os.path.join(ROOT, "data", "corpus", "opticks.txt.gz")) as f:
            return f.read()
    if spec.startswith("goroot:"):
        return _tree(os.path.join(_goroot(), spec[len("goroot:"):]), lambda n: n.endswith(".go"))
    if os.path.isdir(spec):
        return _tree(spec, lambda n: True)
    with open(spec, "rb") as f:
        return f.read()


def split(tokens, val_frac):
    """(train, validation): the first int(n * (1 - val_frac)) tokens, and the rest."""
    n_train = int(len(tokens) * (1 - val_frac))
    return tokens[:n_train], tokens[n_train:]
