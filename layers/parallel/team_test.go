package parallel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Run calls every worker exactly once and returns only after all of them,
// whether the helpers are still polling (back-to-back sections) or have
// blocked (a pause longer than SpinFor), with nested and concurrent calls.
func TestRunCallsEveryWorkerOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		pause time.Duration // between sections
	}{
		{"none", 0, 0}, {"one", 1, 0}, {"back to back", 4, 0},
		{"after helpers blocked", 3, 4 * SpinFor}, {"many", 33, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for section := 0; section < 20; section++ {
				calls := make([]atomic.Int32, tc.n)
				Run(tc.n, func(w int) {
					time.Sleep(time.Duration(w%3) * time.Microsecond)
					calls[w].Add(1)
				})
				for w := range calls {
					if got := calls[w].Load(); got != 1 {
						t.Fatalf("section %d: worker %d ran %d times after Run returned", section, w, got)
					}
				}
				time.Sleep(tc.pause)
			}
		})
	}
}

func TestRunNestedAndConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				Run(3, func(int) {
					// Every worker of every outer section runs an inner one:
					// it must not wait for a helper that is busy with the
					// outer section.
					Run(2, func(int) { total.Add(1) })
				})
			}
		}()
	}
	wg.Wait()
	if got, want := total.Load(), int64(4*50*3*2); got != want {
		t.Errorf("%d inner calls, want %d", got, want)
	}
}

// pollUntil sees a condition that turns true while it polls, before and
// after it starts yielding to the operating system, and gives up after
// SpinFor when it never does.
func TestPollUntil(t *testing.T) {
	for _, after := range []time.Duration{0, yieldAfter / 2, 4 * yieldAfter, SpinFor / 2} {
		start := time.Now()
		if !pollUntil(func() bool { return time.Since(start) >= after }) {
			t.Errorf("a condition true after %v: pollUntil gave up after %v", after, time.Since(start))
		}
	}
	start := time.Now()
	if pollUntil(func() bool { return false }) {
		t.Fatal("pollUntil reported a condition that never held")
	}
	if d := time.Since(start); d < SpinFor {
		t.Errorf("pollUntil gave up after %v, before SpinFor (%v)", d, SpinFor)
	}
}
