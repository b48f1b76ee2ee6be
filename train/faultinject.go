//go:build faultinject

// Fault injection for the tests of cmd/train, which build the command with
// -tags faultinject (cmd/train/kill_test.go). Normal builds compile
// nofault.go instead and carry none of this: no environment variable, no
// code that kills the process.

package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/alibi-go/alibi/model/osutil"
)

// faultEnv names the environment variable that injects a fault: with
// "kill-in-checkpoint:N", the process writes half of step N's checkpoint to
// its temporary file and then kills itself with SIGKILL, as a power cut or
// the OOM killer would in the middle of a write; with "nan-loss:N", the loss
// of step N is NaN.
const faultEnv = "ALIBI_FAULT"

// faultInjection says that this build honours faultEnv.
const faultInjection = true

// crashInCheckpoint simulates that crash if faultEnv asks for it at step.
func crashInCheckpoint(step int, final string, data []byte) {
	v, ok := strings.CutPrefix(os.Getenv(faultEnv), "kill-in-checkpoint:")
	if !ok {
		return
	}
	if n, err := strconv.Atoi(v); err != nil || n != step {
		return
	}
	f, err := osutil.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err == nil {
		f.Write(data[:len(data)/2])
		f.Sync()
	}
	fmt.Fprintf(os.Stderr, "%s: killing the process in the middle of writing %s\n", faultEnv, final)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; never return
}

// faultNaNLoss reports whether faultEnv asks for the loss of step to be
// replaced by NaN ("nan-loss:N"), as a diverging run would produce, so that
// tests can check what happens after a bad step.
func faultNaNLoss(step int) bool {
	v, ok := strings.CutPrefix(os.Getenv(faultEnv), "nan-loss:")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(v)
	return err == nil && n == step
}
