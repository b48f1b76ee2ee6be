package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// Every file an experiment writes (each run's files and eval.json, the
// reports) gets mode 0666 less the umask, as os.Create gives, so that
// another user's --report-only can read it on shared storage. The umask is
// process-wide: this test must not run in parallel.
func TestExperimentFilesFollowUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			old := syscall.Umask(tc.umask)
			t.Cleanup(func() { syscall.Umask(old) })
			cfg, out := setup(t)
			var o, e bytes.Buffer
			if code := command([]string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1", "--max-tokens", "50"}, &o, &e); code != 0 {
				t.Fatalf("exit %d: %s", code, e.String())
			}
			seen := map[string]bool{}
			err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(out, path)
				seen[filepath.ToSlash(rel)] = true
				if got := fi.Mode().Perm(); got != tc.want {
					t.Errorf("%s has mode %v with umask %03o, want %v", rel, got, tc.umask, tc.want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"alibi/config.yaml", "alibi/summary.json", "alibi/metrics.jsonl", "alibi/eval.json", "report.json", "report.md", "report.png"} {
				if !seen[name] {
					t.Errorf("the experiment wrote no %s (files: %v)", name, seen)
				}
			}
		})
	}
}
