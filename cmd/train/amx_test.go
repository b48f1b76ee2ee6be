package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// A bf16 run on AMX's tiles, killed with SIGKILL at an arbitrary step
// after a checkpoint and resumed, ends bit-identical to the same run left
// alone: the same weights, moments, steps and losses. Where the CPU or
// the kernel grants no tiles the test skips: the products there run
// VDPBF16PS's arithmetic, which TestKillAndResumeIsBitIdentical's paths
// share.
func TestKillAndResumeBF16OnAMX(t *testing.T) {
	if layers.BF16Path() != "amx" {
		t.Skipf("bf16 runs on %q here, not on AMX's tiles (no AMX-BF16, no permission from the kernel, or ALIBI_SIMD set)", layers.BF16Path())
	}
	root := t.TempDir()
	corpus := filepath.Join(root, "corpus.txt")
	text := strings.Repeat("It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. ", 60)
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(killYAML, "CORPUS", corpus, 1)
	cfg = strings.Replace(cfg, "d_model: 32, n_layers: 2, n_heads: 4, d_ff: 64", "d_model: 64, n_layers: 2, n_heads: 4, d_ff: 256", 1)
	cfg = strings.Replace(cfg, "keep_checkpoints: 3}", "keep_checkpoints: 3, precision: bf16}", 1)
	cfgPath := filepath.Join(root, "amx.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, split := filepath.Join(root, "whole"), filepath.Join(root, "split")
	if err := trainCmd(t, nil, "--config", cfgPath, "--out", whole).Run(); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	if k, _ := summaryOf(t, whole)["kernels"].(string); !strings.HasSuffix(k, "bf16 on amx") {
		t.Fatalf("the run's summary says kernels %q, want bf16 on amx", k)
	}

	killAfter(t, trainCmd(t, nil, "--config", cfgPath, "--out", split), filepath.Join(split, model.CheckpointDir, "step-00000130.safetensors"))
	if err := trainCmd(t, nil, "--config", cfgPath, "--out", split, "--resume").Run(); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if k, _ := summaryOf(t, split)["kernels"].(string); !strings.HasSuffix(k, "bf16 on amx") {
		t.Fatalf("the resumed run's summary says kernels %q, want bf16 on amx", k)
	}
	sameRunState(t, whole, split, "step-00000240.safetensors")
}
