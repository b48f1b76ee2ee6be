package train

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// A validation split shorter than one window of train_len + 1 is refused
// when the data is loaded, before any training: the final evaluation
// could not score a window of the training length.
func TestLoadDataRefusesShortValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bytes   int // corpus size; val_frac 0.1
		wantErr string
	}{
		{"one window and its target", 170, ""},
		{"one token short", 160, "its validation split of 16 tokens is shorter than one window of train_len 16 + 1"},
		{"far too short", 100, "its validation split of 10 tokens is shorter than one window of train_len 16 + 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := microConfig(t, model.PosALiBi, 2)
			cfg.Data.Corpus = filepath.Join(t.TempDir(), "corpus.txt")
			if err := os.WriteFile(cfg.Data.Corpus, bytes.Repeat([]byte("ab"), tc.bytes/2), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, val, err := LoadData(cfg, nil)
			if tc.wantErr == "" {
				if err != nil || len(val) != 17 {
					t.Fatalf("%d validation tokens, error %v; want 17 and none", len(val), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
