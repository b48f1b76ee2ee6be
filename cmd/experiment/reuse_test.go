package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/alibi-go/alibi/eval"
)

// A saved evaluation that names no weights is reused when it is plain
// (eval.json) and made again when it is an extension's: extension files
// without weights were scored with each row's last, shorter window at its
// own factor, not the row's.
func TestOldExtensionEvaluationsAreRedone(t *testing.T) {
	dir := t.TempDir()
	old := `{"max_tokens": 0, "results": [{"len": 64, "protocol": "non-overlapping", "ppl": 9.5}]}`
	for _, name := range []string{"eval.json", extensionFile("interp")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(old), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	plain, _, err := readEvaluationsFile(dir, "eval.json", options{}, madeBy{})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := plain[evalKey{64, 0}]; !ok || r.PPL != 9.5 {
		t.Fatalf("eval.json without weights: got %v, want its length-64 result reused", plain)
	}
	ext, _, err := readEvaluationsFile(dir, extensionFile("interp"), options{}, madeBy{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) != 0 {
		t.Fatalf("%s without weights was reused: %v", extensionFile("interp"), ext)
	}
	withWeights := `{"max_tokens": 0, "weights": {"checkpoint": "step-00000020.safetensors", "step": 20, "steps": 20, "finished": true},
		"results": [{"len": 64, "protocol": "non-overlapping", "ppl": 9.5}]}`
	if err := os.WriteFile(filepath.Join(dir, extensionFile("interp")), []byte(withWeights), 0o666); err != nil {
		t.Fatal(err)
	}
	final := &eval.Weights{Checkpoint: "step-00000020.safetensors", Step: 20, Steps: 20, Finished: true}
	ext, _, err = readEvaluationsFile(dir, extensionFile("interp"), options{}, madeBy{final: final})
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) != 1 {
		t.Fatalf("%s naming the final weights was not reused: %v", extensionFile("interp"), ext)
	}
}
