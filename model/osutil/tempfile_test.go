package osutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// setUmask sets the process's umask for the rest of the test. The umask is
// process-wide: tests that call this must not run in parallel.
func setUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// Files written atomically, new or replacing one, and temporary files get
// mode 0666 less the umask, as os.Create gives (os.CreateTemp gives 0600).
func TestFileModesFollowUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}, {0o000, 0o666}} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			setUmask(t, tc.umask)
			dir := t.TempDir()
			fresh := filepath.Join(dir, "summary.json")
			if err := WriteFileAtomic(fresh, []byte("{}")); err != nil {
				t.Fatal(err)
			}
			replaced := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(replaced, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(replaced, []byte("new")); err != nil {
				t.Fatal(err)
			}
			tmp, err := CreateTemp(dir, ".x.tmp-*")
			if err != nil {
				t.Fatal(err)
			}
			tmp.Close()
			for _, p := range []string{fresh, replaced, tmp.Name()} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != tc.want {
					t.Errorf("%s has mode %v with umask %03o, want %v", filepath.Base(p), got, tc.umask, tc.want)
				}
			}
		})
	}
}

// CreateTemp names its file after the pattern and tries another name when
// one is taken, never opening the existing file.
func TestCreateTemp(t *testing.T) {
	for _, tc := range []struct {
		name, pattern string
		taken         []string // files that exist beforehand
		randoms       []string // the random parts drawn, in order
		want          string   // the created file's name
	}{
		{"star replaced", ".f.tmp-*", nil, []string{"7"}, ".f.tmp-7"},
		{"last star replaced", "a*b*c", nil, []string{"7"}, "a*b7c"},
		{"no star: appended", "ck", nil, []string{"7"}, "ck7"},
		{"collision retried", ".f.tmp-*", []string{".f.tmp-1"}, []string{"1", "1", "2"}, ".f.tmp-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range tc.taken {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("someone else's"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			draws := tc.randoms
			f, err := createTemp(dir, tc.pattern, func() string { r := draws[0]; draws = draws[1:]; return r })
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := filepath.Base(f.Name()); got != tc.want || filepath.Dir(f.Name()) != dir {
				t.Fatalf("created %s, want %s in %s", f.Name(), tc.want, dir)
			}
			if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
				t.Fatalf("the new file is not empty: %v %v", fi, err)
			}
			for _, name := range tc.taken {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "someone else's" {
					t.Errorf("existing %s was changed: %q", name, b)
				}
			}
		})
	}
}

func TestCreateTempErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := createTemp(dir, "x*", func() string { return "1" }); !errors.Is(err, fs.ErrExist) {
		t.Errorf("every name taken: got %v, want an error that the file exists", err)
	}
	if _, err := CreateTemp(dir, "a/b*"); err == nil {
		t.Error("a pattern with a path separator was accepted")
	}
	if _, err := CreateTemp(filepath.Join(dir, "missing"), "x*"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: got %v, want an error that it does not exist", err)
	}
}
