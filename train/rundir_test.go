package train

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alibi-go/alibi/model"
)

// snapshot reads every file below dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFiles checks that the run's files are as they were. The lock file is
// left out: every process that takes the lock names itself in it.
func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	for _, m := range []map[string]string{before, after} {
		for p := range m {
			if filepath.Base(p) == LockFile {
				delete(m, p)
			}
		}
	}
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s was deleted", p)
		case a != b:
			t.Errorf("%s was changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
}

// The summary's wall time and the metrics' elapsed time agree with a clock
// outside the training loop, however many checkpoints the run writes (each
// checkpoint used to count the time before it again).
func TestWallSecondsMatchTheClock(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 60)
	cfg.Train.CheckpointEvery, cfg.Train.LogEvery = 5, 5
	start := time.Now()
	sum, err := Train(context.Background(), cfg, Options{})
	outside := time.Since(start).Seconds()
	if err != nil {
		t.Fatal(err)
	}
	// The run's clock starts and stops inside the call, so it cannot
	// exceed the outside one (5 ms for the clocks); counting the time
	// before each checkpoint again made it several times too large. What
	// the call does before and after its clock (validating the config,
	// writing the summary) may take tens of milliseconds on a loaded
	// machine: a quarter of the run and 100 ms of slack below.
	if sum.WallSeconds > outside+0.005 || sum.WallSeconds < 0.75*outside-0.1 {
		t.Errorf("wall_seconds %.3f, measured outside %.3f", sum.WallSeconds, outside)
	}
	ms := readMetrics(t, cfg.Out)
	prev := 0.0
	for _, m := range ms {
		e := m["elapsed_seconds"].(float64)
		if e < prev || e > outside+0.05 {
			t.Fatalf("elapsed_seconds %.3f after %.3f, with %.3f measured outside: %v", e, prev, outside, m)
		}
		prev = e
	}
	if last := ms[len(ms)-1]["elapsed_seconds"].(float64); last != sum.WallSeconds {
		t.Errorf("last elapsed_seconds %.3f, wall_seconds %.3f", last, sum.WallSeconds)
	}

	// A resumed run adds this segment's time to the time up to the
	// checkpoint it resumed from.
	split := microConfig(t, model.PosALiBi, 60)
	split.Train.CheckpointEvery = 5
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if _, err := Train(ctx, split, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	first := time.Since(start).Seconds()
	start = time.Now()
	sum, err = Train(context.Background(), split, Options{Resume: true})
	second := time.Since(start).Seconds()
	if err != nil {
		t.Fatal(err)
	}
	// The same slack as above below: the time measured outside also holds
	// what Train does after it has taken the wall time (the summary, the
	// metrics file's close), which a loaded machine can stretch past 2%.
	if sum.WallSeconds < second*0.98-0.05 || sum.WallSeconds > first+second {
		t.Errorf("resumed wall_seconds %.3f; segments measured %.3f + %.3f", sum.WallSeconds, first, second)
	}
}

// Resuming a run that has finished changes no file; asking for fewer steps
// too; asking for more continues it with real figures.
func TestResumeFinishedRun(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 20)
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, cfg.Out)
	for _, steps := range []int{20, 10} {
		c := cfg
		c.Train.Steps = steps
		_, err := Train(context.Background(), c, Options{Resume: true})
		if !errors.Is(err, ErrFinished) || !strings.Contains(err.Error(), "at step 20") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("resuming a finished run for %d steps: %v", steps, err)
		}
		sameFiles(t, before, snapshot(t, cfg.Out))
	}
	more := cfg
	more.Train.Steps = 30
	sum, err := Train(context.Background(), more, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Steps != 30 || sum.Tokens != 30*4*16 || !(sum.FinalTrainLoss > 0) || !(sum.TokensPerSecond > 0) || !(sum.WallSeconds > 0) {
		t.Fatalf("continued run's summary %+v", sum)
	}
	if _, err := os.Stat(model.CheckpointPath(cfg.Out, 30)); err != nil {
		t.Fatal(err)
	}
}

