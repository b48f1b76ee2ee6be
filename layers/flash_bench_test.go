package layers

import (
	"fmt"
	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/position"
	"math/rand/v2"
	"testing"
)

// Benchmarks of the tiled attention kernels against the materialised ones
// (attnForward, attnBackward) at the model's shape: 4 heads of 32, float32,
// batches of benchTokens tokens where they fit. Run with
//
//	go test ./layers -run XXX -bench Flash -count 3
//
// Sub-benchmarks of one length alternate between the two kernels.

const (
	benchTokens = 4096
	benchHeads  = 4
	benchDHead  = 32
)

// benchCase returns the call shape for length t: batch max(1, 4096/t).
func benchCase(t int) flashCase {
	return flashCase{nSeq: max(1, benchTokens/t), qLen: t, heads: benchHeads, dHead: benchDHead}
}

// reportTokens reports the sequence positions processed per second.
func reportTokens(b *testing.B, tokens int) {
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// flashBench holds one problem for both kernels: packed qkv, the ALiBi bias
// materialised (for attnForward) and as slopes (for the tiled kernel).
type flashBench struct {
	fc    flashCase
	p     *flashProblem[float32]
	g     *dGradients[float32]
	alibi []float32
	bias  position.KernelBias[float32]
	lse   []float32
}

func newFlashBench(fc flashCase) *flashBench {
	rng := rand.New(rand.NewPCG(1, 2))
	p := newFlashProblem[float32](rng, fc, true)
	return &flashBench{fc: fc, p: p, g: newGradients(rng, p),
		bias: alibiKernelBias[float32](position.AlibiSlopes(fc.heads), fc.kLen()), lse: make([]float32, fc.lseLen())}
}

// materialisedBias builds the (H, T, T) ALiBi bias on first use.
func (fb *flashBench) materialisedBias() []float32 {
	if fb.alibi == nil {
		fb.alibi = position.AlibiBias(position.AlibiSlopes(fb.fc.heads), fb.fc.qLen, fb.fc.qLen, 0, true).Data().([]float32)
	}
	return fb.alibi
}

func (fb *flashBench) runForward(opt flash.Opts) {
	fc := fb.fc
	flash.Forward(fb.p.seqs, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), position.KernelBias[float32](fb.bias), fb.lse, opt)
}

func (fb *flashBench) runBackward(opt flash.Opts) {
	fc := fb.fc
	flash.Backward(fb.p.seqs, fb.g.grads, fc.qLen, fc.heads, fc.dHead, float32(fc.scale()), position.KernelBias[float32](fb.bias), fb.lse, nil, opt)
}

func BenchmarkFlashForward(b *testing.B) {
	for _, t := range []int{128, 512, 2048, 8192} {
		fb := newFlashBench(benchCase(t))
		tokens := fb.fc.nSeq * t
		b.Run(fmt.Sprintf("T=%d/flash", t), func(b *testing.B) {
			var cache any
			for b.Loop() {
				fb.runForward(flash.Opts{Scratch: &cache})
			}
			reportTokens(b, tokens)
		})
		b.Run(fmt.Sprintf("T=%d/materialised", t), func(b *testing.B) {
			bias, dm := fb.materialisedBias(), fb.fc.attnDims(benchHeads)
			var cache any
			for b.Loop() {
				attnForward(dm, fb.p.qkv, bias, fb.p.o, nil, &cache)
			}
			reportTokens(b, tokens)
		})
		fb.alibi = nil
	}
}

