//go:build !unix

package osutil

import "os"

// lockFile: this system has no lock the package knows how to take.
func lockFile(*os.File) error { return ErrLockUnsupported }

func lockedBySomeone(*os.File) (bool, error) { return false, ErrLockUnsupported }
