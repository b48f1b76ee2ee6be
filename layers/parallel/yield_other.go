//go:build !linux

package parallel

// osYield does nothing here: polling yields only to this process's
// goroutines (runtime.Gosched).
func osYield() {}
