package train

import (
	"context"
	"testing"
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
