package train

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// BenchmarkTrainTiny runs configs/tiny.yaml for b.N steps (plus the warm-up
// steps left out of the figure) and reports the run summary's training
// tokens/s: the number cmd/train prints.
func BenchmarkTrainTiny(b *testing.B) {
	cfg, err := LoadConfig("../configs/tiny.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Train.Steps = b.N + warmSteps
	cfg.Train.EvalEvery = cfg.Train.Steps + 1
	cfg.Train.CheckpointEvery = cfg.Train.Steps
	cfg.Out = b.TempDir()
	sum, err := Train(context.Background(), cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(sum.TokensPerSecond, "tokens/s")
}

// BenchmarkTrainStepSchemes is BenchmarkTrainStepTiny for every position
// scheme, one sub-benchmark each; with -count N the schemes alternate N
// times, so that drift in the machine's speed hits them alike.
func BenchmarkTrainStepSchemes(b *testing.B) {
	for _, pos := range append(model.Schemes(), "alibi+log-length", "rope+log-length") {
		b.Run(pos, func(b *testing.B) { benchTrainStep(b, pos) })
	}
}

// BenchmarkTrainStepTiny is one whole training step of the tiny config on a
// fixed batch: forward and backward pass, global-norm clipping and the AdamW
// update, as the training loop does it, timed after one untimed step. It
// reports tokens/s and the matrix products' achieved GFLOP/s
// (model.Config.FLOPsPerToken).
func BenchmarkTrainStepTiny(b *testing.B) { benchTrainStep(b, "") }

// BenchmarkTrainStepSmall is BenchmarkTrainStepTiny on configs/small.yaml
// (d_model 256, 6 layers, 16 x 512 tokens a step): the small-config twin
// whose GFLOP/s the README sets beside BenchmarkPeak. It reads the Go
// source corpus (about 90 MB) once before the timer starts.
func BenchmarkTrainStepSmall(b *testing.B) { benchTrainStepConfig(b, "../configs/small.yaml", "") }

// BenchmarkTrainStepSmallPrecision is BenchmarkTrainStepSmall in fp32 and
// in bf16, alternating with -count N.
func BenchmarkTrainStepSmallPrecision(b *testing.B) {
	for _, p := range []string{"fp32", "bf16"} {
		b.Run(p, func(b *testing.B) { benchTrainStepConfig(b, "../configs/small.yaml", "precision="+p) })
	}
}

// BenchmarkTrainStepPrecision is BenchmarkTrainStepTiny in fp32 and in bf16
// (train.precision), alternating with -count N.
func BenchmarkTrainStepPrecision(b *testing.B) {
	for _, p := range []string{"fp32", "bf16"} {
		b.Run(p, func(b *testing.B) { benchTrainStep(b, "precision="+p) })
	}
}

// benchTrainStep times the training step of the tiny config with the
// position scheme pos, a model.Config label such as alibi+log-length ("" for
// the config's own).
func benchTrainStep(b *testing.B, pos string) { benchTrainStepConfig(b, "../configs/tiny.yaml", pos) }

// BenchmarkTrainStepOps is BenchmarkTrainStepTiny and BenchmarkTrainStepSmall
// with every op of the graph timed (model.Graph.TimeOps): besides tokens/s
// and GFLOP/s, it reports each kind of op's wall time a step
// ("LinearGrad-ms/step", ...) and the rest of the step, outside the ops
// (clipping, AdamW and the runner's own bookkeeping, "outside-graph-ms/step"). Run with -benchtime 40x
// (tiny) or 5x (small): where a step's time goes, by the clock.
func BenchmarkTrainStepOps(b *testing.B) {
	for _, c := range []struct{ name, path string }{{"tiny", "../configs/tiny.yaml"}, {"small", "../configs/small.yaml"}} {
		b.Run(c.name, func(b *testing.B) {
			times := model.OpTimes{}
			benchTrainStepTimed(b, c.path, "", times)
			var ops time.Duration
			for kind, d := range times {
				ops += d
				b.ReportMetric(d.Seconds()*1e3/float64(b.N), kind+"-ms/step")
			}
			b.ReportMetric((b.Elapsed()-ops).Seconds()*1e3/float64(b.N), "outside-graph-ms/step")
		})
	}
}

// benchTrainStepConfig times the training step of the config at path with
// the position scheme or precision pos, as benchTrainStep.
func benchTrainStepConfig(b *testing.B, path, pos string) { benchTrainStepTimed(b, path, pos, nil) }

// benchTrainStepTimed is benchTrainStepConfig that also adds the wall time
// of the graph's ops in the timed steps to times (nil: no timing).
func benchTrainStepTimed(b *testing.B, path, pos string, times model.OpTimes) {
	sb := newStepBench(b, path, pos)
	defer sb.Close()
	sb.TimeOps(times)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runStep(b, sb, i)
	}
	tps := float64(b.N*sb.Tokens()) / b.Elapsed().Seconds()
	b.ReportMetric(tps, "tokens/s")
	b.ReportMetric(tps*sb.FLOPsPerToken()/1e9, "GFLOP/s")
}

// BenchmarkTrainStepPeakFraction is BenchmarkTrainStepTiny and
// BenchmarkTrainStepSmall with the fraction of peak taken step by step:
// before each timed step and after the last, the timer stopped, it measures
// the two-core FMA peak for 25 ms (layers.FMAPeak); a step's GFLOP/s over
// the mean of the peaks just before and after it is that step's fraction.
// It reports the medians of the fractions ("%peak"), of the steps' GFLOP/s
// and of the peaks ("peak-GFLOP/s"), and logs each step's pair. On a
// machine whose speed moves with other guests' load, a step set beside a
// peak measured in another benchmark, seconds or minutes away, can be off
// by a factor of two; here both see the same moment. Run with -benchtime
// 20x (tiny) or 5x (small).
func BenchmarkTrainStepPeakFraction(b *testing.B) {
	for _, c := range []struct{ name, path string }{{"tiny", "../configs/tiny.yaml"}, {"small", "../configs/small.yaml"}} {
		b.Run(c.name, func(b *testing.B) {
			sb := newStepBench(b, c.path, "")
			defer sb.Close()
			const window = 25 * time.Millisecond
			flops := float64(sb.Tokens()) * sb.FLOPsPerToken()
			peaks := []float64{layers.FMAPeak(window)}
			var rates, fractions []float64
			var pairs []string
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				runStep(b, sb, i)
				rate := flops / time.Since(t0).Seconds() / 1e9
				b.StopTimer()
				peaks = append(peaks, layers.FMAPeak(window))
				around := (peaks[i] + peaks[i+1]) / 2
				rates, fractions = append(rates, rate), append(fractions, rate/around)
				pairs = append(pairs, fmt.Sprintf("%.0f/%.0f", rate, around))
				b.StartTimer()
			}
			b.Logf("each step's GFLOP/s / the peak around it: %s", strings.Join(pairs, " "))
			b.ReportMetric(100*median(fractions), "%peak")
			b.ReportMetric(median(rates), "GFLOP/s")
			b.ReportMetric(median(peaks), "peak-GFLOP/s")
		})
	}
}

