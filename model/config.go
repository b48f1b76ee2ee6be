package model

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/position"
	"strings"
)

// The names of the built-in position schemes (see position.Lookup).
const (
	PosALiBi      = "alibi"      // linear biases on attention scores, no embeddings
	PosSinusoidal = "sinusoidal" // sin/cos table added to the token embeddings
	PosNone       = "none"       // causal mask only (NoPE)
	PosRoPE       = "rope"       // rotary embedding of queries and keys
	PosT5         = "t5"         // T5's learned bucketed relative bias, shared by the layers
	PosKerple     = "kerple"     // KERPLE's learned logarithmic bias, per layer
	PosFire       = "fire"       // FIRE's learned function of normalised distance, per layer
)

// Schemes lists the names of every registered position scheme: the
// built-in ones, then those added with position.Register.
func Schemes() []string { return position.Names() }

// SchemesText lists the registered schemes' names for a message, the last
// two joined by conj: "alibi, sinusoidal, none, rope, t5, kerple or fire"
// for "or".
func SchemesText(conj string) string {
	names := Schemes()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Config is the shape of a model. Its YAML and JSON keys are the ones in
// configs/*.yaml under `model:`.
type Config struct {
	Vocab    int    `yaml:"vocab" json:"vocab"`
	DModel   int    `yaml:"d_model" json:"d_model"`
	NLayers  int    `yaml:"n_layers" json:"n_layers"`
	NHeads   int    `yaml:"n_heads" json:"n_heads"`
	DFF      int    `yaml:"d_ff" json:"d_ff"`
	Pos      string `yaml:"pos" json:"pos"`
	TrainLen int    `yaml:"train_len" json:"train_len"`
	Seed     uint64 `yaml:"seed" json:"seed"`
	// LogitScale is "log-length" for log-length scaling of every layer's
	// attention logits (layers.LogLengthScale, with a learned scale per
	// head and layer), or "none" (or empty, the default): the model
	// without it, bit for bit.
	LogitScale string `yaml:"logit_scale,omitempty" json:"logit_scale,omitempty"`
	// RandomPositions > 0 trains with randomized positional encodings
	// (position.DrawPositions): each step's windows stand at a sorted draw
	// of train_len distinct positions from [0, RandomPositions), which
	// should be at least the longest length the model will be evaluated
	// at; evaluation and generation use the usual positions. For schemes
	// that take positions: a table, a rotation or a bias (not none, fox,
	// stick-breaking or pope). 0: off.
	RandomPositions int `yaml:"random_positions,omitempty" json:"random_positions,omitempty"`
	// DropeStep > 0 is DroPE (Gelberg, Eguchi, Akiba and Cetin 2025, arXiv
	// 2512.12167) for a rotary model: after this many training steps (less
	// than train.steps) the rotation is dropped, the steps from
	// DropeStep+1 on recalibrate the model without positions, and it is
	// evaluated without them. 0: off.
	DropeStep int `yaml:"drope_step,omitempty" json:"drope_step,omitempty"`
}

// LogitScale values.
const (
	LogitScaleNone      = "none"
	LogitScaleLogLength = "log-length"
)

// Label suffixes of the training variants (see Label).
const (
	LabelRandomized = "randomized"
	LabelDrope      = "drope"
)

// Label names the model's attention variant for reports: the position
// scheme, followed by "+log-length" with log-length scaling, "+randomized"
// with randomized positions and "+drope" with DroPE, in that order
// ("alibi", "rope+log-length", "rope+drope").
func (c Config) Label() string {
	l := c.Pos
	if c.logLength() {
		l += "+" + LogitScaleLogLength
	}
	if c.RandomPositions > 0 {
		l += "+" + LabelRandomized
	}
	if c.DropeStep > 0 {
		l += "+" + LabelDrope
	}
	return l
}

// ApplyLabel sets the config from a Label: the scheme, log-length scaling
// for "+log-length", randomized positions for "+randomized" (from
// [0, 256 train_len), the longest length the zoo scores, unless the config
// sets random_positions) and DroPE for "+drope" after steps - steps/20 of
// a run of steps (the last 5% recalibrate; at least one step; unless the
// config sets drope_step). Without a suffix the config's own setting stays.
func (c *Config) ApplyLabel(label string, steps int) {
	for {
		switch {
		case strings.HasSuffix(label, "+"+LogitScaleLogLength):
			label, c.LogitScale = strings.TrimSuffix(label, "+"+LogitScaleLogLength), LogitScaleLogLength
		case strings.HasSuffix(label, "+"+LabelRandomized):
			label = strings.TrimSuffix(label, "+"+LabelRandomized)
			if c.RandomPositions == 0 {
				c.RandomPositions = 256 * c.TrainLen
			}
		case strings.HasSuffix(label, "+"+LabelDrope):
			label = strings.TrimSuffix(label, "+"+LabelDrope)
			if c.DropeStep == 0 {
				c.DropeStep = max(1, min(steps-1, steps-steps/20))
			}
		default:
			c.Pos = label
			return
		}
	}
}

// logLength reports whether the model scales its logits by log-length.
func (c Config) logLength() bool { return c.LogitScale == LogitScaleLogLength }

// Validate reports the first invalid field by its config key.
func (c Config) Validate() error {
	for _, f := range []struct {
		key string
		v   int
	}{{"vocab", c.Vocab}, {"d_model", c.DModel}, {"n_layers", c.NLayers}, {"n_heads", c.NHeads}, {"d_ff", c.DFF}, {"train_len", c.TrainLen}} {
		if f.v == 0 {
			return fmt.Errorf("model.%s is required: a positive integer (it is missing or 0)", f.key)
		}
		if f.v < 0 {
			return fmt.Errorf("model.%s must be positive, got %d", f.key, f.v)
		}
	}
	if c.DModel%c.NHeads != 0 {
		return fmt.Errorf("model.d_model (%d) must be divisible by model.n_heads (%d)", c.DModel, c.NHeads)
	}
	switch c.LogitScale {
	case "", LogitScaleNone, LogitScaleLogLength:
	default:
		return fmt.Errorf("model.logit_scale: %q is not none or log-length", c.LogitScale)
	}
	s, err := position.Lookup(c.Pos)
	if err != nil {
		return fmt.Errorf("model.pos: %w", err)
	}
	if err := s.Validate(c.shape()); err != nil {
		return fmt.Errorf("model.pos %s: %w", c.Pos, err)
	}
	if c.DropeStep < 0 || c.RandomPositions < 0 {
		return fmt.Errorf("model.drope_step (%d) and model.random_positions (%d) must not be negative", c.DropeStep, c.RandomPositions)
	}
	if r := c.RandomPositions; r != 0 {
		bias, _ := s.AttentionBias(c.shape())
		_, polar := s.(position.PolarScheme)
		switch {
		case r < c.TrainLen:
			return fmt.Errorf("model.random_positions (%d) must be at least model.train_len (%d): the positions of a window are drawn from [0, random_positions)", r, c.TrainLen)
		case polar || (s.EmbeddingTable() == nil && !s.Rotary() && bias == nil):
			return fmt.Errorf("model.random_positions: the scheme %s takes no positions to draw (randomized positions are for sinusoidal, rope, alibi, t5, kerple and fire)", c.Pos)
		}
	}
	if c.DropeStep > 0 && !s.Rotary() {
		return fmt.Errorf("model.drope_step: DroPE drops a rotation, and the scheme %s has none (use pos: rope)", c.Pos)
	}
	return nil
}

// Scheme returns the position scheme the config names.
func (c Config) Scheme() (position.Scheme, error) {
	s, err := position.Lookup(c.Pos)
	if err != nil {
		return nil, fmt.Errorf("model.pos: %w", err)
	}
	return s, nil
}

// mustScheme is Scheme for a config that Validate accepted.
func (c Config) mustScheme() position.Scheme {
	s, err := c.Scheme()
	if err != nil {
		panic(fmt.Sprintf("model: %v (validate the config first)", err))
	}
	return s
}

// shape is what the position scheme knows of the model.
func (c Config) shape() position.ModelShape {
	return position.ModelShape{DModel: c.DModel, Layers: c.NLayers, Heads: c.NHeads, TrainLen: c.TrainLen}
}

// DHead is the width of one attention head.
func (c Config) DHead() int { return c.DModel / c.NHeads }
