package train

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// Every file of a run directory gets mode 0666 less the umask, as os.Create
// gives (and every directory it creates 0777 less the umask), so that another user's report can read a run on shared storage.
// The umask is process-wide: this test must not run in parallel.
func TestRunFilesFollowUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			old := syscall.Umask(tc.umask)
			t.Cleanup(func() { syscall.Umask(old) })
			cfg := microConfig(t, model.PosALiBi, 4)
			cfg.Train.CheckpointEvery, cfg.Train.EvalEvery, cfg.Train.EvalTokens, cfg.Train.FinalEvalTokens = 2, 2, 64, 64
			if _, err := Train(context.Background(), cfg, Options{}); err != nil {
				t.Fatal(err)
			}
			// Directories the run creates get 0777 less the umask.
			if fi, err := os.Stat(filepath.Join(cfg.Out, model.CheckpointDir)); err != nil || fi.Mode().Perm() != fs.FileMode(0o777&^tc.umask) {
				t.Errorf("checkpoints directory: %v, %v; want mode %v", fi.Mode().Perm(), err, fs.FileMode(0o777&^tc.umask))
			}
			seen := map[string]bool{}
			err := filepath.WalkDir(cfg.Out, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(cfg.Out, path)
				if strings.HasPrefix(rel, model.CheckpointDir+string(filepath.Separator)) {
					rel = model.CheckpointDir + "/*" + filepath.Ext(rel)
				}
				seen[rel] = true
				if got := fi.Mode().Perm(); got != tc.want {
					t.Errorf("%s has mode %v with umask %03o, want %v", path, got, tc.umask, tc.want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"config.yaml", "summary.json", "metrics.jsonl", "checkpoints/*.safetensors"} {
				if !seen[name] {
					t.Errorf("the run wrote no %s (files: %v)", name, seen)
				}
			}
		})
	}
}
