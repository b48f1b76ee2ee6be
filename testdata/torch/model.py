"""The project's decoder-only byte model, written with PyTorch's own layers.

The conventions are the project's (see model/ and layers/ in the Go code):
  - token embedding (vocab, d), scaled by sqrt(d) on input; the scheme
    "sinusoidal" adds the sin/cos table [sin(p f_k) | cos(p f_k)],
    f_k = 10000^(-k / (d/2 - 1));
  - pre-LN blocks: x += out(attn(LN1(x))); x += fc2(gelu(fc1(LN2(x)))), with
    nn.LayerNorm (eps 1e-5), exact (erf) GELU, nn.Linear with biases;
  - attention softmax(q k^T / sqrt(d_head) + bias) v over heads of
    d_head = d / heads, q, k and v side by side in one (d, 3d) projection;
    the bias is the causal mask, plus -m_h (i - j) for "alibi"; "rope"
    rotates q and k in the half-split layout, theta_k = 10000^(-2k/d_head);
  - "stick-breaking" replaces the softmax: with z = q k^T / sqrt(d_head),
    the key j < i takes A_ij = sigmoid(z_ij) prod_{j<k<i} (1 - sigmoid(z_ik)),
    and the output is A v + (1 - sum_j A_ij) b_h, b a learned vector per
    layer and head (attn.sb.remainder);
  - "pope" scores sum_c softplus(q_c) softplus(k_c) cos((i - j) theta_c +
    delta_hc) / sqrt(d_head), theta_c = 10000^(-c/d_head) for every
    component c, delta a learned phase per layer, head and component
    (attn.pope.phase), then the softmax;
  - final LayerNorm and an untied head without bias.
The project stores a linear layer's matrix as (in, out), nn.Linear as
(out, in): load_weights transposes.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

SCHEMES = ("alibi", "sinusoidal", "none", "rope", "stick-breaking", "pope")


def alibi_slopes(heads):
    """Press et al.'s slopes: 2^(-8/n), 2^(-16/n), ... for n a power of two;
    otherwise those of the power of two p below, then every other slope of 2p."""
    def geometric(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    if heads & (heads - 1) == 0:
        return geometric(heads)
    p = 1 << (heads.bit_length() - 1)
    return geometric(p) + alibi_slopes(2 * p)[0::2][:heads - p]


def sinusoidal_table(length, d, dtype):
    """The (length, d) table [sin(p f_k) | cos(p f_k)], a zero last column for odd d."""
    half = d // 2
    freq = torch.exp(torch.arange(half, dtype=torch.float64) * (-math.log(10000.0) / max(half - 1, 1)))
    angle = torch.arange(length, dtype=torch.float64)[:, None] * freq[None, :]
    table = torch.cat([torch.sin(angle), torch.cos(angle), torch.zeros(length, d % 2, dtype=torch.float64)], 1)
    return table.to(dtype)


def rope(x):
    """Rotates (batch, heads, T, d_head) by position, half-split pairs (k, k + d_head/2)."""
    t, dh = x.shape[-2], x.shape[-1]
    half = dh // 2
    theta = 10000.0 ** (-2.0 * torch.arange(half, dtype=torch.float64) / dh)
    angle = torch.arange(t, dtype=torch.float64)[:, None] * theta[None, :]
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def stick_breaking(q, k, v, rem):
    """Stick-breaking attention from the (T, T) scores, in log space:
    ln A_ij = ln sigmoid(z_ij) + sum_{j<k<i} ln sigmoid(-z_ik), a reverse
    cumulative sum along the keys; rem (heads, d_head) takes what is left."""
    t, dh = q.shape[-2], q.shape[-1]
    z = q @ k.transpose(-2, -1) / math.sqrt(dh)
    before = torch.ones(t, t, dtype=torch.bool).tril(-1)  # the keys j < i
    log_left = F.logsigmoid(-z).masked_fill(~before, 0.0)
    farther = log_left.flip(-1).cumsum(-1).flip(-1) - log_left  # sum over j < k of each row's entries k < i
    att = torch.exp(F.logsigmoid(z) + farther).masked_fill(~before, 0.0)
    left = 1 - att.sum(-1, keepdim=True)
    return att @ v + left * rem[None, :, None, :].to(q.dtype)


def pope_scores(q, k, phase):
    """PoPE's (T, T) logits: q' . k' / sqrt(d_head), q' the query's
    magnitudes softplus(q) times the cosine and the sine of i theta_c + delta,
    k' the key's softplus(k) times those of j theta_c."""
    t, dh = q.shape[-2], q.shape[-1]
    theta = 10000.0 ** (-torch.arange(dh, dtype=torch.float64) / dh)
    angle = torch.arange(t, dtype=torch.float64)[:, None] * theta[None, :]
    aq = angle[None] + phase.to(torch.float64)[:, None, :]  # (heads, T, d_head)
    mq, mk = F.softplus(q), F.softplus(k)
    qq = torch.cat([mq * torch.cos(aq).to(q.dtype), mq * torch.sin(aq).to(q.dtype)], -1)
    kk = torch.cat([mk * torch.cos(angle).to(q.dtype), mk * torch.sin(angle).to(q.dtype)], -1)
    return qq @ kk.transpose(-2, -1) / math.sqrt(dh)


class Block(nn.Module):
    def __init__(self, d, heads, d_ff, pos="none"):
        super().__init__()
        self.heads, self.pos = heads, pos
        if pos == "stick-breaking":
            self.sb_remainder = nn.Parameter(torch.zeros(heads, d // heads))
        if pos == "pope":
            self.pope_phase = nn.Parameter(torch.zeros(heads, d // heads))
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, d_ff)
        self.fc2 = nn.Linear(d_ff, d)

    def forward(self, x, bias, rotary):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if rotary:
            q, k = rope(q), rope(k)
        if self.pos == "stick-breaking":
            y = stick_breaking(q, k, v, self.sb_remainder)
        else:
            if self.pos == "pope":
                scores = pope_scores(q, k, self.pope_phase) + bias.to(q.dtype)
            else:
                scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + bias.to(q.dtype)
            y = F.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, d)
        x = x + self.out(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        if cfg["pos"] not in SCHEMES:
            raise ValueError(f"position scheme {cfg['pos']!r}: lm.py models {', '.join(SCHEMES)}")
        if cfg.get("logit_scale") not in ("", "none"):
            raise ValueError(f"logit_scale {cfg['logit_scale']!r}: lm.py models none")
        d, self.pos = cfg["d_model"], cfg["pos"]
        self.tok_emb = nn.Embedding(cfg["vocab"], d)
        self.blocks = nn.ModuleList(Block(d, cfg["n_heads"], cfg["d_ff"], cfg["pos"]) for _ in range(cfg["n_layers"]))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, cfg["vocab"], bias=False)
        self.register_buffer("slopes", torch.tensor(alibi_slopes(cfg["n_heads"])), persistent=False)
        self.init_weights(cfg["n_layers"])

    def init_weights(self, layers):
        """The project's initialisation (model.InitWeights), drawn by PyTorch."""
        d = self.tok_emb.weight.shape[1]
        nn.init.normal_(self.tok_emb.weight, 0.0, d ** -0.5)
        nn.init.normal_(self.head.weight, 0.0, 0.02)
        for blk in self.blocks:
            for lin, std in ((blk.qkv, 0.02), (blk.fc1, 0.02), (blk.out, 0.02 / math.sqrt(2 * layers)),
                             (blk.fc2, 0.02 / math.sqrt(2 * layers))):
                nn.init.normal_(lin.weight, 0.0, std)
                nn.init.zeros_(lin.bias)

    def bias(self, t, dtype):
        i = torch.arange(t)[:, None]
        j = torch.arange(t)[None, :]
        mask = torch.zeros(t, t, dtype=dtype).masked_fill(j > i, float("-inf"))
        if self.pos != "alibi":
            return mask[None]
        return mask[None] - self.slopes.to(dtype)[:, None, None] * (i - j).clamp(min=0).to(dtype)[None]

    def forward(self, ids):
        dtype = self.tok_emb.weight.dtype
        t, d = ids.shape[1], self.tok_emb.weight.shape[1]
        x = self.tok_emb(ids) * math.sqrt(d)
        if self.pos == "sinusoidal":
            x = x + sinusoidal_table(t, d, dtype)
        bias = self.bias(t, dtype)
        for blk in self.blocks:
            x = blk(x, bias, self.pos == "rope")
        return self.head(self.ln_f(x))

    def project_weights(self):
        """(name, parameter, transposed) of every weight: its name in the
        project's checkpoints, and whether the project stores it transposed."""
        yield "tok_emb.weight", self.tok_emb.weight, False
        for i, blk in enumerate(self.blocks):
            for mod, name in ((blk.ln1, "ln1"), (blk.qkv, "attn.qkv"), (blk.out, "attn.out"), (blk.ln2, "ln2"),
                              (blk.fc1, "mlp.fc1"), (blk.fc2, "mlp.fc2")):
                yield f"layers.{i}.{name}.weight", mod.weight, isinstance(mod, nn.Linear)
                yield f"layers.{i}.{name}.bias", mod.bias, False
            if blk.pos == "stick-breaking":
                yield f"layers.{i}.attn.sb.remainder", blk.sb_remainder, False
            if blk.pos == "pope":
                yield f"layers.{i}.attn.pope.phase", blk.pope_phase, False
        yield "ln_f.weight", self.ln_f.weight, False
        yield "ln_f.bias", self.ln_f.bias, False
        yield "head.weight", self.head.weight, True

    def load_weights(self, tensors):
        """Copies the project's weights (name -> numpy array) in; every
        weight of the model must be there, with its shape."""
        for name, param, transposed in self.project_weights():
            if name not in tensors:
                raise ValueError(f"weight {name} is missing")
            w = torch.from_numpy(tensors[name].copy())
            w = w.t() if transposed else w
            if w.shape != param.shape:
                raise ValueError(f"weight {name}: shape {tuple(w.shape)}, want {tuple(param.shape)}")
            with torch.no_grad():
                param.copy_(w)