// BenchmarkFlashBackward times the backward pass alone (the materialised
// one reads the probabilities kept by its forward pass, the tiled one
// recomputes them) and a training step, forward with what the backward pass
// needs plus backward.
func BenchmarkFlashBackward(b *testing.B) {
	for _, fc := range []flashCase{
		{nSeq: 16, qLen: 128, heads: benchHeads, dHead: benchDHead},
		{nSeq: 8, qLen: 512, heads: benchHeads, dHead: benchDHead},
		{nSeq: 4, qLen: 1024, heads: benchHeads, dHead: benchDHead},
	} {
		fb := newFlashBench(fc)
		tokens := fc.nSeq * fc.qLen
		dm := fc.attnDims(benchHeads)
		probs := make([]float32, fc.nSeq*fc.heads*fc.qLen*fc.qLen)
		dqkv := make([]float32, len(fb.p.qkv))
		var cache, mcache any
		opt := flash.Opts{Scratch: &cache}
		name := fmt.Sprintf("T=%d,batch=%d", fc.qLen, fc.nSeq)
		b.Run(name+"/backward/flash", func(b *testing.B) {
			fb.runForward(opt)
			for b.Loop() {
				fb.runBackward(opt)
			}
			reportTokens(b, tokens)
		})
		b.Run(name+"/backward/materialised", func(b *testing.B) {
			attnForward(dm, fb.p.qkv, fb.materialisedBias(), fb.p.o, probs, nil)
			scratch := workerScratch[float32](&mcache, fc.qLen*fc.qLen)
			for b.Loop() {
				attnBackward(dm, fb.p.qkv, probs, fb.g.do, dqkv, scratch)
			}
			reportTokens(b, tokens)
		})
		b.Run(name+"/step/flash", func(b *testing.B) {
			for b.Loop() {
				fb.runForward(opt)
				fb.runBackward(opt)
			}
			reportTokens(b, tokens)
		})
		b.Run(name+"/step/materialised", func(b *testing.B) {
			bias := fb.materialisedBias()
			scratch := workerScratch[float32](&mcache, fc.qLen*fc.qLen)
			for b.Loop() {
				attnForward(dm, fb.p.qkv, bias, fb.p.o, probs, nil)
				attnBackward(dm, fb.p.qkv, probs, fb.g.do, dqkv, scratch)
			}
			reportTokens(b, tokens)
		})
	}
}

// BenchmarkFlashDecode times one generated token per sequence against a
// cache: qLen 1 at offset kLen-1, for a batch of 1 and 8 sequences, without
// lse (no backward pass follows).
func BenchmarkFlashDecode(b *testing.B) {
	for _, kLen := range []int{128, 1024, 8192} {
		for _, batch := range []int{1, 8} {
			fc := flashCase{nSeq: batch, qLen: 1, offset: kLen - 1, heads: benchHeads, dHead: benchDHead}
			p := newFlashProblem[float32](rand.New(rand.NewPCG(3, 4)), fc, false)
			bias := alibiKernelBias[float32](position.AlibiSlopes(fc.heads), kLen)
			b.Run(fmt.Sprintf("kLen=%d,batch=%d", kLen, batch), func(b *testing.B) {
				var cache any
				for b.Loop() {
					flash.Forward(p.seqs, 1, fc.heads, fc.dHead, float32(fc.scale()), bias, nil, flash.Opts{Scratch: &cache})
				}
				reportTokens(b, batch)
			})
		}
	}
}

// BenchmarkFlashTileSizes compares tile sizes, to re-tune flash.Tiles (the
// backward pass only up to T = 2048).
func BenchmarkFlashTileSizes(b *testing.B) {
	for _, t := range []int{128, 512, 2048, 8192} {
		fb := newFlashBench(benchCase(t))
		tokens := fb.fc.nSeq * t
		for _, bq := range []int{32, 64, 128} {
			for _, bk := range []int{64, 128, 256, 512, 1024, 2048} {
				if bk > t || bq > t {
					continue
				}
				var cache any
				opt := flash.Opts{BlockQ: bq, BlockK: bk, Scratch: &cache}
				b.Run(fmt.Sprintf("T=%d/bq=%d,bk=%d/forward", t, bq, bk), func(b *testing.B) {
					for b.Loop() {
						fb.runForward(opt)
					}
					reportTokens(b, tokens)
				})
				if t > 2048 {
					continue
				}
				b.Run(fmt.Sprintf("T=%d/bq=%d,bk=%d/backward", t, bq, bk), func(b *testing.B) {
					fb.runForward(opt)
					for b.Loop() {
						fb.runBackward(opt)
					}
					reportTokens(b, tokens)
				})
			}
		}
	}
}
