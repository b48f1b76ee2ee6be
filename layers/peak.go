package layers

import (
	"time"

	"github.com/alibi-go/alibi/layers/internal/bf16"
	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/parallel"
)

// FMAPeak measures, for about d, the floating-point throughput in GFLOP/s
// of independent fused multiply-adds on registers with the float32
// kernels' instruction set (the first part of Kernels), on as many
// goroutines as the kernels use: the most this machine can do on that path
// right now, the denominator of a training step's fraction of peak. On a
// shared or virtual machine it moves with the load of other programs, so
// set a step's GFLOP/s beside a peak measured just before or after it.
func FMAPeak(d time.Duration) float64 { return gemm.Peak(parallel.Workers(), d) }

// AMXPeak measures, for about d, the bfloat16 throughput in GFLOP/s of
// Intel AMX's tile unit (TDPBF16PS on tiles held in registers, four
// independent accumulators) on as many goroutines as the kernels use: the
// most bf16 products can do where they run on the tiles, the denominator
// of a bf16 step's fraction there. It returns 0 at once where BF16Path is
// not "amx".
func AMXPeak(d time.Duration) float64 {
	if BF16Path() != "amx" {
		return 0
	}
	return bf16.TilePeak(parallel.Workers(), d)
}
