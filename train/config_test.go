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
		{"unknown nested key", "model: {d_modle: 8}\n", `line 1: unknown key "model.d_modle"`},
		{"wrong type names the key", "train: {steps: many}\n", `line 1: train.steps must be an integer, got "many"`},
		{"wrong type of a number", "model: {d_model: 8}\ntrain:\n  lr: fast\n", `line 3: train.lr must be a number, got "fast"`},
		{"wrong type of a string", "data: {corpus: [a, b]}\n", "data.corpus must be a string, got a list"},
		{"a mapping for a number", "model: {d_model: {a: 1}}\n", "model.d_model must be an integer, got a mapping"},
		{"section not a mapping", "train: 5\n", "line 1: train must be a mapping of keys to values"},
		{"document not a mapping", "- a\n- b\n", "the config must be a mapping"},
		{"duplicate key", "train: {steps: 1, steps: 2}\n", "steps"},
		{"required key missing", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8}\ntrain: {batch: 1, steps: 1, lr: 0.1}\n", "model.train_len is required: a positive integer"},
		{"required lr missing", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1}\n", "train.lr is required"},
		{"malformed yaml", "model: [1, 2\n", "yaml"},
		{"NaN min_lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, min_lr: .nan}\n", "train.min_lr must be a finite number, got NaN"},
		{"NaN weight decay", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, weight_decay: .nan}\n", "train.weight_decay must be a finite number"},
		{"bf16", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, precision: bf16}\n", ""},
		{"unknown precision", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, precision: fp8}\n", `train.precision: precision "fp8": want fp32 or bf16`},
		{"NaN clip", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, clip: .NaN}\n", "train.clip must be a finite number"},
		{"infinite lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: .inf}\n", "train.lr must be a finite number, got +Inf"},
		{"bad lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: -1}\n", "train.lr"},
		{"min_lr above lr", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, min_lr: 0.2}\n", "train.min_lr"},
		{"val_frac", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {val_frac: 1.5}\n", "data.val_frac"},
		{"passkey fraction of 1", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 128}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {passkey: 1}\n", "data.passkey must be in [0, 1), got 1"},
		{"passkey NaN", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 128}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {passkey: .nan}\n", "data.passkey must be a finite number"},
		{"passkey window too short", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 99}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {passkey: 0.1}\n", "data.passkey needs model.train_len of at least 100 to hold an episode, got 99"},
		{"passkey fits", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 100}\ntrain: {batch: 1, steps: 1, lr: 0.1}\ndata: {passkey: 0.1}\n", ""},
		{"eval_tokens shorter than train_len", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, eval_tokens: 3}\n", "train.eval_tokens (3) must be at least model.train_len (4)"},
		{"eval_tokens of train_len", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, eval_tokens: 4, final_eval_tokens: 4}\n", ""},
		{"final_eval_tokens shorter than train_len", "model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, final_eval_tokens: 2}\n", "train.final_eval_tokens (2) must be at least model.train_len (4)"},
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

// tiny-passkey.yaml is tiny.yaml with half the windows passkey episodes, for 5000 steps.
func TestTinyPasskeyConfig(t *testing.T) {
	tiny, err := LoadConfig("../configs/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pk, err := LoadConfig("../configs/tiny-passkey.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pk.Data.Passkey != 0.5 || tiny.Data.Passkey != 0 || pk.Train.Steps != 5000 {
		t.Errorf("passkey fractions: tiny-passkey %g, tiny %g", pk.Data.Passkey, tiny.Data.Passkey)
	}
	pk.Data.Passkey, pk.Name, pk.Train.Steps = 0, tiny.Name, tiny.Train.Steps
	if err := CheckResume(tiny, pk); err != nil {
		t.Errorf("tiny-passkey differs from tiny in more than the mix: %v", err)
	}
}
