package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
)

// addOnly hides a bias's AddMax: the kernel sees a plain flash.Bias and
// takes the row maximum in a pass of its own.
type addOnly[T float] struct{ b position.KernelBias[T] }

func (a addOnly[T]) Add(h, pos, j0 int, row []T) { a.b.Add(h, pos, j0, row) }

// countedMax is a flash.MaxBias that counts its AddMax calls.
type countedMax[T float] struct {
	flash.MaxBias[T]
	calls *atomic.Int64
}

func (c countedMax[T]) AddMax(h, pos, j0 int, row []T) T {
	c.calls.Add(1)
	return c.MaxBias.AddMax(h, pos, j0, row)
}

// TestFlashForwardMaxBias checks that the forward pass, given a bias that
// returns each biased row's maximum (position's distance tables), uses it
// and gives the bits of the same bias without it: outputs and log-sum-exps,
// across tile boundaries (running maxima rescaled) and offsets.
func TestFlashForwardMaxBias(t *testing.T) {
	testFlashForwardMaxBias[float32](t)
	testFlashForwardMaxBias[float64](t)
}

func testFlashForwardMaxBias[T float](t *testing.T) {
	cases := []flashCase{
		{nSeq: 2, qLen: 37, heads: 4, dHead: 8},
		{nSeq: 1, qLen: 5, offset: 90, heads: 2, dHead: 16},
	}
	for _, fc := range cases {
		for _, opt := range flashTestTiles {
			name := fmt.Sprintf("%T/%+v/%s", T(0), fc, tileName(opt))
			bias := kernelBias[T](alibiSlopes, fc)
			mb, ok := any(bias).(flash.MaxBias[T])
			if !ok {
				t.Fatalf("%s: the ALiBi distance tables are not a flash.MaxBias", name)
			}
			var calls atomic.Int64
			run := func(b flash.Bias[T]) ([]T, []T) {
				p := newFlashProblem[T](rand.New(rand.NewPCG(7, 8)), fc, false)
				lse := make([]T, fc.lseLen())
				flash.Forward(p.seqs, fc.qLen, fc.heads, fc.dHead, T(fc.scale()), b, lse, opt)
				return p.o, lse
			}
			oMax, lseMax := run(countedMax[T]{mb, &calls})
			oAdd, lseAdd := run(addOnly[T]{bias})
			if calls.Load() == 0 {
				t.Errorf("%s: AddMax was never called", name)
			}
			for _, c := range []struct {
				what     string
				got, ref []T
			}{{"output", oMax, oAdd}, {"lse", lseMax, lseAdd}} {
				for i := range c.ref {
					if math.Float64bits(float64(c.got[i])) != math.Float64bits(float64(c.ref[i])) && !(c.got[i] != c.got[i] && c.ref[i] != c.ref[i]) {
						t.Errorf("%s: %s[%d] = %v with AddMax, %v without", name, c.what, i, c.got[i], c.ref[i])
						break
					}
				}
			}
		}
	}
}
