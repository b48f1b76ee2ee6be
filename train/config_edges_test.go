package train

import (
	"strings"
	"testing"
)

const configBase = "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1"

// Beta1 = 1 divides the step by 1 - 1^t = 0.
func TestBeta1One(t *testing.T) {
	if _, err := ParseConfig([]byte(configBase + ", beta1: 1}\n")); err == nil || !strings.Contains(err.Error(), "train.beta1 must be in [0, 1), got 1") {
		t.Errorf("beta1 1: %v", err)
	}
}

// An eval length equal to eval_tokens scores one window, as
// eval_tokens = train_len does.
func TestEvalLenOfEvalTokens(t *testing.T) {
	if _, err := ParseConfig([]byte(configBase + ", eval_tokens: 32, eval_lens: [32]}\n")); err != nil {
		t.Errorf("eval_lens [32] with eval_tokens 32: %v", err)
	}
}

// The defaults a config may leave out, as the README's "Config keys" lists them.
func TestDefaults(t *testing.T) {
	d := Defaults().Train
	if d.KeepCheckpoints != 3 || d.Eps != 1e-8 || d.Beta1 != 0.9 || d.Beta2 != 0.99 || d.Clip != 1 || d.LogEvery != 10 || d.EvalEvery != 500 || d.EvalTokens != 16384 || d.CheckpointEvery != 500 {
		t.Errorf("defaults %+v", d)
	}
}
