package gguf_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/alibi-go/alibi/model/gguf"
	"github.com/x448/float16"
)

// reference is an independent forward pass of a GGUF file as llama.cpp's
// mpt, gptneox and gpt2 define it, in float64, from the file's own
// tensors and metadata: what the export wrote, read back.
type reference struct {
	arch                string
	d, heads, layers    int
	eps                 float64
	maxBias             float64 // mpt's ALiBi
	ropeBase, ropeScale float64 // gptneox
	t                   map[string][]float32
	gelu                func(float64) float64
}

// geluExact is the project's GELU, x·Φ(x).
func geluExact(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// geluLlama is llama.cpp's GELU on the CPU: the tanh approximation in
// float32, looked up in a table of float16 inputs and outputs.
func geluLlama(x float64) float64 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	in := float16.Fromfloat32(float32(x)).Float32()
	g := 0.5 * in * (1 + float32(math.Tanh(float64(float32(math.Sqrt(2/math.Pi))*in*(1+0.044715*in*in)))))
	return float64(float16.Fromfloat32(g).Float32())
}

func newReference(t *testing.T, f *gguf.File, gelu func(float64) float64) *reference {
	t.Helper()
	get := func(key string) any {
		v, ok := f.Lookup(key)
		if !ok {
			t.Fatalf("the file has no key %s", key)
		}
		return v
	}
	arch := get("general.architecture").(string)
	r := &reference{arch: arch, t: map[string][]float32{}, gelu: gelu, ropeScale: 1,
		d: int(get(arch + ".embedding_length").(uint32)), heads: int(get(arch + ".attention.head_count").(uint32)),
		layers: int(get(arch + ".block_count").(uint32)), eps: float64(get(arch + ".attention.layer_norm_epsilon").(float32))}
	switch arch {
	case "mpt":
		r.maxBias = float64(get("mpt.attention.max_alibi_bias").(float32))
	case "gptneox":
		r.ropeBase = float64(get("gptneox.rope.freq_base").(float32))
		if get("gptneox.rope.dimension_count").(uint32) != uint32(r.d/r.heads) {
			t.Fatalf("rotary over part of the head")
		}
		if v, ok := f.Lookup("gptneox.rope.scaling.type"); ok {
			if v != "linear" {
				t.Fatalf("rope scaling %v", v)
			}
			r.ropeScale = 1 / float64(get("gptneox.rope.scaling.factor").(float32))
		}
	}
	for _, tn := range f.Tensors {
		v, err := gguf.Decode(tn)
		if err != nil {
			t.Fatal(err)
		}
		r.t[tn.Name] = v
	}
	return r
}

func (r *reference) w(t *testing.T, name string) []float32 {
	t.Helper()
	v, ok := r.t[name]
	if !ok {
		t.Fatalf("the file has no tensor %s", name)
	}
	return v
}

// linear is W x + b for W stored as ggml lays a matrix out: out rows of in
// values.
func linear(w, b []float32, x []float64) []float64 {
	in := len(x)
	out := make([]float64, len(w)/in)
	for o := range out {
		s := 0.0
		for i, xi := range x {
			s += float64(w[o*in+i]) * xi
		}
		if b != nil {
			s += float64(b[o])
		}
		out[o] = s
	}
	return out
}

func layerNorm(x []float64, g, b []float32, eps float64) []float64 {
	var mean, v float64
	for _, xi := range x {
		mean += xi
	}
	mean /= float64(len(x))
	for _, xi := range x {
		v += (xi - mean) * (xi - mean)
	}
	inv := 1 / math.Sqrt(v/float64(len(x))+eps)
	out := make([]float64, len(x))
	for i, xi := range x {
		out[i] = (xi-mean)*inv*float64(g[i]) + float64(b[i])
	}
	return out
}

