package train

import (
	"os"
	"testing"
)

// FuzzParseConfig: any input either parses into a config that validates, or
// is rejected with a one-line error; it never panics.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("../configs/tiny.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\n"))
	f.Add([]byte("model: [1, 2\n"))
	f.Add([]byte("train: {steps: -1}\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseConfig(b)
		if err != nil {
			if len(err.Error()) == 0 {
				t.Fatal("empty error message")
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted an invalid config: %v", err)
		}
	})
}
