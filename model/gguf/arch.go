package gguf

import (
	"fmt"
	"math"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model"
)

// unsupported says, for each built-in scheme llama.cpp has no counterpart
// of, why.
var unsupported = map[string]string{
	model.PosT5:      "T5's learned bucketed bias, which llama.cpp's decoder-only architectures do not have",
	model.PosKerple:  "KERPLE's learned logarithmic bias, which no llama.cpp architecture computes",
	model.PosFire:    "FIRE's learned function of the normalised distance, which no llama.cpp architecture computes",
	"fox":            "the Forgetting Transformer's forget gate, which no llama.cpp architecture computes",
	"stick-breaking": "stick-breaking attention, which replaces the softmax: llama.cpp's attention is a softmax",
	"pope":           "PoPE's softplus magnitudes and learned phases, which no llama.cpp architecture computes",
}

// maxTableBytes bounds the sinusoidal table an export writes (1 GiB: 2M
// positions of d_model 128).
const maxTableBytes = 1 << 30

// arch is the llama.cpp architecture of a model and what it adds to the
// common metadata and tensors.
type arch struct {
	name string // general.architecture: mpt, gptneox or gpt2
	kv   []KV   // the architecture's own keys, without the prefix
	// table is the position embedding to write (gpt2), (context, d_model)
	// row-major; nil for the others.
	table []float32
	notes []string
}

// architecture maps the model's position scheme (and its extension, if
// any) to llama.cpp's architectures, exactly or not at all: alibi and none
// to mpt, rope to gptneox, sinusoidal to gpt2 with the table of context
// positions.
func architecture(m *model.Model, context int) (*arch, error) {
	cfg := m.Config
	if cfg.LogitScale == model.LogitScaleLogLength {
		return nil, fmt.Errorf("%s: log-length scaling of the attention logits has no counterpart in llama.cpp", cfg.Label())
	}
	ext, factor := m.Extension()
	if ext != nil && factor == 0 {
		return nil, fmt.Errorf("%s+%s: the extension's factor follows each graph's length; export needs a fixed factor", cfg.Pos, ext.Name())
	}
	pos := cfg.Pos
	if m.PositionsDropped() {
		pos = model.PosNone // DroPE dropped the rotation: the weights run with the causal mask alone
	}
	switch pos {
	case model.PosALiBi:
		slopes := m.PositionBuffer
		if e, ok := ext.(position.SlopeExtension); ok {
			slopes = e.Slopes(slopes, factor)
		}
		bias, err := maxAlibiBias(slopes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label(m), err)
		}
		return &arch{name: "mpt", kv: []KV{{"attention.max_alibi_bias", bias}},
			notes: []string{fmt.Sprintf("ALiBi as mpt with max_alibi_bias %g, which gives the model's %d slopes", bias, len(slopes))}}, nil
	case model.PosNone:
		// Without the key llama.cpp also leaves ALiBi off; written, it says so.
		note := "none as mpt with max_alibi_bias 0: the causal mask alone"
		if m.PositionsDropped() {
			note = "rope whose rotation DroPE dropped, as mpt with max_alibi_bias 0: the causal mask alone"
		}
		return &arch{name: "mpt", kv: []KV{{"attention.max_alibi_bias", float32(0)}}, notes: []string{note}}, nil
	case model.PosRoPE:
		return rotary(m, ext, factor)
	case model.PosSinusoidal:
		if bytes := int64(context) * int64(cfg.DModel) * 4; bytes > maxTableBytes {
			return nil, fmt.Errorf("a sinusoidal table of %d positions takes %d MB, more than the %d MB an export writes: give a smaller --context", context, bytes>>20, maxTableBytes>>20)
		}
		return &arch{name: "gpt2", table: position.SinusoidalTable(context, cfg.DModel).Data().([]float32),
			notes: []string{fmt.Sprintf("the sinusoidal table is written for %d positions: llama.cpp cannot run this file past %d tokens (--context sets how many)", context, context)}}, nil
	}
	if why, ok := unsupported[cfg.Pos]; ok {
		return nil, fmt.Errorf("scheme %s has no counterpart in llama.cpp: %s", cfg.Pos, why)
	}
	return nil, fmt.Errorf("scheme %s has no counterpart in llama.cpp (only alibi, none, rope and sinusoidal do)", cfg.Pos)
}

