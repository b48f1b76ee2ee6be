package train

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParseConfig: any input is either rejected with a non-empty one-line
// error, or parses into a config that survives a round trip: written back as
// YAML and parsed again, it is the same config. It never panics.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("../configs/tiny.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1}\n"))
	f.Add([]byte("model: [1, 2\n"))
	f.Add([]byte("train: {steps: -1}\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("model: {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 0.1, min_lr: .nan}\n"))
	f.Add([]byte("model: &m {d_model: 8, n_layers: 1, n_heads: 2, d_ff: 8, train_len: 4}\ntrain: {batch: 1, steps: 1, lr: 1e-3}\ndata: {corpus: \"x\\ny\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseConfig(b)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		out, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("accepted config does not marshal: %v", err)
		}
		again, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("accepted config does not parse again: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again, cfg) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", cfg, again)
		}
	})
}
