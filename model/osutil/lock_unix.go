//go:build unix && !linux

package osutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes flock(2)'s exclusive lock on f without waiting.
func lockFile(f *os.File) error {
	return lockError(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
}

// lockedBySomeone tries flock(2)'s shared lock and releases it at once:
// without Linux's F_OFD_GETLK there is no test that takes nothing, so a
// writer starting in the same instant can see the lock held.
func lockedBySomeone(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		return false, syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	if err = lockError(err); errors.Is(err, ErrLocked) {
		return true, nil
	}
	return false, err
}

func lockError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return ErrLocked
	case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("%w (%v)", ErrLockUnsupported, err)
	}
	return err
}
