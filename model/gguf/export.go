package gguf

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// Source is a trained model to export and what made it.
type Source struct {
	Model     *model.Model // with its extension, if it has one (Model.Extend)
	Tokenizer data.Tokenizer
	// Name names the model in the file (general.name): the run directory,
	// say, followed by its status when it is not a finished run's final
	// checkpoint ("runs/tiny (unfinished at step 750 of 2000)").
	Name string
	// Checkpoint is the file the weights were read from, Step the training
	// step it was saved at, Steps the steps of its run and Finished whether
	// the run finished (eval.Weights).
	Checkpoint  string
	Step, Steps int
	Finished    bool
	// Meta is the checkpoint's metadata (model.Checkpoint Meta): the run's
	// config, its corpus and the corpus's fingerprint.
	Meta map[string]string
}

// Options are the choices of an export.
type Options struct {
	// Type is the type of the matrices: F32 (exact), F16 or Q8_0. The
	// vectors (biases, LayerNorm) and the sinusoidal table stay F32; a
	// matrix whose rows q8_0 cannot cut into blocks of 32 is written F16.
	Type TensorType
	// Context is the context length the file declares (llama.cpp's default
	// context, and the rows of a sinusoidal model's position table, past
	// which llama.cpp cannot go). 0: the training length, times the
	// extension's factor.
	Context int
}

// Summary says what an export wrote.
type Summary struct {
	Architecture string // mpt, gptneox or gpt2
	Context      int
	Type         TensorType
	Tensors      int
	// Notes say how the model was mapped, one sentence each.
	Notes []string
}

// KeyPrefix begins the keys that say what made the file: alibi_go.scheme,
// alibi_go.train_len, alibi_go.model_config, alibi_go.train_config,
// alibi_go.tokenizer, alibi_go.tokenizer_hash, alibi_go.data.corpus,
// alibi_go.data.sha256, alibi_go.data.bytes, alibi_go.checkpoint,
// alibi_go.step, alibi_go.steps and alibi_go.finished.
const KeyPrefix = "alibi_go."

// Build makes the GGUF file of a trained model for llama.cpp: the
// architecture its position scheme maps to exactly (alibi and none as
// mpt, rope as gptneox, sinusoidal as gpt2), its weights in llama.cpp's
// names and layout (matrices as (out, in), the token embedding scaled by
// sqrt(d_model), the untied head as output.weight), its tokenizer as a
// byte-level BPE vocabulary, and what made it. Schemes and extensions
// llama.cpp has no exact counterpart for are refused, saying why.
func Build(src Source, opt Options) (*File, *Summary, error) {
	m := src.Model
	if m == nil || src.Tokenizer == nil {
		return nil, nil, fmt.Errorf("gguf: a source needs a model and a tokenizer")
	}
	cfg := m.Config
	if v := src.Tokenizer.VocabSize(); v != cfg.Vocab {
		return nil, nil, fmt.Errorf("gguf: the model has %d tokens but its tokenizer, %v, has %d", cfg.Vocab, src.Tokenizer, v)
	}
	switch opt.Type {
	case F32, F16, Q8_0:
	default:
		return nil, nil, fmt.Errorf("gguf: type %v is not f32, f16 or q8_0", opt.Type)
	}
	context := opt.Context
	if context < 0 || context > math.MaxUint32 {
		return nil, nil, fmt.Errorf("gguf: context %d must be positive", context)
	}
	if context == 0 {
		context = cfg.TrainLen
		if _, f := m.Extension(); f > 1 {
			context = int(math.Ceil(f * float64(cfg.TrainLen)))
		}
	}
	a, err := architecture(m, context)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	vocab, err := vocabulary(src.Tokenizer)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	f := &File{}
	fileType := map[TensorType]uint32{F32: 0, F16: 1, Q8_0: 7}[opt.Type]
	f.KV = append(f.KV,
		KV{"general.architecture", a.name},
		KV{"general.type", "model"},
		KV{"general.name", src.Name},
		KV{"general.description", describe(src, a.name)},
		KV{"general.file_type", fileType},
		KV{"general.alignment", uint32(Alignment)},
	)
	if opt.Type == Q8_0 {
		f.KV = append(f.KV, KV{"general.quantization_version", uint32(2)})
	}
	for _, kv := range []KV{
		{"context_length", uint32(context)},
		{"embedding_length", uint32(cfg.DModel)},
		{"block_count", uint32(cfg.NLayers)},
		{"feed_forward_length", uint32(cfg.DFF)},
		{"attention.head_count", uint32(cfg.NHeads)},
		{"attention.head_count_kv", uint32(cfg.NHeads)},
		{"attention.layer_norm_epsilon", float32(layers.LayerNormEps)},
	} {
		f.KV = append(f.KV, KV{a.name + "." + kv.Key, kv.Value})
	}
	for _, kv := range a.kv {
		f.KV = append(f.KV, KV{a.name + "." + kv.Key, kv.Value})
	}
	f.KV = append(f.KV, vocab...)
	f.KV = append(f.KV, provenance(src)...)

	s := &Summary{Architecture: a.name, Context: context, Type: opt.Type, Notes: a.notes}
	if f.Tensors, err = tensors(m, a, context, opt.Type, s); err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	s.Tensors = len(f.Tensors)
	return f, s, nil
}

