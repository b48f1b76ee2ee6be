package osutil

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A second lock on the same file fails at once, whether it is taken in this
// process or another; IsLocked sees the lock without taking it; Unlock and
// the death of the holding process both release it.
func TestFileLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	if locked, err := IsLocked(path); err != nil || locked {
		t.Fatalf("a missing file: locked %v, err %v", locked, err)
	}
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock in the same process: want ErrLocked, got %v", err)
	}
	// Opening and closing the file elsewhere (as IsLocked does) keeps the lock.
	for i := 0; i < 2; i++ {
		if locked, err := IsLocked(path); err != nil || !locked {
			t.Fatalf("held lock, check %d: locked %v, err %v", i, locked, err)
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if locked, err := IsLocked(path); err != nil || locked {
		t.Fatalf("after Unlock: locked %v, err %v", locked, err)
	}

	// Another process takes the lock; while it lives, neither this process
	// nor a third can; once it is killed, the lock is free.
	child := exec.Command(os.Args[0], "-test.run=^TestHoldLockHelper$")
	child.Env = append(os.Environ(), "OSUTIL_HOLD_LOCK="+path)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("the child did not take the lock: %q, %v", line, err)
	}
	if locked, err := IsLocked(path); err != nil || !locked {
		t.Fatalf("lock held by another process: locked %v, err %v", locked, err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock held by another process: want ErrLocked, got %v", err)
	}
	child.Process.Kill()
	child.Wait()
	if locked, err := IsLocked(path); err != nil || locked {
		t.Fatalf("after the holder was killed: locked %v, err %v", locked, err)
	}
	l, err = TryLock(path)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Unlock()
}

// TestHoldLockHelper is the child process of TestFileLock: it takes the lock
// named by OSUTIL_HOLD_LOCK, says so, and waits to be killed.
func TestHoldLockHelper(t *testing.T) {
	path := os.Getenv("OSUTIL_HOLD_LOCK")
	if path == "" {
		t.Skip("run by TestFileLock")
	}
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock() // keeps l reachable: a dropped lock's file is closed when collected
	os.Stdout.WriteString("locked\n")
	// Sleep, not select{}: run without -test.timeout (as TestFileLock runs
	// it), a test binary has no timer, and a goroutine blocked forever with
	// nothing else alive is a deadlock the runtime ends at once, dropping
	// the lock while TestFileLock still expects it held (it failed that way
	// on a busy machine, where the parent is slower than the crash).
	for {
		time.Sleep(time.Hour)
	}
}
