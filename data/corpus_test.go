package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
		// The digest of the Go toolchain's copy of Opticks, computed with
		// sha256sum(1).
		const opticksSHA256 = "d4a9ac22462b35e7821a4f2706c211093da678620a8f9997989ee7cf8d507bbd"
		if got.SHA256 != opticksSHA256 || got.Files != 1 || got.GoVersion != "" {
			t.Errorf("LoadCorpus(%q): SHA256 %s, %d files, Go %q; want %s, 1, \"\"", path, got.SHA256, got.Files, got.GoVersion, opticksSHA256)
		}
		if !bytes.Equal(got.Bytes, want) {
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
			if string(got.Bytes) != tt.want {
				t.Errorf("LoadCorpus = %q, want %q", got.Bytes, tt.want)
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
				t.Fatalf("LoadCorpus(%q) = %d bytes, want error", path, len(got.Bytes))
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

// fakeGoroot writes a Go installation with a VERSION file and some files
// under src, and points GOROOT at it.
func fakeGoroot(t *testing.T, version string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	if version != "" {
		writeFiles(t, root, map[string]string{"VERSION": version})
	}
	t.Setenv("GOROOT", root)
	return root
}

func TestLoadCorpusGoroot(t *testing.T) {
	fakeGoroot(t, "go1.99.1\ntime 2030-01-01T00:00:00Z\n", map[string]string{
		"src/b/b.go":             "package b\n",
		"src/a/a.go":             "package a\n",
		"src/a/a_test.go":        "package a_test\n",
		"src/a/README":           "not Go",
		"src/a/.hidden.go":       "hidden",
		"src/a/testdata/t.go":    "package t\n",
		"src/z.go":               "package z\n",
		"misc/outside/o.go":      "package o\n",
		"src/a/b/c/deep.go.orig": "no",
	})
	var calls [][2]int64
	c, err := LoadCorpusProgress("goroot:src", func(read, total int64) { calls = append(calls, [2]int64{read, total}) })
	if err != nil {
		t.Fatal(err)
	}
	want := "package a\n" + "package a_test\n" + "package t\n" + "package b\n" + "package z\n"
	if string(c.Bytes) != want {
		t.Errorf("goroot:src = %q, want %q", c.Bytes, want)
	}
	sum := sha256.Sum256([]byte(want))
	if c.GoVersion != "go1.99.1" || c.Files != 5 || c.SHA256 != hex.EncodeToString(sum[:]) || c.Spec != "goroot:src" {
		t.Errorf("got Go %q, %d files, SHA256 %s, spec %q", c.GoVersion, c.Files, c.SHA256, c.Spec)
	}
	if len(calls) != 5 || calls[4] != [2]int64{int64(len(want)), int64(len(want))} {
		t.Errorf("progress calls %v, want 5 ending at the total", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] <= calls[i-1][0] {
			t.Errorf("progress went from %v to %v", calls[i-1], calls[i])
		}
	}
	sub, err := LoadCorpus("goroot:src/b")
	if err != nil || string(sub.Bytes) != "package b\n" {
		t.Errorf("goroot:src/b = %q, %v", sub.Bytes, err)
	}
}

func TestLoadCorpusGorootErrors(t *testing.T) {
	t.Run("no Go installation", func(t *testing.T) {
		t.Setenv("GOROOT", "")
		t.Setenv("PATH", t.TempDir())
		_, err := LoadCorpus("goroot:src")
		if err == nil || !strings.Contains(err.Error(), "set GOROOT, or set data.corpus to a directory") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("want a one-line error saying how to point at a directory, got %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		fakeGoroot(t, "go1.99.1", map[string]string{"src/a.go": "package a"})
		_, err := LoadCorpus("goroot:nosuch")
		if err == nil || !strings.Contains(err.Error(), "nosuch is not a directory") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no VERSION", func(t *testing.T) {
		fakeGoroot(t, "", map[string]string{"src/a.go": "package a"})
		_, err := LoadCorpus("goroot:src")
		if err == nil || !strings.Contains(err.Error(), "no VERSION file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no go files", func(t *testing.T) {
		fakeGoroot(t, "go1.99.1", map[string]string{"src/a.txt": "text"})
		_, err := LoadCorpus("goroot:src")
		if err == nil || !strings.Contains(err.Error(), "corpus goroot:src is empty") {
			t.Fatalf("got %v", err)
		}
	})
}

// The real Go installation's source loads, and in about its own size: the
// bytes are held once, not as one int per token.
func TestLoadCorpusRealGoroot(t *testing.T) {
	if testing.Short() {
		t.Skip("reads about 90 MB")
	}
	if _, err := goroot(); err != nil {
		t.Skip(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := LoadCorpus("goroot:src/unicode")
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !strings.HasPrefix(c.GoVersion, "go1.") || c.Files < 5 || !bytes.Contains(c.Bytes, []byte("package unicode")) {
		t.Fatalf("goroot:src/unicode: Go %q, %d files", c.GoVersion, c.Files)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(c.Bytes))+1<<20 {
		t.Errorf("loading %d bytes allocated %d bytes", len(c.Bytes), grew)
	}
}
