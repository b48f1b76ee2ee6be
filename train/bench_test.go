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

// BenchmarkTrainStepTiny is one whole training step of the tiny config on a
// fixed batch: forward and backward pass, global-norm clipping and the AdamW
// update, as the training loop does it. It reports tokens/s and the matrix
// products' achieved GFLOP/s (model.Config.FLOPsPerToken).
func BenchmarkTrainStepTiny(b *testing.B) {
	cfg, err := LoadConfig("../configs/tiny.yaml")
	if err != nil {
		b.Fatal(err)
	}
	corpus, trainTok, _, err := LoadData(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := newState(cfg, corpus, trainTok)
	if err != nil {
		b.Fatal(err)
	}
	t, L := cfg.Train, cfg.Model.TrainLen
	g, err := st.model.NewGraph(t.Batch, L, true)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	params := make([][]float32, len(st.model.Weights.Names))
	decay := make([]bool, len(params))
	for i, name := range st.model.Weights.Names {
		params[i] = st.model.Weights.Data(name)
		decay[i] = st.model.Weights.Decays(name)
	}
	grads := make([][]float32, len(params))
	x, y := make([]int, t.Batch*L), make([]int, t.Batch*L)
	st.sampler.Next(x, y)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Execute(x, y); err != nil {
			b.Fatal(err)
		}
		for j := range grads {
			grads[j] = g.GradData(j)
		}
		ClipGlobalNorm(grads, t.Clip)
		st.opt.Update(params, grads, decay, t.LRAt(i))
	}
	tps := float64(b.N*t.Batch*L) / b.Elapsed().Seconds()
	b.ReportMetric(tps, "tokens/s")
	b.ReportMetric(tps*cfg.Model.FLOPsPerToken(L, true)/1e9, "GFLOP/s")
}
