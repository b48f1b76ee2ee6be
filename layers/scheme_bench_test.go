package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
	"math/rand/v2"
	"testing"
)

// Benchmarks of the position schemes in the tiled kernels at the model's
// shape (4 heads of 32, float32, batches of benchTokens tokens), each
// iteration building the scheme's kernel bias afresh, as a training step
// does after its parameters changed. FIRE runs with L = 512: at T = 4096
// seven rows in eight take its per-key path. Run with
//
//	go test ./layers -run XXX -bench Schemes -count 3

// benchSchemes are the schemes compared, with parameters for benchHeads.
func benchSchemes() []struct {
	name   string
	scheme position.BiasScheme
	params []float32
} {
	rng := rand.New(rand.NewPCG(3, 4))
	t5 := make([]float32, position.T5Buckets*benchHeads)
	for i := range t5 {
		t5[i] = float32(rng.NormFloat64())
	}
	return []struct {
		name   string
		scheme position.BiasScheme
		params []float32
	}{
		{"alibi", position.AlibiScheme{}, position.AlibiSlopes(benchHeads)},
		{"t5", position.T5Scheme{}, t5},
		{"kerple", position.KerpleScheme{}, position.KerpleInit(rng, benchHeads)},
		{"fire", position.FireScheme{}, position.FireScheme{}.Init(rng, benchHeads, 512)},
	}
}

func BenchmarkSchemesForward(b *testing.B) {
	for _, t := range []int{512, 4096} {
		fb := newFlashBench(benchCase(t))
		fc := fb.fc
		for _, s := range benchSchemes() {
			b.Run(fmt.Sprintf("T=%d/%s", t, s.name), func(b *testing.B) {
				var scratch any
				for b.Loop() {
					bias := s.scheme.Bias32(s.params, fc.heads, fc.kLen())
					flash.Forward(fb.p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, fb.lse, flash.Opts{Scratch: &scratch})
				}
				reportTokens(b, fc.nSeq*t)
			})
		}
	}
}

// The backward pass with the parameters' gradient (ALiBi has none).
func BenchmarkSchemesBackward(b *testing.B) {
	for _, t := range []int{512, 4096} {
		fb := newFlashBench(benchCase(t))
		fc := fb.fc
		for _, s := range benchSchemes() {
			b.Run(fmt.Sprintf("T=%d/%s", t, s.name), func(b *testing.B) {
				var scratch any
				bias := s.scheme.Bias32(s.params, fc.heads, fc.kLen())
				flash.Forward(fb.p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, fb.lse, flash.Opts{Scratch: &scratch})
				out := make([]float32, len(s.params))
				for b.Loop() {
					var biasGrad []float32
					if lb, ok := bias.(position.TrainableBias[float32]); ok && s.scheme.Trainable() {
						biasGrad = make([]float32, lb.GradLen())
					}
					flash.Backward(fb.p.seqs, fb.g.grads, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), bias, fb.lse, biasGrad, flash.Opts{Scratch: &scratch})
					if biasGrad != nil {
						s.scheme.ParamGrad32(s.params, biasGrad, out)
					}
				}
				reportTokens(b, fc.nSeq*t)
			})
		}
	}
}