// A run that reached its last step but stopped before writing its summary
// (during the final evaluation) is completed by a resume, with the final
// step's loss, not rerun or zeroed.
func TestResumeCompletesMissingSummary(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 20)
	want, err := Train(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cfg.Out, "summary.json")); err != nil {
		t.Fatal(err)
	}
	got, err := Train(context.Background(), cfg, Options{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps != 20 || got.FinalTrainLoss != want.FinalTrainLoss || got.ValPPL != want.ValPPL || got.TokensPerSecond != want.TokensPerSecond {
		t.Fatalf("completed summary %+v, want the original %+v", got, want)
	}
}

// A fresh run into a directory that holds another run refuses and changes
// nothing: it would prune the old run's checkpoints or be shadowed by them.
func TestFreshRunRefusesExistingRun(t *testing.T) {
	cfg := microConfig(t, model.PosALiBi, 20)
	if _, err := Train(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, cfg.Out)
	again := cfg
	again.Train.Steps = 5
	_, err := Train(context.Background(), again, Options{})
	if !errors.Is(err, ErrRunExists) || !strings.Contains(err.Error(), cfg.Out) || !strings.Contains(err.Error(), "step-00000020") {
		t.Fatalf("fresh run over an existing one: %v", err)
	}
	sameFiles(t, before, snapshot(t, cfg.Out))

	// A summary alone (checkpoints deleted by hand) also marks a run.
	for p := range before {
		if strings.HasSuffix(p, ".safetensors") {
			os.Remove(p)
		}
	}
	if _, err := Train(context.Background(), again, Options{}); !errors.Is(err, ErrRunExists) {
		t.Fatalf("fresh run over a summary: %v", err)
	}
}

// Resuming with another setting or another corpus is refused with the first
// differing key and both values; steps and bookkeeping may change.
func TestResumeRefusesChangedRun(t *testing.T) {
	base := microConfig(t, model.PosALiBi, 10)
	base.Train.Steps = 20
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, base, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	before := snapshot(t, base.Out)
	otherCorpus := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(otherCorpus, []byte(strings.Repeat("another text entirely. ", 120)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(c *Config)
		want   string
	}{
		{"learning rate", func(c *Config) { c.Train.LR = 0.02 }, "train.lr is 0.01 in the checkpoint but 0.02 now"},
		{"warm-up", func(c *Config) { c.Train.Warmup = 7 }, "train.warmup is 5 in the checkpoint but 7 now"},
		{"batch", func(c *Config) { c.Train.Batch = 8 }, "train.batch is 4 in the checkpoint but 8 now"},
		{"schedule floor", func(c *Config) { c.Train.MinLR = 0 }, "train.min_lr is 0.001 in the checkpoint but 0 now"},
		{"seed", func(c *Config) { c.Model.Seed = 9 }, "model.seed is 3 in the checkpoint but 9 now"},
		{"model width", func(c *Config) { c.Model.DModel = 32 }, "model.d_model is 16 in the checkpoint but 32 now"},
		{"corpus path", func(c *Config) { c.Data.Corpus = otherCorpus }, "data.corpus is " + base.Data.Corpus},
		{"validation split", func(c *Config) { c.Data.ValFrac = 0.2 }, "data.val_frac is 0.1 in the checkpoint but 0.2 now"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			_, err := Train(context.Background(), c, Options{Resume: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			sameFiles(t, before, snapshot(t, base.Out))
		})
	}
	t.Run("corpus content", func(t *testing.T) {
		old, err := os.ReadFile(base.Data.Corpus)
		if err != nil {
			t.Fatal(err)
		}
		changed := append([]byte(nil), old...)
		changed[100] ^= 1
		if err := os.WriteFile(base.Data.Corpus, changed, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(base.Data.Corpus, old, 0o644)
		_, err = Train(context.Background(), base, Options{Resume: true})
		if err == nil || !strings.Contains(err.Error(), "the corpus changed: data.sha256 is") {
			t.Fatalf("got %v", err)
		}
		sameFiles(t, before, snapshot(t, base.Out))
	})
	t.Run("steps and bookkeeping may change", func(t *testing.T) {
		c := base
		c.Train.Steps, c.Train.LogEvery, c.Train.CheckpointEvery, c.Train.KeepCheckpoints = 12, 3, 4, 5
		if _, err := Train(context.Background(), c, Options{Resume: true}); err != nil {
			t.Fatal(err)
		}
	})
}
