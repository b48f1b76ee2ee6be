package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FaultEnv names an environment variable for crash tests: with
// "kill-in-checkpoint:N", the process writes half of step N's checkpoint to
// its temporary file and then kills itself with SIGKILL, as a power cut or
// the OOM killer would in the middle of a write.
const FaultEnv = "ALIBI_FAULT"

// crashInCheckpoint simulates that crash if FaultEnv asks for it at step.
func crashInCheckpoint(step int, final string, data []byte) {
	v, ok := strings.CutPrefix(os.Getenv(FaultEnv), "kill-in-checkpoint:")
	if !ok {
		return
	}
	if n, err := strconv.Atoi(v); err != nil || n != step {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err == nil {
		f.Write(data[:len(data)/2])
		f.Sync()
	}
	fmt.Fprintf(os.Stderr, "%s: killing the process in the middle of writing %s\n", FaultEnv, final)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; never return
}
