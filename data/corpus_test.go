package data

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gorootOpticks returns the Opticks text shipped with the Go toolchain, or
// skips the test if it cannot be found.
func gorootOpticks(t *testing.T) []byte {
	t.Helper()
	goroot := os.Getenv("GOROOT")
	if goroot == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Skipf("cannot locate GOROOT: %v", err)
		}
		goroot = strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile(filepath.Join(goroot, "src", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		t.Skipf("GOROOT Opticks text not available: %v", err)
	}
	return b
}

func TestDefaultCorpus(t *testing.T) {
	got, err := DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 567000 || len(got) >= 568000 {
		t.Errorf("len(DefaultCorpus()) = %d, want 567,xxx", len(got))
	}
	if !bytes.HasPrefix(got, []byte("Produced by Suzanne Lybarger")) ||
		!bytes.Contains(got[:300], []byte("OPTICKS:")) {
		t.Errorf("default corpus does not start like Opticks: %q", got[:80])
	}
	want := gorootOpticks(t)
	if len(got) != len(want) {
		t.Fatalf("len(DefaultCorpus()) = %d, GOROOT file has %d", len(got), len(want))
	}
	if !bytes.Equal(got, want) {
		t.Fatal("DefaultCorpus() differs from the GOROOT file")
	}
}

func TestLoadCorpusDefault(t *testing.T) {
	want, err := DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", DefaultCorpusName} {
		got, err := LoadCorpus(path)
		if err != nil {
			t.Fatalf("LoadCorpus(%q): %v", path, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("LoadCorpus(%q) differs from DefaultCorpus()", path)
		}
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadCorpus(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		path  string // relative to the temp dir; "." is the dir itself
		want  string
	}{
		{
			name:  "single file",
			files: map[string]string{"a.txt": "hello\x00\xffworld"},
			path:  "a.txt",
			want:  "hello\x00\xffworld",
		},
		{
			name: "nested directory sorted by path",
			files: map[string]string{
				"b.txt":       "B",
				"a/z.txt":     "AZ",
				"a/b/c.txt":   "ABC",
				"a-b":         "A-B", // '-' sorts before '/', so before a/...
				"a.txt":       "A.",  // '.' sorts after '-' but before '/'
				"c/d/e/f.txt": "CDEF",
			},
			path: ".",
			want: "A-B" + "A." + "ABC" + "AZ" + "B" + "CDEF",
		},
		{
			name: "hidden files and directories skipped",
			files: map[string]string{
				"x.txt":           "X",
				".hidden":         "H",
				".git/config":     "G",
				"sub/.secret.txt": "S",
				"sub/y.txt":       "Y",
				"sub/.d/z.txt":    "Z",
			},
			path: ".",
			want: "YX", // "sub/y.txt" sorts before "x.txt"
		},
		{
			name: "directory given by nested path",
			files: map[string]string{
				"corp/1": "one",
				"corp/2": "two",
				"other":  "no",
			},
			path: "corp",
			want: "onetwo",
		},
		{
			name: "empty files contribute nothing",
			files: map[string]string{
				"a": "",
				"b": "data",
			},
			path: ".",
			want: "data",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			got, err := LoadCorpus(filepath.Join(dir, tt.path))
			if err != nil {
				t.Fatalf("LoadCorpus: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("LoadCorpus = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		path     string
		want     string
		notExist bool
	}{
		{
			name:  "empty file",
			files: map[string]string{"empty.txt": ""},
			path:  "empty.txt",
			want:  "empty.txt is empty",
		},
		{
			name:  "directory with only hidden and empty files",
			files: map[string]string{"d/.h": "hidden", "d/e": ""},
			path:  "d",
			want:  "is empty",
		},
		{
			name: "empty directory",
			path: ".",
			want: "is empty",
		},
		{
			name:     "missing path",
			path:     "does-not-exist.txt",
			want:     "does-not-exist.txt: no such file or directory",
			notExist: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			path := filepath.Join(dir, tt.path)
			got, err := LoadCorpus(path)
			if err == nil {
				t.Fatalf("LoadCorpus(%q) = %d bytes, want error", path, len(got))
			}
			if !strings.HasPrefix(err.Error(), "corpus ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			if tt.notExist && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %q does not wrap fs.ErrNotExist", err)
			}
		})
	}
}
