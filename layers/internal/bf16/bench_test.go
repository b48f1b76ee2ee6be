package bf16

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/gemm"
)

// BenchmarkGemm times the three products of the tiny model's qkv layer (16
// x 128 rows of width 128 to 384) in bf16 on the path Gemm takes (named
// by Path: amx where the CPU grants the tiles), on AVX512_BF16's kernel
// beside it where the CPU has the tiles too, and in fp32 (gemm.Sgemm), one
// after the other for each shape, on every core; GFLOP/s counts 2mnk.
func BenchmarkGemm(b *testing.B) {
	for _, c := range []struct {
		name string
		s    shape
	}{
		{"forward", shape{false, false, 2048, 384, 128, 1, 0}}, // y = x W
		{"dx", shape{false, true, 2048, 128, 384, 1, 0}},       // dx = dy W^T
		{"dW", shape{true, false, 128, 384, 2048, 1, 0}},       // dW = x^T dy
	} {
		s := c.s
		r := rand.New(rand.NewPCG(1, 1))
		ar, ac, br, bc := s.stored()
		a, bm, cm := randMatrix(r, ar, ac), randMatrix(r, br, bc), make([]float32, s.m*s.n)
		threads := runtime.GOMAXPROCS(0)
		kinds := []string{"bf16-" + strings.ReplaceAll(Path(), " ", ""), "fp32"}
		if productsPath() == amx {
			kinds = append(kinds, "bf16-avx512_bf16")
		}
		for _, p := range kinds {
			b.Run(fmt.Sprintf("%s/%s", c.name, p), func(b *testing.B) {
				if p == "bf16-avx512_bf16" {
					defer usePaths(native, native)()
				}
				for range b.N {
					if p == "fp32" {
						gemm.Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, cm, s.n, threads)
					} else {
						Gemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, cm, s.n, threads)
					}
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkRoundSlice converts 64 Ki floats (256 KiB, in L2).
func BenchmarkRoundSlice(b *testing.B) {
	src, dst := randMatrix(rand.New(rand.NewPCG(2, 2)), 1<<16, 1), make([]uint16, 1<<16)
	b.SetBytes(4 << 16)
	for range b.N {
		RoundSlice(dst, src)
	}
}