// label names the model's variant with its extension.
func label(m *model.Model) string {
	if ext, f := m.Extension(); ext != nil {
		return fmt.Sprintf("%s+%s x%g", m.Config.Label(), ext.Name(), f)
	}
	return m.Config.Label()
}

// maxAlibiBias returns the max bias b for which llama.cpp's ALiBi slopes
// are the model's. llama.cpp gives head h of H (p the largest power of two
// at most H) the slope 2^(-b(h+1)/p) for h < p and 2^(-b(2(h-p)+1)/(2p))
// for the others, the paper's rule for any H; b is read off the first
// slope and every slope is checked against it, to a float32 rounding.
func maxAlibiBias(slopes []float32) (float32, error) {
	h := len(slopes)
	if h == 0 || !(slopes[0] > 0 && slopes[0] < 1) {
		return 0, fmt.Errorf("ALiBi slopes %v are not llama.cpp's for any max bias", slopes)
	}
	p := 1
	for p*2 <= h {
		p *= 2
	}
	// b is read off the first slope, itself rounded to float32: the bias to
	// four decimals (the paper's 8) is tried first, then b as read.
	read := -math.Log2(float64(slopes[0])) * float64(p)
	var err error
	for _, b := range []float32{float32(math.Round(read*1e4) / 1e4), float32(read)} {
		if err = checkSlopes(slopes, b, p); err == nil {
			return b, nil
		}
	}
	return 0, err
}

// checkSlopes checks that each slope is llama.cpp's for max bias b, to the
// float32 rounding of the model's slopes.
func checkSlopes(slopes []float32, b float32, p int) error {
	for i, s := range slopes {
		want := llamaSlope(b, i, p)
		if math.Abs(float64(s)-want) > 2e-7*want {
			return fmt.Errorf("ALiBi slopes %v are not llama.cpp's for any max bias (with %g, head %d's would be %.7g, not %.7g); "+
				"llama.cpp derives every slope from one max bias, so these cannot be exported", slopes, b, i, want, s)
		}
	}
	return nil
}

// llamaSlope is llama.cpp's slope of head h for max bias b, p heads the
// largest power of two at most the head count.
func llamaSlope(b float32, h, p int) float64 {
	if h < p {
		return math.Pow(2, -float64(b)*float64(h+1)/float64(p))
	}
	return math.Pow(2, -float64(b)*float64(2*(h-p)+1)/float64(2*p))
}

// rotary maps rope, with its extension, to gptneox: the whole head
// rotated in the half-split layout at the model's base; pi as linear
// scaling, ntk as the base it multiplies. Other extensions are refused.
func rotary(m *model.Model, ext position.Extension, factor float64) (*arch, error) {
	dh := m.Config.DHead()
	base := float64(layers.RopeBase)
	kv := []KV{{"rope.dimension_count", uint32(dh)}, {"use_parallel_residual", false}}
	note := fmt.Sprintf("rope as gptneox: the whole head (%d dimensions) rotated in the half-split layout, base 10000", dh)
	switch e := ext.(type) {
	case nil:
	case position.RopePI:
		kv = append(kv, KV{"rope.scaling.type", "linear"}, KV{"rope.scaling.factor", float32(factor)})
		note += fmt.Sprintf("; pi as linear rope scaling, factor %g", factor)
	case position.RopeNTK:
		d := float64(dh)
		base *= math.Pow(factor, d/(d-2))
		note += fmt.Sprintf("; ntk as the rotary base %g (10000 x %g^(%d/%d))", float32(base), factor, dh, dh-2)
	case position.RopeYaRN:
		return nil, fmt.Errorf("%s: this project's YaRN ramps linearly in each pair's rotations over the training length, as the paper writes it; "+
			"llama.cpp's ramps linearly in the pair's index between rounded bounds, which gives other frequencies", label(m))
	default:
		return nil, fmt.Errorf("%s: extension %s has no counterpart in llama.cpp (pi and ntk do)", label(m), e.Name())
	}
	return &arch{name: "gptneox", kv: append(kv, KV{"rope.freq_base", float32(base)}), notes: []string{note}}, nil
}
