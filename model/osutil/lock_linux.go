package osutil

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an open file description write lock on the whole of f.
func lockFile(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK} // whence, start and length 0: the whole file
	return lockError(unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk))
}

// lockedBySomeone asks the kernel whether a write lock on f would conflict
// with one held, without taking it (F_OFD_GETLK works on a read-only file).
func lockedBySomeone(f *os.File) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false, lockError(err)
	}
	return lk.Type != unix.F_UNLCK, nil
}

func lockError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES):
		return ErrLocked
	case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%w (%v)", ErrLockUnsupported, err)
	}
	return err
}
