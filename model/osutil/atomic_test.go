package osutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// failingFile fails its writes after limit bytes, like a full disk.
type failingFile struct {
	*os.File
	limit int
}

func (f *failingFile) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.File.Write(p[:f.limit])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.limit -= len(p)
	return f.File.Write(p)
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	for _, content := range []string{"first", "second, longer", "3"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("after writing %q the file holds %q (%v)", content, got, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("want only the file in its directory, got %d entries", len(entries))
	}
}

// A write that fails half way (disk full) leaves the previous file intact
// and no temporary file behind.
func TestWriteFileAtomicDiskFullKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.safetensors")
	before := bytes.Repeat([]byte("old"), 1000)
	if err := WriteFileAtomic(path, before); err != nil {
		t.Fatal(err)
	}
	full := func(dir, pattern string) (tempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		return &failingFile{File: f, limit: 1000}, err
	}
	err := writeFileAtomic(path, bytes.Repeat([]byte("new"), 1000), full)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want a no-space error, got %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the previous file was changed by a failed write")
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, ".*")); len(temps) != 0 {
		t.Fatalf("temporary files left behind: %v", temps)
	}
}

func TestWriteFileAtomicMissingDirectory(t *testing.T) {
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x")); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}
