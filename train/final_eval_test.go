package train

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alibi-go/alibi/model"
)

// The final evaluation announces the number of tokens it scores (the
// split's tokens but the first, the val_tokens of metrics.jsonl) and,
// off a terminal, prints progress lines as it goes: here a fake clock
// makes 11 s pass between its calls.
func TestFinalEvaluationProgress(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 2)
	val, err := valTokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	opt := Options{Log: &log, now: func() time.Time { clock = clock.Add(11 * time.Second); return clock }}
	if _, err := Train(context.Background(), cfg, opt); err != nil {
		t.Fatal(err)
	}
	ms := readMetrics(t, cfg.Out)
	scored := int(ms[len(ms)-1]["val_tokens"].(float64))
	if scored != len(val)-1 {
		t.Fatalf("val_tokens %d for a validation split of %d tokens", scored, len(val))
	}
	out := log.String()
	announce := fmt.Sprintf("evaluating on the whole validation split (%d tokens scored)...\n", scored)
	done := fmt.Sprintf("length 16: %d of %d tokens scored (100%%) in ", scored, scored)
	if !strings.Contains(out, announce) || !strings.Contains(out, done) || strings.Index(out, announce) > strings.Index(out, done) {
		t.Errorf("log lacks %q followed by %q:\n%s", announce, done, out)
	}
}

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
			val, err := valTokens(cfg)
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

// valTokens is the validation split of cfg's corpus, as LoadData makes it.
func valTokens(cfg Config) ([]uint32, error) {
	d, err := LoadData(cfg, nil, "", nil)
	if err != nil {
		return nil, err
	}
	return d.Val, nil
}