// nll is the negative log-likelihood of each next token of window.
func (r *reference) nll(t *testing.T, window []uint32) []float64 {
	t.Helper()
	n, d, dh := len(window)-1, r.d, r.d/r.heads
	x := make([][]float64, n)
	emb := r.w(t, "token_embd.weight")
	for i := range x {
		x[i] = make([]float64, d)
		for c := range x[i] {
			x[i][c] = float64(emb[int(window[i])*d+c])
		}
		if r.arch == "gpt2" {
			pe := r.w(t, "position_embd.weight")
			for c := range x[i] {
				x[i][c] += float64(pe[i*d+c])
			}
		}
	}
	p := 1
	for p*2 <= r.heads {
		p *= 2
	}
	slope := func(h int) float64 {
		if r.maxBias == 0 {
			return 0
		}
		if h < p {
			return math.Pow(2, -r.maxBias*float64(h+1)/float64(p))
		}
		return math.Pow(2, -r.maxBias*float64(2*(h-p)+1)/float64(2*p))
	}
	for l := 0; l < r.layers; l++ {
		blk := func(s string) []float32 { return r.w(t, "blk."+strconv.Itoa(l)+"."+s) }
		qkv := make([][]float64, n)
		for i := range x {
			qkv[i] = linear(blk("attn_qkv.weight"), blk("attn_qkv.bias"), layerNorm(x[i], blk("attn_norm.weight"), blk("attn_norm.bias"), r.eps))
			if r.arch == "gptneox" {
				for part := 0; part < 2; part++ { // queries, keys: pairs (k, k+dh/2)
					for h := 0; h < r.heads; h++ {
						v := qkv[i][part*d+h*dh : part*d+(h+1)*dh]
						for k := 0; k < dh/2; k++ {
							a := float64(i) * r.ropeScale * math.Pow(r.ropeBase, -2*float64(k)/float64(dh))
							c, s := math.Cos(a), math.Sin(a)
							v[k], v[k+dh/2] = v[k]*c-v[k+dh/2]*s, v[k]*s+v[k+dh/2]*c
						}
					}
				}
			}
		}
		for i := range x {
			att := make([]float64, d)
			for h := 0; h < r.heads; h++ {
				q := qkv[i][h*dh : (h+1)*dh]
				scores := make([]float64, i+1)
				top := math.Inf(-1)
				for j := 0; j <= i; j++ {
					k := qkv[j][d+h*dh : d+(h+1)*dh]
					s := 0.0
					for c := range q {
						s += q[c] * k[c]
					}
					scores[j] = s/math.Sqrt(float64(dh)) - slope(h)*float64(i-j)
					top = max(top, scores[j])
				}
				var z float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - top)
					z += scores[j]
				}
				for j := range scores {
					v := qkv[j][2*d+h*dh : 2*d+(h+1)*dh]
					for c := range v {
						att[h*dh+c] += scores[j] / z * v[c]
					}
				}
			}
			o := linear(blk("attn_output.weight"), blk("attn_output.bias"), att)
			for c := range o {
				x[i][c] += o[c]
			}
		}
		for i := range x {
			up := linear(blk("ffn_up.weight"), blk("ffn_up.bias"), layerNorm(x[i], blk("ffn_norm.weight"), blk("ffn_norm.bias"), r.eps))
			for c := range up {
				up[c] = r.gelu(up[c])
			}
			down := linear(blk("ffn_down.weight"), blk("ffn_down.bias"), up)
			for c := range down {
				x[i][c] += down[c]
			}
		}
	}
	out := make([]float64, n)
	for i := range x {
		logits := linear(r.w(t, "output.weight"), nil, layerNorm(x[i], r.w(t, "output_norm.weight"), r.w(t, "output_norm.bias"), r.eps))
		top := math.Inf(-1)
		for _, z := range logits {
			top = max(top, z)
		}
		var z float64
		for _, v := range logits {
			z += math.Exp(v - top)
		}
		out[i] = top + math.Log(z) - logits[window[i+1]]
	}
	return out
}
