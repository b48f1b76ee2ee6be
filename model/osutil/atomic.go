package osutil

import (
	"io"
	"os"
	"path/filepath"
)

// tempFile is the part of *os.File that WriteFileAtomic uses.
type tempFile interface {
	io.Writer
	Name() string
	Sync() error
	Close() error
}

// WriteFileAtomic replaces path with data so that readers and crashes only
// ever see the complete old or the complete new contents: it writes a
// temporary file in the same directory, syncs it, renames it into place and
// syncs the directory. On error the old file is untouched and the temporary
// file is removed. The new file's mode is 0666 less the process's umask, as
// os.Create would give it (see CreateTemp).
func WriteFileAtomic(path string, data []byte) error {
	return writeFileAtomic(path, data, func(dir, pattern string) (tempFile, error) { return CreateTemp(dir, pattern) })
}

// writeFileAtomic is WriteFileAtomic with the temporary file's constructor as
// a parameter, so that tests can inject write faults.
func writeFileAtomic(path string, data []byte, createTemp func(dir, pattern string) (tempFile, error)) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
