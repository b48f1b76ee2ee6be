package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/train"
)

// A run that a process is still training is evaluated without waiting for
// it (its newest checkpoint), and the report says so: the run's row is
// labelled in progress, with the step it scored, and the line above the
// table names the checkpoint.
func TestEvalRunInProgress(t *testing.T) {
	dir, _ := trainedRun(t)
	lock, err := train.LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	var out, errb bytes.Buffer
	if code := command([]string{"--run", dir, "--lens", "16"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	note := fmt.Sprintf("eval: %s is being written by another process (PID %d on host ", dir, os.Getpid())
	if !strings.Contains(errb.String(), note) || !strings.Contains(errb.String(), "reading its newest checkpoint") {
		t.Errorf("stderr %q lacks %q", errb.String(), note)
	}
	if label := dir + " (in progress at step 4 of 4)"; !strings.Contains(out.String(), label) {
		t.Errorf("report does not label the run %q:\n%s", label, out.String())
	}
	if w := "weights: " + dir + "/checkpoints/step-00000004.safetensors (in progress at step 4 of 4)"; !strings.Contains(out.String(), w) {
		t.Errorf("report does not name the weights %q:\n%s", w, out.String())
	}
}
