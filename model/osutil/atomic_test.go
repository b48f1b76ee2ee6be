package osutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// A symbolic link keeps pointing at the file it named, which gets the new
// contents; a device or a pipe is written in place and never replaced by a
// regular file; a directory is refused.
func TestWriteFileAtomicWritesThrough(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a %v", fi.Mode())
	}
	if b, _ := os.ReadFile(file); string(b) != "new" {
		t.Errorf("the linked file holds %q", b)
	}
	// /dev/null is a device: written through, and still a device after.
	if err := WriteFileAtomic("/dev/null", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat("/dev/null"); fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/null is now a %v", fi.Mode())
	}
	// A pipe: the reader gets the bytes, and the path stays a pipe.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pipe := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if err := WriteFileAtomic(pipe, []byte("through")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "through" {
		t.Errorf("the pipe got %q", b)
	}
	if err := WriteFileAtomic(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "none"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "dangling"), []byte("x")); err == nil {
		t.Errorf("a dangling link was written")
	}
}

// CheckOutput refuses, naming the path given, what WriteFileAtomic would
// fail to write, and leaves nothing behind.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct{ path, want string }{
		{dir, "is a directory"},
		{filepath.Join(file, "x.json"), "not a directory"},
		{filepath.Join(dir, "none", "x.json"), "no such file or directory"},
		{"/proc/x.json", "cannot be written"},
	} {
		if err := CheckOutput(c.path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	for _, ok := range []string{filepath.Join(dir, "new.json"), file, "/dev/null"} {
		if err := CheckOutput(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left in the directory, want 1", len(entries))
	}
}