// Export writes the GGUF file of src to w (Build, then File.WriteTo).
func Export(w io.Writer, src Source, opt Options) (*Summary, error) {
	f, s, err := Build(src, opt)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteTo(w); err != nil {
		return nil, err
	}
	return s, nil
}

// describe is general.description: one sentence on what the file holds.
func describe(src Source, arch string) string {
	cfg := src.Model.Config
	status := "not trained by a run"
	if src.Steps > 0 || src.Step > 0 {
		status = fmt.Sprintf("step %d of %d, unfinished", src.Step, src.Steps)
		if src.Finished && src.Step == src.Steps {
			status = fmt.Sprintf("step %d of %d, finished", src.Step, src.Steps)
		}
	}
	return fmt.Sprintf("Position scheme %s (as llama.cpp's %s): %d layers, d_model %d, %d heads, trained on %d tokens of %v by github.com/alibi-go/alibi (%s).",
		label(src.Model), arch, cfg.NLayers, cfg.DModel, cfg.NHeads, cfg.TrainLen, src.Tokenizer, status)
}

// provenance is the alibi_go.* metadata: what trained the weights.
func provenance(src Source) []KV {
	m := src.Model
	mc, _ := json.Marshal(m.Config)
	kv := []KV{
		{KeyPrefix + "scheme", label(m)},
		{KeyPrefix + "train_len", uint32(m.Config.TrainLen)},
		{KeyPrefix + "model_config", string(mc)},
		{KeyPrefix + "tokenizer", src.Tokenizer.String()},
		{KeyPrefix + "tokenizer_hash", src.Tokenizer.Hash()},
		{KeyPrefix + "checkpoint", src.Checkpoint},
		{KeyPrefix + "step", uint32(max(0, src.Step))},
		{KeyPrefix + "steps", uint32(max(0, src.Steps))},
		{KeyPrefix + "finished", src.Finished && src.Step == src.Steps},
	}
	if ext, f := m.Extension(); ext != nil {
		kv = append(kv, KV{KeyPrefix + "extension", ext.Name()}, KV{KeyPrefix + "extension_factor", float32(f)})
	}
	for _, k := range []struct{ meta, key string }{
		{model.MetaRunConfig, "train_config"},
		{model.MetaCorpus, "data.corpus"},
		{model.MetaCorpusSHA256, "data.sha256"},
	} {
		if v, ok := src.Meta[k.meta]; ok {
			kv = append(kv, KV{KeyPrefix + k.key, v})
		}
	}
	if n, err := strconv.ParseUint(src.Meta[model.MetaCorpusBytes], 10, 64); err == nil {
		kv = append(kv, KV{KeyPrefix + "data.bytes", n})
	}
	return kv
}

