package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers"
)

// meanNLL64 is the mean negative log-likelihood of targets under the rows
// of logits, computed independently in float64 with a stable log-sum-exp.
func meanNLL64(logits []float32, v int, targets []int) float64 {
	var total float64
	for i, t := range targets {
		row := logits[i*v : (i+1)*v]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, float64(x))
		}
		var s float64
		for _, x := range row {
			s += math.Exp(float64(x) - mx)
		}
		total += mx + math.Log(s) - float64(row[t])
	}
	return total / float64(len(targets))
}

// Every accessor the Graph doc names works on every graph it names: before
// any Execute they return NaN or nil; after one, a graph without gradients
// gives the loss of a training graph on the same ids and targets bit for
// bit, which is the float32 mean of layers.TokenNLL and agrees with an
// independent float64 computation from the logits; GradData is nil without
// gradients and the gradient with them.
func TestGraphAccessorsWithAndWithoutGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, pos := range []string{PosALiBi, PosSinusoidal, PosT5} {
		t.Run(pos, func(t *testing.T) {
			m := decodeModel(t, pos)
			const batch, length = 2, 12
			infer, err := m.NewGraph(batch, length, false)
			if err != nil {
				t.Fatal(err)
			}
			defer infer.Close()
			train, err := m.NewGraph(batch, length, true)
			if err != nil {
				t.Fatal(err)
			}
			defer train.Close()
			for name, g := range map[string]*Graph{"without gradients": infer, "training": train} {
				if l := g.LossValue(); !math.IsNaN(l) {
					t.Errorf("%s graph: LossValue before Execute = %g, want NaN", name, l)
				}
				if g.LogitsData() != nil || g.GradData(0) != nil {
					t.Errorf("%s graph: LogitsData or GradData before Execute is not nil", name)
				}
			}
			for run := 0; run < 2; run++ {
				ids, tg := randomTokens(rng, batch*length, 256), randomTokens(rng, batch*length, 256)
				if err := infer.Execute(ids, tg); err != nil {
					t.Fatal(err)
				}
				if err := train.Execute(ids, tg); err != nil {
					t.Fatal(err)
				}
				got, want := infer.LossValue(), train.LossValue()
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("run %d: loss %v without gradients, %v in the training graph", run, got, want)
				}
				logits := infer.LogitsData()
				if len(logits) != batch*length*m.Config.Vocab {
					t.Fatalf("run %d: %d logits, want %d", run, len(logits), batch*length*m.Config.Vocab)
				}
				nll := make([]float64, len(tg))
				layers.TokenNLL(logits, m.Config.Vocab, tg, nll)
				var s float64
				for _, x := range nll {
					s += x
				}
				if mean := float64(float32(s / float64(len(nll)))); math.Float64bits(got) != math.Float64bits(mean) {
					t.Fatalf("run %d: loss %v, float32 mean of TokenNLL %v", run, got, mean)
				}
				if ref := meanNLL64(logits, m.Config.Vocab, tg); math.Abs(got-ref) > 1e-6*ref || got < 1 {
					t.Fatalf("run %d: loss %v, float64 reference %v", run, got, ref)
				}
				if infer.GradData(0) != nil {
					t.Fatalf("run %d: GradData of a graph without gradients is not nil", run)
				}
				for i, name := range m.Weights.Names {
					gd := train.GradData(i)
					if len(gd) != len(m.Weights.Data(name)) {
						t.Fatalf("run %d: gradient of %s has %d values for %d weights", run, name, len(gd), len(m.Weights.Data(name)))
					}
				}
				if nonzero(train.GradData(0)) == 0 {
					t.Fatalf("run %d: the gradient of %s is all zero", run, m.Weights.Names[0])
				}

				// Without targets, the logits are the same and there is no loss.
				if err := infer.Execute(ids, nil); err != nil {
					t.Fatal(err)
				}
				if l := infer.LossValue(); !math.IsNaN(l) {
					t.Fatalf("run %d: LossValue after Execute without targets = %g, want NaN", run, l)
				}
				again := infer.LogitsData()
				for i := range again {
					if math.Float32bits(again[i]) != math.Float32bits(train.LogitsData()[i]) {
						t.Fatalf("run %d: logit %d = %v without targets, %v in the training graph", run, i, again[i], train.LogitsData()[i])
					}
				}
			}
		})
	}
}

func nonzero(x []float32) int {
	n := 0
	for _, v := range x {
		if v != 0 {
			n++
		}
	}
	return n
}

// A decoding graph scores the targets it is given: prefilling a sequence
// from an empty cache gives the loss of an ordinary graph on it.
func TestDecodeGraphLossValue(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	rng := rand.New(rand.NewPCG(43, 44))
	ids, tg := randomTokens(rng, 10, 256), randomTokens(rng, 10, 256)
	g, err := m.NewDecodeGraph(m.NewCache(1), len(ids))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(ids, tg); err != nil {
		t.Fatal(err)
	}
	full, err := m.NewGraph(1, len(ids), false)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if err := full.Execute(ids, tg); err != nil {
		t.Fatal(err)
	}
	got, want := g.LossValue(), full.LossValue()
	if math.IsNaN(got) || math.Abs(got-want) > 1e-5*want {
		t.Fatalf("decoding graph loss %v, ordinary graph %v", got, want)
	}
	if ref := meanNLL64(g.LogitsData(), m.Config.Vocab, tg); math.Abs(got-ref) > 1e-6*ref {
		t.Fatalf("decoding graph loss %v, float64 reference from its logits %v", got, ref)
	}
}

// A graph without gradients refuses targets it cannot score, and then
// reports no results rather than those of an earlier run.
func TestExecuteChecksTargetsWithoutGradients(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	g, err := m.NewGraph(1, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ids := []int{1, 2, 3, 4}
	if err := g.Execute(ids, ids); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		targets []int
		want    string
	}{{[]int{1, 2, 3}, "3 targets, want 4"}, {[]int{1, 2, 256, 4}, "target 256 at position 2 is outside the vocabulary of 256"}, {[]int{-1, 2, 3, 4}, "target -1"}} {
		err := g.Execute(ids, tc.targets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("targets %v: error %v, want one saying %q", tc.targets, err, tc.want)
		}
		if !math.IsNaN(g.LossValue()) || g.LogitsData() != nil {
			t.Errorf("targets %v: results of the earlier run still reported after the failed one", tc.targets)
		}
	}
}
