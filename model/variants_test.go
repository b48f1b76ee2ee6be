package model

import (
	"strings"
	"testing"
)

// Labels name the training variants and ApplyLabel reads them back; the
// config refuses a variant its scheme cannot take, saying why.
func TestVariantLabels(t *testing.T) {
	for _, tc := range []struct {
		label          string
		random, dropAt int
		logLength      bool
	}{
		{"rope", 0, 0, false},
		{"rope+randomized", 256 * 16, 0, false},
		{"alibi+log-length+randomized", 256 * 16, 0, true},
		{"rope+drope", 0, 1900, false},
		{"rope+randomized+drope", 256 * 16, 1900, false},
	} {
		c := Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, TrainLen: 16}
		c.ApplyLabel(tc.label, 2000)
		if c.RandomPositions != tc.random || c.DropeStep != tc.dropAt || c.logLength() != tc.logLength || c.Label() != tc.label {
			t.Errorf("%s: random_positions %d, drope_step %d, log-length %v, label %s", tc.label, c.RandomPositions, c.DropeStep, c.logLength(), c.Label())
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tc.label, err)
		}
	}
	for _, tc := range []struct {
		pos            string
		random, dropAt int
		want           string
	}{
		{"none", 64, 0, "takes no positions to draw"},
		{"stick-breaking", 64, 0, "takes no positions to draw"},
		{"pope", 64, 0, "takes no positions to draw"},
		{"rope", 8, 0, "must be at least model.train_len"},
		{"alibi", 0, 10, "DroPE drops a rotation"},
		{"rope", 0, -1, "must not be negative"},
	} {
		c := Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, TrainLen: 16, Pos: tc.pos, RandomPositions: tc.random, DropeStep: tc.dropAt}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s random %d drope %d: %v, want %q", tc.pos, tc.random, tc.dropAt, err, tc.want)
		}
	}
}

// A model whose rotation DroPE dropped has nothing to extend.
func TestDroppedModelRefusesExtensions(t *testing.T) {
	c := Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, TrainLen: 16, Pos: PosRoPE, DropeStep: 5}
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend("pi", 2); err != nil {
		t.Fatalf("before the drop: %v", err)
	}
	m.DropPositions()
	if err := m.Extend("ntk", 2); err == nil || !strings.Contains(err.Error(), "DroPE dropped") {
		t.Fatalf("after the drop: %v", err)
	}
}
