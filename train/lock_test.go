package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// While a process holds a run directory's lock, Train refuses to start or
// resume a run there, naming the holder, and changes nothing; RunWriter
// reports the holder without waiting; once the lock is released, the run
// resumes.
func TestTrainRefusesLockedRun(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 10)
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, writing, err := RunWriter(cfg.Out); err != nil || writing {
		t.Fatalf("a finished run: writing %v, err %v", writing, err)
	}
	lock, err := LockRun(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("PID %d on host %s, since ", os.Getpid(), host)
	if h, writing, err := RunWriter(cfg.Out); err != nil || !writing || !strings.HasPrefix(h, holder) {
		t.Fatalf("a locked run: holder %q, writing %v, err %v", h, writing, err)
	}
	before := snapshot(t, cfg.Out)
	more := cfg
	more.Train.Steps = 20
	for _, opt := range []Options{{}, {Resume: true}} {
		_, err := Train(context.Background(), more, opt)
		if !errors.Is(err, ErrRunLocked) || !strings.Contains(err.Error(), cfg.Out+" is being written by another process ("+holder) {
			t.Fatalf("resume %v: %v", opt.Resume, err)
		}
	}
	sameFiles(t, before, snapshot(t, cfg.Out))
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	if s, err := Train(context.Background(), more, Options{Resume: true}); err != nil || s.Steps != 20 {
		t.Fatalf("after the lock was released: %v", err)
	}
}

// A resumed run that has trained past the steps asked for, and has not
// finished, is refused: finishing it there would write the summary of a
// shorter run than the one started. A finished run asked for fewer steps
// has nothing to do.
func TestResumePastSteps(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 20)
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	fewer := cfg
	fewer.Train.Steps = 12
	if _, err := Train(context.Background(), fewer, Options{Resume: true}); !errors.Is(err, ErrFinished) {
		t.Fatalf("finished run: %v", err)
	}
	if err := os.Remove(cfg.Out + "/summary.json"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, cfg.Out)
	_, err := Train(context.Background(), fewer, Options{Resume: true})
	want := cfg.Out + " has trained past the steps asked for: it is at step 20 of the 20 steps it was last started for, and 12 were asked for now"
	if !errors.Is(err, ErrPastSteps) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	sameFiles(t, before, snapshot(t, cfg.Out))
}

// RunConfig reads the config a run was started with: from its newest
// checkpoint, or from config.yaml before the first one; a directory without
// a run is fs.ErrNotExist.
func TestRunConfig(t *testing.T) {
	cfg := microConfig(t, model.PosRoPE, 10)
	cfg.Model.Seed = 77
	if _, err := RunConfig(cfg.Out); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no run in "+cfg.Out) {
		t.Fatalf("empty directory: %v", err)
	}
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := RunConfig(cfg.Out)
	if err != nil || !reflect.DeepEqual(got, cfg) {
		t.Fatalf("from the checkpoint: %+v, %v; want %+v", got, err, cfg)
	}
	cs, _ := model.Checkpoints(cfg.Out)
	for _, c := range cs {
		os.Remove(c)
	}
	if got, err = RunConfig(cfg.Out); err != nil || !reflect.DeepEqual(got, cfg) {
		t.Fatalf("from config.yaml: %+v, %v; want %+v", got, err, cfg)
	}
}
