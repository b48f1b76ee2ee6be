package train

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// resumedEqualsWhole trains c uninterrupted and, in another directory,
// stopped after its first step and resumed, and fails unless both end with
// the same weights and losses; it returns the uninterrupted run's config.
func resumedEqualsWhole(t *testing.T, c func() Config) Config {
	t.Helper()
	whole, split := c(), c()
	if _, err := Train(context.Background(), whole, Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, split, Options{}); err == nil || !strings.Contains(err.Error(), "interrupted at step 1") {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := Train(context.Background(), split, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(weightsOf(t, whole.Out), weightsOf(t, split.Out)) {
		t.Fatal("the resumed run ended with other weights")
	}
	a, b := readMetrics(t, whole.Out), readMetrics(t, split.Out)
	for i := range a {
		if a[i]["loss"] != b[i]["loss"] {
			t.Fatalf("metrics line %d: %v uninterrupted, %v resumed", i, a[i], b[i])
		}
	}
	return whole
}

// Randomized positions: with M = train_len the drawn positions are the
// usual ones and the run is the plain run, bit for bit; with a larger M a
// resumed run draws what the uninterrupted one drew, and the run differs
// from the plain one, for a table, a rotation and a bias.
func TestRandomPositions(t *testing.T) {
	for _, pos := range []string{model.PosSinusoidal, model.PosRoPE, model.PosALiBi} {
		plain := microConfig(t, pos, 12)
		if _, err := Train(context.Background(), plain, Options{}); err != nil {
			t.Fatal(err)
		}
		atL := microConfig(t, pos, 12)
		atL.Model.RandomPositions = atL.Model.TrainLen
		if _, err := Train(context.Background(), atL, Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(weightsOf(t, plain.Out), weightsOf(t, atL.Out)) {
			t.Fatalf("%s: random_positions = train_len trained other weights than the plain run", pos)
		}
		drawn := resumedEqualsWhole(t, func() Config {
			c := microConfig(t, pos, 12)
			c.Model.RandomPositions = 500
			return c
		})
		if bytes.Equal(weightsOf(t, plain.Out), weightsOf(t, drawn.Out)) {
			t.Fatalf("%s: random_positions 500 trained the plain run's weights", pos)
		}
	}
}

// The positions of successive steps differ, and each step's are a function
// of the seed and the step.
func TestDrawnPositionsPerStep(t *testing.T) {
	a, b := DrawnPositions(3, 0, 16, 1000), DrawnPositions(3, 1, 16, 1000)
	if slices.Equal(a, b) || !slices.Equal(a, DrawnPositions(3, 0, 16, 1000)) || slices.Equal(a, DrawnPositions(4, 0, 16, 1000)) {
		t.Fatalf("step 0: %v, step 1: %v", a, b)
	}
}

// DroPE: the run drops the rotation at its step, resumed before or after
// it ends as the uninterrupted run, its checkpoints say so, and the model
// they load rotates nothing; the run differs from plain rope.
func TestDrope(t *testing.T) {
	plain := microConfig(t, model.PosRoPE, 12)
	if _, err := Train(context.Background(), plain, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, 6} { // resumed at step 1: after the drop, before it
		d := resumedEqualsWhole(t, func() Config {
			c := microConfig(t, model.PosRoPE, 12)
			c.Model.DropeStep = at
			return c
		})
		if bytes.Equal(weightsOf(t, plain.Out), weightsOf(t, d.Out)) {
			t.Fatalf("drope_step %d trained the plain rope run's weights", at)
		}
		c, _, err := model.LatestCheckpoint(d.Out, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.Model()
		if err != nil {
			t.Fatal(err)
		}
		if c.Meta[model.MetaPositionsDropped] != "true" || !m.PositionsDropped() {
			t.Fatalf("drope_step %d: the last checkpoint says %q", at, c.Meta[model.MetaPositionsDropped])
		}
	}
}