// tensors returns the model's weights in llama.cpp's names, order and
// layout.
func tensors(m *model.Model, a *arch, context int, typ TensorType, s *Summary) ([]Tensor, error) {
	cfg := m.Config
	d, ff, v := cfg.DModel, cfg.DFF, cfg.Vocab
	w := m.Weights
	var out []Tensor
	var fellBack []string
	add := func(name string, values []float32, dims ...uint64) error {
		t := F32
		if len(dims) == 2 && name != "position_embd.weight" {
			t = typ
			if t == Q8_0 && dims[0]%q8Block != 0 {
				t = F16
				fellBack = append(fellBack, name)
			}
		}
		tn, err := Encode(name, dims, t, values)
		if err != nil {
			return err
		}
		out = append(out, tn)
		return nil
	}
	get := func(name string) ([]float32, error) {
		if _, ok := w.Tensors[name]; !ok {
			return nil, fmt.Errorf("the model has no weight %s", name)
		}
		return w.Data(name), nil
	}
	// The embedding as the model reads it: each row times sqrt(d_model),
	// one float32 product as the model's embedding computes it.
	emb, err := get("tok_emb.weight")
	if err != nil {
		return nil, err
	}
	scale := float32(math.Sqrt(float64(d)))
	scaled := make([]float32, len(emb))
	for i, x := range emb {
		scaled[i] = x * scale
	}
	if err := add("token_embd.weight", scaled, uint64(d), uint64(v)); err != nil {
		return nil, err
	}
	if a.table != nil {
		if err := add("position_embd.weight", a.table, uint64(d), uint64(context)); err != nil {
			return nil, err
		}
	}
	type part struct {
		from, to string
		in, out  int // a matrix (in, out), written (out, in); out 0: a vector
	}
	parts := []part{
		{"ln1.weight", "attn_norm.weight", d, 0}, {"ln1.bias", "attn_norm.bias", d, 0},
		{"attn.qkv.weight", "attn_qkv.weight", d, 3 * d}, {"attn.qkv.bias", "attn_qkv.bias", 3 * d, 0},
		{"attn.out.weight", "attn_output.weight", d, d}, {"attn.out.bias", "attn_output.bias", d, 0},
		{"ln2.weight", "ffn_norm.weight", d, 0}, {"ln2.bias", "ffn_norm.bias", d, 0},
		{"mlp.fc1.weight", "ffn_up.weight", d, ff}, {"mlp.fc1.bias", "ffn_up.bias", ff, 0},
		{"mlp.fc2.weight", "ffn_down.weight", ff, d}, {"mlp.fc2.bias", "ffn_down.bias", d, 0},
	}
	for l := 0; l < cfg.NLayers; l++ {
		for _, p := range parts {
			x, err := get(fmt.Sprintf("layers.%d.%s", l, p.from))
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("blk.%d.%s", l, p.to)
			if p.out == 0 {
				err = add(name, x, uint64(p.in))
			} else {
				err = add(name, transpose(x, p.in, p.out), uint64(p.in), uint64(p.out))
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for _, p := range []part{{"ln_f.weight", "output_norm.weight", d, 0}, {"ln_f.bias", "output_norm.bias", d, 0}, {"head.weight", "output.weight", d, v}} {
		x, err := get(p.from)
		if err != nil {
			return nil, err
		}
		if p.out == 0 {
			err = add(p.to, x, uint64(p.in))
		} else {
			err = add(p.to, transpose(x, p.in, p.out), uint64(p.in), uint64(p.out))
		}
		if err != nil {
			return nil, err
		}
	}
	if len(fellBack) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d matrices whose rows are not a multiple of %d values are f16, not q8_0: %v", len(fellBack), q8Block, fellBack))
	}
	return out, nil
}

// transpose returns the (cols, rows) row-major transpose of the (rows,
// cols) row-major x.
func transpose(x []float32, rows, cols int) []float32 {
	t := make([]float32, len(x))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			t[c*rows+r] = x[r*cols+c]
		}
	}
	return t
}
