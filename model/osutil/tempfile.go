package osutil

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxTempTries bounds how many names CreateTemp tries before giving up, as
// os.CreateTemp does.
const maxTempTries = 10000

// CreateTemp creates a new file in dir (the system's temporary directory if
// dir is empty) and opens it for reading and writing, like os.CreateTemp:
// its name is pattern with the last "*" replaced by a random string (or the
// string appended if there is no "*"). Unlike os.CreateTemp, which creates
// the file with mode 0600, it asks for 0666 and lets the kernel apply the
// process's umask, as os.Create does, so that a file written through a
// temporary one ends up as readable as any other file the project writes.
func CreateTemp(dir, pattern string) (*os.File, error) {
	return createTemp(dir, pattern, func() string { return strconv.FormatUint(uint64(rand.Uint32()), 10) })
}

// createTemp is CreateTemp with the random part of the name as a parameter,
// so that tests can force name collisions.
func createTemp(dir, pattern string, random func() string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if strings.ContainsRune(pattern, os.PathSeparator) {
		return nil, &fs.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains a path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for range maxTempTries {
		// O_EXCL: never open a file that exists, whoever made it; the
		// permission is used only when the file is created.
		f, err := os.OpenFile(filepath.Join(dir, prefix+random()+suffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
