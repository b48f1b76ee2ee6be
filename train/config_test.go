package train

import (
	"os"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"defaults fill gaps", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\n", ""},
		{"unknown top-level key", "nonsense: 1\n", `unknown key "nonsense"`},
		{"unknown nested key", "model: {d_modle: 8}\n", `unknown key "d_modle"`},
		{"wrong type", "train: {steps: many}\n", "many"},
		{"bad lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: -1}\n", "train.lr"},
		{"min_lr above lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, min_lr: 0.2}\n", "train.min_lr"},
		{"val_frac", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {val_frac: 1.5}\n", "data.val_frac"},
		{"model error first", "model: {d_model: 9, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\n", "divisible"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Train.Beta2 != 0.99 || cfg.Data.Corpus != "builtin:opticks" || cfg.Model.Pos != "alibi" {
					t.Fatalf("defaults not applied: %+v", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

// The shipped tiny config is the reference's budget.
func TestTinyConfigMatchesReference(t *testing.T) {
	cfg, err := LoadConfig("../configs/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, tr := cfg.Model, cfg.Train
	if m.Vocab != 256 || m.DModel != 128 || m.NLayers != 4 || m.NHeads != 4 || m.DFF != 512 || m.TrainLen != 128 || m.Pos != "alibi" {
		t.Errorf("model %+v", m)
	}
	if tr.Batch != 16 || tr.Steps != 2000 || tr.LR != 1e-3 || tr.MinLR != 1e-4 || tr.Warmup != 100 ||
		tr.Beta1 != 0.9 || tr.Beta2 != 0.99 || tr.WeightDecay != 0.1 || tr.Clip != 1 {
		t.Errorf("train %+v", tr)
	}
	if cfg.RunDir() != "runs/tiny" {
		t.Errorf("run dir %s", cfg.RunDir())
	}
	if _, err := os.Stat("../configs/micro.yaml"); err != nil {
		t.Error(err)
	}
}
