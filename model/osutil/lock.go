package osutil

import (
	"errors"
	"os"
)

// ErrLocked is returned by TryLock when another open file, in this process
// or any other, holds the lock.
var ErrLocked = errors.New("locked by another process")

// ErrLockUnsupported is returned by TryLock and IsLocked when the file
// system does not support advisory locks (an NFS mount without a lock
// service, a Lustre client mounted with noflock).
var ErrLockUnsupported = errors.New("the file system does not support file locks")

// FileLock is an exclusive advisory lock on a file, held from TryLock until
// Unlock or until the process ends, however it ends: the kernel releases it
// with the process's last reference to the open file, so a killed process
// never leaves a stale lock.
//
// On Linux the lock is an open file description lock (fcntl F_OFD_SETLK):
// it belongs to the open file, not to the process, so opening and closing
// the same file elsewhere in the process (IsLocked, a reader) does not
// release it, and a second TryLock in the same process conflicts with the
// first as one from another process would. Over NFS the client forwards
// such locks to the server (NFSv4's own locking, or NLM for NFSv3), so they
// hold between machines. Elsewhere on Unix the lock is flock(2).
type FileLock struct {
	f *os.File
}

// TryLock opens path (creating it with mode 0666 less the umask) and takes
// an exclusive lock on it without waiting. It returns an error wrapping
// ErrLocked when another open file holds the lock, and one wrapping
// ErrLockUnsupported when the file system has no locks.
func TryLock(path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &FileLock{f: f}, nil
}

// File is the locked file, open for reading and writing: the holder may
// write what it likes into it (who holds the lock, say).
func (l *FileLock) File() *os.File { return l.f }

// Unlock releases the lock and closes the file.
func (l *FileLock) Unlock() error { return l.f.Close() }

// IsLocked reports whether an open file holds the lock on path now. It never
// blocks and, on Linux, never takes the lock itself, so it cannot make a
// writer that starts at the same moment fail. A missing file is not locked.
func IsLocked(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	return lockedBySomeone(f)
}
