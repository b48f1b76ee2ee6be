package position_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sync"

	"gorgonia.org/tensor"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/train"
)

// logDistance is a position scheme of its own: head h of every layer adds
// -m_h·ln(1 + i - j) to the score of query i on key j, a logarithmic
// penalty with fixed slopes m_h = 2^-(h+1), which the checkpoint stores as
// the buffer "buffers.logdist_slopes". Embedding NoPosition answers "none"
// to what the scheme does not override: no parameters, no embedding table,
// no rotation.
type logDistance struct{ position.NoPosition }

func (logDistance) Name() string { return "logdist" }

// Buffer is the scheme's constant tensor: one slope per head.
func (logDistance) Buffer(s position.ModelShape) (string, []float32) {
	slopes := make([]float32, s.Heads)
	for h := range slopes {
		slopes[h] = float32(math.Ldexp(1, -(h + 1)))
	}
	return "logdist_slopes", slopes
}

// AttentionBias names the kernel bias and the tensor it reads: the buffer.
func (logDistance) AttentionBias(position.ModelShape) (position.BiasScheme, string) {
	return logDistanceKernel{}, "logdist_slopes"
}

// logDistanceKernel turns the slopes into the bias the attention kernel adds.
type logDistanceKernel struct{}

func (logDistanceKernel) Name() string    { return "logdist" }
func (logDistanceKernel) Trainable() bool { return false }

func (logDistanceKernel) CheckParams(p tensor.Shape, call position.BiasCall) error {
	if len(p) != 1 || p[0] != call.Heads {
		return fmt.Errorf("logdist slopes of shape %v, want (%d)", p, call.Heads)
	}
	return nil
}

// Bias32 and Bias64 copy the slopes: the kernel bias must not keep params.
func (logDistanceKernel) Bias32(p []float32, _, _ int) position.KernelBias[float32] {
	return logBias[float32](append([]float32(nil), p...))
}

func (logDistanceKernel) Bias64(p []float64, _, _ int) position.KernelBias[float64] {
	return logBias[float64](append([]float64(nil), p...))
}

// The slopes are constants: no gradient to map.
func (logDistanceKernel) ParamGrad32(_, _, _ []float32) {}
func (logDistanceKernel) ParamGrad64(_, _, _ []float64) {}

// logBias is the kernel bias: the slopes, one per head.
type logBias[T position.Float] []T

// Add adds head h's bias for the query at position pos to the scores of
// keys j0, j0+1, ... (all at or before pos).
func (m logBias[T]) Add(h, pos, j0 int, row []T) {
	for k := range row {
		row[k] -= m[h] * T(math.Log1p(float64(pos-j0-k)))
	}
}

// registerLogDistance registers the scheme once per process.
var registerLogDistance = sync.OnceValue(func() error { return position.Register(logDistance{}) })

// Add a position scheme from outside the module, then train a model with it
// and score the model past its training length, as with a built-in scheme:
// the config names it by its registry name, and the checkpoint that
// eval.OpenRun loads names it too. The scheme here is a fixed logarithmic
// distance penalty (see logDistance); a learned one would also return its
// tensors from SharedParams or LayerParams, name one in AttentionBias, and
// return a position.TrainableBias whose gradient ParamGrad32 and ParamGrad64
// map to the parameters.
func ExampleRegister() {
	if err := registerLogDistance(); err != nil {
		log.Fatal(err)
	}

	// The bias of head 0 (slope 1/2) for the query at position 4 on keys 0..4.
	row := make([]float32, 5)
	logDistanceKernel{}.Bias32([]float32{0.5, 0.25}, 2, 5).Add(0, 4, 0, row)
	fmt.Printf("head 0, distances 4..0: %.3f\n", row)

	tmp, err := os.MkdirTemp("", "alibi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cfg, err := train.ParseConfig([]byte(`
model: {d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64, pos: logdist, train_len: 32, seed: 1}
train: {batch: 4, steps: 300, lr: 3.0e-3, warmup: 2, eval_tokens: 256, final_eval_tokens: 256}
`))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Out = filepath.Join(tmp, "logdist")
	if _, err := train.Train(context.Background(), cfg, train.Options{}); err != nil {
		log.Fatal(err)
	}

	run, err := eval.OpenRun(cfg.Out, nil)
	if err != nil {
		log.Fatal(err)
	}
	val, err := run.ValidationTokens(nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("scheme:", run.Model.Config.Pos)
	for _, n := range []int{32, 128} { // L and 4L
		res, err := eval.Perplexity(run.Model, val, eval.Options{Len: n, MaxTokens: 4096})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("length %d: perplexity %.2f\n", n, res.PPL)
	}
	// Output:
	// head 0, distances 4..0: [-0.805 -0.693 -0.549 -0.347 0.000]
	// scheme: logdist
	// length 32: perplexity 12.18
	// length 128: perplexity 12.24
}
