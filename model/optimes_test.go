package model

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TimeOps times every op of a training graph by kind: the forward and
// backward ops of each layer appear, each with some time, together no more
// than the runs' wall time; with nil, timing stops.
func TestTimeOps(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	const batch, length = 2, 16
	gr, err := m.NewGraph(batch, length, true)
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	ids, tg := randomTokens(rng, batch*length, 256), randomTokens(rng, batch*length, 256)
	times := OpTimes{}
	gr.TimeOps(times)
	start := time.Now()
	for range 3 {
		if err := gr.Execute(ids, tg); err != nil {
			t.Fatal(err)
		}
	}
	wall := time.Since(start)
	var sum time.Duration
	var kinds []string
	for k, d := range times {
		if d <= 0 {
			t.Errorf("%s: %v", k, d)
		}
		sum += d
		kinds = append(kinds, k)
	}
	for _, want := range []string{"Embedding", "LayerNorm", "Linear", "Attention", "MLP", "CrossEntropy",
		"CrossEntropyGrad", "MLPGrad", "AttentionGrad", "LinearGrad", "LayerNormGrad", "EmbeddingGrad", "Add"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no time for %s; kinds: %v", want, kinds)
		}
	}
	if sum > wall {
		t.Errorf("ops took %v in all, more than the runs' %v", sum, wall)
	}
	gr.TimeOps(nil)
	before := maps.Clone(times)
	if err := gr.Execute(ids, tg); err != nil {
		t.Fatal(err)
	}
	for k, d := range times {
		if before[k] != d {
			t.Errorf("%s changed after TimeOps(nil): %v, was %v", k, d, before[k])
		}
	}
}
