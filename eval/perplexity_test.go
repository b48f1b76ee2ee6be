package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

func testModel(t *testing.T, pos string) *model.Model {
	t.Helper()
	m, err := model.New(model.Config{Vocab: 256, DModel: 16, NLayers: 2, NHeads: 2, DFF: 32, Pos: pos, TrainLen: 8, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	// Larger output weights than the initialisation, so that predictions
	// differ clearly between contexts.
	rng := rand.New(rand.NewPCG(1, 1))
	for _, name := range m.Weights.Names {
		for i, v := range m.Weights.Data(name) {
			m.Weights.Data(name)[i] = v + float32(rng.NormFloat64()*0.3)
		}
	}
	return m
}

func stream(n int) []uint32 {
	rng := rand.New(rand.NewPCG(2, 3))
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(byte(rng.IntN(256)))
	}
	return s
}

// A model whose logits are all equal predicts every byte with probability
// 1/256: perplexity exactly 256 at every length and protocol.
func TestUniformModelPerplexity256(t *testing.T) {
	m := testModel(t, model.PosALiBi)
	for i := range m.Weights.Data("head.weight") {
		m.Weights.Data("head.weight")[i] = 0
	}
	toks := stream(101)
	for _, o := range []Options{{Len: 8}, {Len: 16}, {Len: 7}, {Len: 8, Stride: 3}, {Len: 33, Stride: 33}} {
		r, err := Perplexity(m, toks, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.PPL-256) > 1e-9 || math.Abs(r.BitsPerByte-8) > 1e-12 {
			t.Errorf("%+v: ppl %.12g bits/byte %.12g, want 256 and 8", o, r.PPL, r.BitsPerByte)
		}
	}
}

// Both protocols score every predictable token once, whether or not the
// length divides the stream, up to the longest length that fits (n-1).
func TestTokenAccounting(t *testing.T) {
	m := testModel(t, model.PosNone)
	for _, n := range []int{65, 70, 9, 2} {
		toks := stream(n)
		for _, o := range []Options{{Len: 8}, {Len: 16}, {Len: 5, Stride: 2}, {Len: 8, Stride: 8}, {Len: n - 1}, {Len: n - 1, Stride: 1}} {
			if o.Len > n-1 {
				continue // refused: TestLengthMustFit
			}
			r, err := Perplexity(m, toks, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tokens != n-1 {
				t.Errorf("n=%d %+v: scored %d tokens, want %d", n, o, r.Tokens, n-1)
			}
		}
	}
	r, err := Perplexity(m, stream(65), Options{Len: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Windows != 8 {
		t.Errorf("64 targets in windows of 8: %d windows, want 8", r.Windows)
	}
	r, err = Perplexity(m, stream(70), Options{Len: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Windows != 9 { // 8 full windows and a tail of 5
		t.Errorf("69 targets in windows of 8: %d windows, want 9", r.Windows)
	}
}

// nll computes -log softmax(logits)[target] independently, in float64.
func nll(row []float32, target int) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return -(float64(row[target]) - mx - math.Log(s))
}

// logitsOf runs the model on one sequence and returns its logits.
func logitsOf(t *testing.T, m *model.Model, ids []int) []float32 {
	t.Helper()
	g, err := m.NewGraph(1, len(ids), false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(ids, nil); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), g.LogitsData()...)
}

// The harness equals a direct computation from the model's logits on the
// same windows, and its loss by position is the per-position mean.
func TestPerplexityMatchesDirectComputation(t *testing.T) {
	for _, pos := range []string{model.PosALiBi, model.PosSinusoidal} {
		m := testModel(t, pos)
		toks := stream(45) // 44 targets: 5 windows of 8 and a tail of 4
		r, err := Perplexity(m, toks, Options{Len: 8, BatchTokens: 16})
		if err != nil {
			t.Fatal(err)
		}
		var total float64
		posSum := make([]float64, 8)
		posN := make([]int, 8)
		for s := 0; s < 44; s += 8 {
			e := min(s+8, 44)
			lg := logitsOf(t, m, ints(toks[s:e]))
			for p := 0; p < e-s; p++ {
				x := nll(lg[p*256:(p+1)*256], int(toks[s+p+1]))
				total += x
				posSum[p] += x
				posN[p]++
			}
		}
		if want := math.Exp(total / 44); math.Abs(r.PPL-want) > 1e-6*want {
			t.Errorf("%s: harness ppl %.9g, direct %.9g", pos, r.PPL, want)
		}
		for p := range posSum {
			if want := posSum[p] / float64(posN[p]); math.Abs(r.PositionLoss[p]-want) > 1e-5 {
				t.Errorf("%s: position %d loss %.6g, want %.6g", pos, p, r.PositionLoss[p], want)
			}
		}
	}
}

// Sliding windows with stride 1 score each token with its full left context
// up to the window length.
func TestSlidingStride1IsFullContext(t *testing.T) {
	m := testModel(t, model.PosALiBi)
	const L = 6
	toks := stream(20)
	r, err := Perplexity(m, toks, Options{Len: L, Stride: 1})
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for target := 1; target < len(toks); target++ {
		ctx := toks[max(0, target-L):target]
		lg := logitsOf(t, m, ints(ctx))
		total += nll(lg[(len(ctx)-1)*256:], int(toks[target]))
	}
	if want := math.Exp(total / float64(len(toks)-1)); math.Abs(r.PPL-want) > 1e-6*want {
		t.Fatalf("sliding stride 1: ppl %.9g, full-context %.9g", r.PPL, want)
	}
	// And it differs from the non-overlapping protocol (more context).
	r2, err := Perplexity(m, toks, Options{Len: L})
	if err != nil {
		t.Fatal(err)
	}
	if r2.PPL == r.PPL {
		t.Fatal("sliding and non-overlapping protocols agree exactly; the test is not sensitive")
	}
}

// The sliding protocol, which runs windows that score fewer tokens than
// their length through a scoring graph in batches, equals running every
// window alone through a full graph (model.NewGraph, itself checked against
// a graph composed from plain Gorgonia ops in model's tests) and scoring its
// last Score tokens: for every scheme, strides 1 and 3, a tail window that
// scores fewer, batches of 3 windows and of 80 (more rows than the
// vocabulary: the graph reads its first layer from the vocabulary's table);
// every target scored exactly once.
func TestSlidingEqualsWindowByWindow(t *testing.T) {
	const targets = 80
	toks := stream(targets + 1)
	const L = 8
	for _, pos := range model.Schemes() {
		m := testModel(t, pos)
		for _, c := range []struct{ stride, batch int }{{1, 3}, {3, 3}, {1, 80}} {
			stride := c.stride
			t.Run(fmt.Sprintf("%s stride %d batch %d", pos, stride, c.batch), func(t *testing.T) {
				r, err := Perplexity(m, toks, Options{Len: L, Stride: stride, BatchTokens: c.batch * L})
				if err != nil {
					t.Fatal(err)
				}
				ws, err := data.SlidingWindows(len(toks), L, stride)
				if err != nil {
					t.Fatal(err)
				}
				var total float64
				posSum := make([]float64, L)
				posCount := make([]int, L)
				covered := map[int]int{}
				for _, w := range ws {
					lg := logitsOf(t, m, ints(toks[w.Start:w.Start+w.Len]))
					for p := w.Len - w.Score; p < w.Len; p++ {
						x := nll(lg[p*256:(p+1)*256], int(toks[w.Start+p+1]))
						total += x
						posSum[p] += x
						posCount[p]++
						covered[w.Start+p+1]++
					}
				}
				if r.Tokens != targets || len(covered) != targets {
					t.Fatalf("%d tokens scored, %d distinct targets; want %d and %d", r.Tokens, len(covered), targets, targets)
				}
				for target, n := range covered {
					if n != 1 || target < 1 || target > targets {
						t.Fatalf("target %d scored %d times", target, n)
					}
				}
				if want := total / targets; math.Abs(r.NatsPerToken-want) > 1e-6*want {
					t.Errorf("nats per token %.9g, window by window %.9g", r.NatsPerToken, want)
				}
				for p := range posSum {
					if posCount[p] == 0 {
						if !math.IsNaN(r.PositionLoss[p]) {
							t.Errorf("position %d: loss %v, no window scored it", p, r.PositionLoss[p])
						}
						continue
					}
					if want := posSum[p] / float64(posCount[p]); math.Abs(r.PositionLoss[p]-want) > 1e-5*want {
						t.Errorf("position %d: loss %.7g, window by window %.7g", p, r.PositionLoss[p], want)
					}
				}
			})
		}
	}
}

func TestPerplexityRejectsBadOptions(t *testing.T) {
	m := testModel(t, model.PosNone)
	for _, o := range []Options{{Len: 0}, {Len: 4, Stride: -1}, {Len: 4, Stride: 5}} {
		if _, err := Perplexity(m, stream(20), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// ints widens token ids to the ints a graph reads.
func ints(ids []uint32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
