package train

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
)

// train.eval_lens: every periodic validation also scores the lengths
// named, and the value logged is the perplexity of the model at that step,
// scored at that length (checked against its checkpoint).
func TestEvalLens(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 30)
	cfg.Train.EvalLens = []int{32, 16} // 16 is train_len: validated once, as ever
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	v, err := ReadValidation(cfg.Out, cfg.Train.Batch*cfg.Model.TrainLen, cfg.Model.TrainLen)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range v {
		got = append(got, fmt.Sprintf("%d@%d", p.Step, p.Len))
	}
	// Steps 10 and 20 validate at 16 then 32; the end of the run at 16.
	if want := "10@16 10@32 20@16 20@32 30@16"; strings.Join(got, " ") != want {
		t.Fatalf("validations %s, want %s", strings.Join(got, " "), want)
	}
	val, err := valTokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := model.LoadCheckpoint(model.CheckpointPath(cfg.Out, 20))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Model()
	if err != nil {
		t.Fatal(err)
	}
	r, err := eval.Perplexity(m, val, eval.Options{Len: 32, MaxTokens: cfg.Train.EvalTokens, BatchTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.PPL - v[3].PPL; d > 1e-9*r.PPL || d < -1e-9*r.PPL {
		t.Errorf("logged perplexity at 32, step 20: %v; the step-20 checkpoint scores %v", v[3].PPL, r.PPL)
	}
	if v[3].Tokens != 20*64 {
		t.Errorf("tokens at step 20: %d, want %d", v[3].Tokens, 20*64)
	}
}

func TestEvalLensRefused(t *testing.T) {
	for _, c := range []struct {
		lens []int
		want string
	}{{[]int{0}, "must be positive lengths"}, {[]int{1024}, "longer than train.eval_tokens"}} {
		cfg := microConfig(t, model.PosALiBi, 30)
		cfg.Train.EvalLens = c.lens
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("eval_lens %v: %v, want an error containing %q", c.lens, err, c.want)
		}
	}
}