// BenchmarkTrainStepRounds is the README's fraction-of-peak measurement
// (the targets' own: each step set beside the peak in one run) as one
// command: b.N rounds (run with -benchtime 5x) of StepRounds, each the
// two-core FMA peak for 2 s (layers.FMAPeak, as `-bench Peak/avx512/t2
// -benchtime 2s` in layers/internal/gemm) followed by 40 steps of the tiny
// config and 5 of the small one: what cmd/bench measures. It logs every
// round and reports the medians over the rounds of the fractions
// ("tiny-%peak", "small-%peak"), of the GFLOP/s and of the peaks. Both
// configs are set up before the rounds of each call; the testing package
// calls a benchmark once with b.N = 1 first, so -benchtime 5x sets up twice
// and runs six rounds (the first logged as "round 1 of 1").
func BenchmarkTrainStepRounds(b *testing.B) {
	sets := []StepSet{{"tiny", newStepBench(b, "../configs/tiny.yaml", ""), 40}, {"small", newStepBench(b, "../configs/small.yaml", ""), 5}}
	for _, s := range sets {
		defer s.Bench.Close()
	}
	b.ResetTimer()
	rounds, err := StepRounds(sets, b.N, 2*time.Second, func(i int, r Round) { b.Log(FormatRound(sets, i, b.N, r)) })
	if err != nil {
		b.Fatal(err)
	}
	sum := SummarizeRounds(sets, rounds)
	for _, s := range sum.Sets {
		b.ReportMetric(100*s.Fraction, s.Name+"-%peak")
		b.ReportMetric(s.GFLOPs, s.Name+"-GFLOP/s")
	}
	b.ReportMetric(sum.Peak, "peak-GFLOP/s")
}

// newStepBench sets up the training step of the config at path with the
// position scheme or precision pos (see benchTrainStepConfig and
// LoadStepBench).
func newStepBench(b *testing.B, path, pos string) *StepBench {
	sb, err := LoadStepBench(path, pos)
	if err != nil {
		b.Fatal(err)
	}
	return sb
}

// runStep runs sb's step with the learning rate of step i.
func runStep(b *testing.B, sb *StepBench, i int) {
	if err := sb.Run(i); err != nil {
		b.Fatal(err)
	}
}
