package osutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
//
// What path names is written, never replaced: a symbolic link to a regular
// file has that file replaced, atomically, and the link kept; a path that is
// (or links to) a device, a pipe or a socket, such as /dev/stdout, is
// written through, in place; a directory is refused.
func WriteFileAtomic(path string, data []byte) error {
	target, through, err := outputTarget(path)
	if err != nil {
		return err
	}
	if through {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return writeFileAtomic(target, data, func(dir, pattern string) (tempFile, error) { return CreateTemp(dir, pattern) })
}

// outputTarget returns the file that writing path replaces (path, or the
// regular file a symbolic link at path resolves to), or through when path
// is not a regular file to replace but a device, a pipe or a socket to
// write to in place. A directory is an error.
func outputTarget(path string) (target string, through bool, err error) {
	fi, err := os.Stat(path) // follows links
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return "", false, fmt.Errorf("%s is a symbolic link to a file that does not exist", path)
		}
		return path, false, nil
	case err != nil:
		return "", false, err
	case fi.IsDir():
		return "", false, fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular():
		return path, true, nil
	}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved, false, nil
	}
	return path, false, nil
}

// CheckOutput checks, before the work that produces it, that a file can be
// written at path by WriteFileAtomic: path is not a directory, and its
// directory (or a regular file a link at path resolves to) lets a file be
// created there. The error names path as given.
func CheckOutput(path string) error {
	target, through, err := outputTarget(path)
	if err != nil {
		return err
	}
	if through {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s cannot be written: %w", path, PathReason(err))
		}
		return f.Close()
	}
	dir := filepath.Dir(target)
	if di, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s cannot be written: its directory %s: %w", path, dir, PathReason(err))
	} else if !di.IsDir() {
		return fmt.Errorf("%s cannot be written: %s is not a directory", path, dir)
	}
	f, err := CreateTemp(dir, "."+filepath.Base(target)+".check-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, PathReason(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// PathReason is the reason of a file system error without the path it
// names ("no such file or directory"), for a message that names the path
// itself; other errors are returned as they are.
func PathReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
