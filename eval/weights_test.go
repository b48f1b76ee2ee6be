package eval

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// writeRun writes a run directory of the test model as training leaves it:
// a checkpoint at each of steps, each recording its step and the run's
// steps, and, if finished, the summary of step runSteps.
func writeRun(t *testing.T, steps []int, runSteps int, finished bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, model.CheckpointDir), 0o777); err != nil {
		t.Fatal(err)
	}
	m := testModel(t, model.PosALiBi)
	for _, s := range steps {
		c := model.NewCheckpoint(m)
		c.Meta[model.MetaStep] = strconv.Itoa(s)
		c.Meta[model.MetaRunConfig] = `{"train":{"steps":` + strconv.Itoa(runSteps) + `}}`
		if err := model.SaveCheckpoint(model.CheckpointPath(dir, s), c); err != nil {
			t.Fatal(err)
		}
	}
	if finished {
		summary := `{"steps": ` + strconv.Itoa(runSteps) + `, "checkpoint": "` + model.CheckpointPath(dir, runSteps) + `"}`
		if err := os.WriteFile(filepath.Join(dir, model.SummaryFile), []byte(summary), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// corrupt flips one byte in the middle of a file.
func corrupt(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A finished run is its final checkpoint: OpenRun names it, at its step, as
// finished, and the label is the directory alone.
func TestOpenRunFinished(t *testing.T) {
	dir := writeRun(t, []int{10, 20}, 20, true)
	r, err := OpenRun(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Weights{Checkpoint: model.CheckpointPath(dir, 20), Step: 20, Steps: 20, Finished: true}
	if r.Weights != want || !r.Weights.Final() || r.Label() != dir {
		t.Errorf("weights %+v, label %q; want %+v, label %q", r.Weights, r.Label(), want, dir)
	}
	if got := r.Weights.Describe(); got != want.Checkpoint+" (step 20 of 20, finished)" {
		t.Errorf("Describe = %q", got)
	}
}

// A finished run whose final checkpoint does not load is refused, with the
// newest checkpoint that does, instead of being scored from that one.
func TestOpenRunRefusesCorruptFinalCheckpoint(t *testing.T) {
	dir := writeRun(t, []int{10, 20}, 20, true)
	corrupt(t, model.CheckpointPath(dir, 20))
	skipped := 0
	r, err := OpenRun(dir, func(error) { skipped++ })
	var fe *FinalCheckpointError
	if !errors.As(err, &fe) {
		t.Fatalf("OpenRun = %v, %v; want a *FinalCheckpointError", r, err)
	}
	if fe.Final != model.CheckpointPath(dir, 20) || fe.Good != model.CheckpointPath(dir, 10) || fe.GoodStep != 10 || fe.FinalStep != 20 {
		t.Errorf("error %+v", fe)
	}
	for _, s := range []string{"finished at step 20", "step-00000020.safetensors", "checksum mismatch", "the newest good checkpoint is " + fe.Good + " (step 10)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	// Opened on purpose, the older checkpoint says what it is.
	old, err := OpenCheckpoint(fe.Good)
	if err != nil {
		t.Fatal(err)
	}
	if s := old.Weights.Status(); s != "earlier checkpoint, step 10 of 20" || old.Weights.Final() || !old.Weights.Finished {
		t.Errorf("the older checkpoint's weights %+v, status %q", old.Weights, s)
	}
	if want := fe.Good + " (earlier checkpoint, step 10 of 20)"; old.Label() != want {
		t.Errorf("label %q, want %q", old.Label(), want)
	}
	// With no other checkpoint, the error says so.
	only := writeRun(t, []int{20}, 20, true)
	corrupt(t, model.CheckpointPath(only, 20))
	if _, err := OpenRun(only, nil); !errors.As(err, &fe) || fe.Good != "" || !strings.Contains(err.Error(), "no older checkpoint of it loads either") {
		t.Errorf("one corrupt checkpoint: %v", err)
	}
}

// A run that has not finished is its newest checkpoint that loads, and
// says so: unfinished at its step, of the run's steps.
func TestOpenRunUnfinished(t *testing.T) {
	dir := writeRun(t, []int{750, 755}, 800, false)
	r, err := OpenRun(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + " (unfinished at step 755 of 800)"; r.Label() != want || r.Weights.Finished || r.Weights.Step != 755 {
		t.Errorf("label %q, weights %+v; want %q", r.Label(), r.Weights, want)
	}
	// Its corrupt newest checkpoint is skipped, and the label names the
	// step that was loaded.
	corrupt(t, model.CheckpointPath(dir, 755))
	var skipped []error
	if r, err = OpenRun(dir, func(err error) { skipped = append(skipped, err) }); err != nil {
		t.Fatal(err)
	}
	if want := dir + " (unfinished at step 750 of 800)"; r.Label() != want || len(skipped) != 1 {
		t.Errorf("label %q, %d skipped; want %q, 1", r.Label(), len(skipped), want)
	}
	// Being written by another process, it is in progress.
	r.Weights.InProgress = true
	if want := dir + " (in progress at step 750 of 800)"; r.Label() != want {
		t.Errorf("label %q, want %q", r.Label(), want)
	}
}

// A run resumed for more steps after it finished has not finished again:
// its summary names an older step than its newest checkpoint.
func TestOpenRunResumedAfterFinishing(t *testing.T) {
	dir := writeRun(t, []int{20, 30}, 20, true)
	c, err := model.LoadCheckpoint(model.CheckpointPath(dir, 30))
	if err != nil {
		t.Fatal(err)
	}
	c.Meta[model.MetaRunConfig] = `{"train":{"steps":40}}`
	if err := model.SaveCheckpoint(model.CheckpointPath(dir, 30), c); err != nil {
		t.Fatal(err)
	}
	corrupt(t, model.CheckpointPath(dir, 30))
	r, err := OpenRun(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + " (step 20 of 20)"; r.Label() != want || r.Weights.Finished {
		t.Errorf("label %q, weights %+v; want %q, not finished", r.Label(), r.Weights, want)
	}
}

// A checkpoint of a scheme this program has not registered stops the
// search at once, with an error that names the scheme, instead of skipping
// every checkpoint of the run as if each were corrupt.
func TestOpenRunUnknownScheme(t *testing.T) {
	dir := writeRun(t, []int{10, 20}, 20, false)
	for _, s := range []int{10, 20} {
		c, err := model.LoadCheckpoint(model.CheckpointPath(dir, s))
		if err != nil {
			t.Fatal(err)
		}
		c.Config.Pos, c.PositionBuffer = "private", nil
		if err := model.SaveCheckpoint(model.CheckpointPath(dir, s), c); err != nil {
			t.Fatal(err)
		}
	}
	skipped := 0
	_, err := OpenRun(dir, func(error) { skipped++ })
	var us *model.UnknownSchemeError
	if !errors.As(err, &us) || us.Scheme != "private" || skipped != 0 {
		t.Fatalf("OpenRun: %v (%d skipped); want a *model.UnknownSchemeError for \"private\", none skipped", err, skipped)
	}
}
