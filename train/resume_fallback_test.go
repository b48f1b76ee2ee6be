package train

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// A resume whose newest checkpoint cannot be read falls back to the newest
// one that can, says so, and trains the steps after it again: the run ends
// with the weights of one left alone.
func TestResumeFallsBackPastCorruptCheckpoint(t *testing.T) {
	whole := microConfig(t, model.PosALiBi, 20)
	if _, err := Train(context.Background(), whole, Options{}); err != nil {
		t.Fatal(err)
	}
	want := weightsOf(t, whole.Out)
	newest := model.CheckpointPath(whole.Out, 20)
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(newest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := Train(context.Background(), whole, Options{Resume: true, Log: &log}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"skipping checkpoint: load checkpoint " + newest + ": checksum mismatch",
		"resuming from " + model.CheckpointPath(whole.Out, 10) + " (step 10), the newest checkpoint that loads: the steps after it are trained again, past the 1 newer checkpoint that cannot be read",
	} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
	if !bytes.Equal(weightsOf(t, whole.Out), want) {
		t.Error("the resumed run ended with other weights than the run left alone")
	}
}
