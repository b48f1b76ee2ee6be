package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alibi-go/alibi/model/osutil"
)

// LockFile is the file of a run directory that the one process writing the
// run holds locked (see RunLock). It names that process: its PID, host and
// start time.
const LockFile = "run.lock"

// ErrRunLocked is returned when another process is writing the run
// directory: nothing was changed.
var ErrRunLocked = errors.New("is being written by another process")

// RunLock is the exclusive right to write one run directory: its config,
// checkpoints, metrics, summary and evaluations. It is an advisory lock on
// the directory's LockFile, released by Unlock or by the kernel when the
// process ends, however it ends.
type RunLock struct {
	lock *osutil.FileLock
	dir  string
}

// LockRun creates dir if needed and takes its lock without waiting. A
// directory that another process is writing gives an error wrapping
// ErrRunLocked that names the holder (PID, host, since when); a file system
// without locks gives one wrapping osutil.ErrLockUnsupported.
func LockRun(dir string) (*RunLock, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	l, err := osutil.TryLock(path)
	switch {
	case errors.Is(err, osutil.ErrLocked):
		return nil, fmt.Errorf("%s %w (%s)", dir, ErrRunLocked, readHolder(path))
	case err != nil:
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d host %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	f := l.File()
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(holder), 0)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		l.Unlock()
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	return &RunLock{lock: l, dir: dir}, nil
}

// Unlock releases the run directory for another writer.
func (l *RunLock) Unlock() error { return l.lock.Unlock() }

// Dir is the locked run directory.
func (l *RunLock) Dir() string { return l.dir }

// RunWriter reports whether a process is writing the run directory now, and
// which ("PID 123 on host node7, since 2026-11-23T20:51:02Z"). It never
// blocks and never takes the lock, so readers (evaluation, reports) can call
// it while runs train.
func RunWriter(dir string) (holder string, writing bool, err error) {
	path := filepath.Join(dir, LockFile)
	locked, err := osutil.IsLocked(path)
	if err != nil || !locked {
		return "", false, err
	}
	return readHolder(path), true, nil
}

// readHolder describes the process named in a lock file. The holder writes
// its name just after taking the lock, so an empty file is read again for a
// moment before giving up.
func readHolder(path string) string {
	for i := 0; ; i++ {
		b, _ := os.ReadFile(path)
		f := strings.Fields(string(b))
		if len(f) == 6 && f[0] == "pid" && f[2] == "host" && f[4] == "since" {
			if _, err := strconv.Atoi(f[1]); err == nil {
				return fmt.Sprintf("PID %s on host %s, since %s", f[1], f[3], f[5])
			}
		}
		if i == 20 {
			return "a process that has not named itself in " + path
		}
		time.Sleep(10 * time.Millisecond)
	}
}
