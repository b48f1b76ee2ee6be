package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A training step runs a few hundred parallel sections (products, the
// attention, elementwise ops) with short serial stretches between them. A
// goroutine started with `go` for each section runs on a thread that the
// operating system must wake first, which takes from a few to tens of
// microseconds on every section, and a worker that blocks at the end of a
// section sends its thread back to sleep. Run instead hands sections to
// helpers that poll for the next one for a short while (SpinFor) before they
// block, and waits for them by polling too, so that sections which follow
// each other closely start on threads that are already awake.

// SpinFor is how long an idle helper, and a caller waiting for its helpers,
// poll before they block. The polling yields the processor on every round
// (runtime.Gosched), so other goroutines still run, and after its first
// 50 µs it also yields the thread to the operating system (see pollUntil),
// so that other programs' threads still run on a busy machine. It is long
// enough to span the serial stretches of a training step (the longest, a
// bias gradient's sums or a LayerNorm's statistics between two products,
// take a few hundred microseconds): a helper that blocks there must be
// woken by the operating system, which took tens of microseconds or more
// each time on a virtual machine. Against 50 µs, 2 ms made the small
// model's step about 1.07x and the tiny one's 1.03–1.05x faster (steps
// alternating in one process, Intel Xeon family 6 model 207); 10 ms gained
// nothing more.
const SpinFor = 2 * time.Millisecond

// Run calls fn(0), ..., fn(n-1) concurrently and returns when all have
// returned: fn(0) runs on the calling goroutine, the others on helper
// goroutines. fn may itself call Run (or Chunks); a helper that is busy is
// never waited for, since a new one is started instead.
func Run(n int, fn func(worker int)) {
	if n <= 0 {
		return
	}
	if n == 1 {
		fn(0)
		return
	}
	s := &section{fn: fn, done: make(chan struct{})}
	s.left.Store(int32(n - 1))
	for w := 1; w < n; w++ {
		idle.get().give(task{s, w})
	}
	fn(0)
	if !pollUntil(func() bool { return s.left.Load() == 0 }) {
		<-s.done
	}
}

// section is one call of Run: its function and the number of helpers that
// have not finished it yet (done is closed when that reaches zero).
type section struct {
	fn   func(worker int)
	left atomic.Int32
	done chan struct{}
}

// task is worker w's share of a section.
type task struct {
	s *section
	w int
}

// helper is a goroutine that runs the tasks handed to it, one at a time.
// Its channel holds at most the one task of the section that took it from
// the idle list.
type helper struct{ tasks chan task }

func (h *helper) give(t task) { h.tasks <- t }

// loop runs tasks as they come, polling for SpinFor after each before it
// blocks, and puts itself back on the idle list after each.
func (h *helper) loop() {
	for {
		t := h.next()
		t.s.fn(t.w)
		// Back on the idle list before the section learns it is done, so
		// that the caller's next section finds this helper.
		idle.put(h)
		if t.s.left.Add(-1) == 0 {
			close(t.s.done)
		}
	}
}

// next returns the next task, polling for SpinFor before it blocks.
func (h *helper) next() task {
	var t task
	if pollUntil(func() bool {
		select {
		case t = <-h.tasks:
			return true
		default:
			return false
		}
	}) {
		return t
	}
	return <-h.tasks
}

// pollUntil calls cond, yielding the processor between calls, until it
// returns true or SpinFor has passed; it reports whether cond returned true.
// After the first yieldAfter it also yields the thread to the operating
// system on every round (osYield), so that a poll of up to SpinFor does not
// keep a core from another program's threads: with two trainings on two
// cores, polling that only yielded to goroutines took a third of the
// throughput of the process that polled longer.
func pollUntil(cond func() bool) bool {
	var start time.Time
	osYields := false
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i&63 == 0 {
			if i == 0 {
				start = time.Now()
			} else if since := time.Since(start); since > SpinFor {
				return false
			} else {
				osYields = since > yieldAfter
			}
		}
		runtime.Gosched()
		if osYields {
			osYield()
		}
	}
}

// yieldAfter is how long pollUntil polls before it also yields the thread
// to the operating system on every round.
const yieldAfter = 50 * time.Microsecond

// helpers is the list of idle helpers, shared by every caller of Run: it
// grows to the most sections that ever ran at once (usually Workers()-1
// helpers) and never shrinks; an idle helper that has stopped polling costs
// a blocked goroutine.
type helpers struct {
	mu   sync.Mutex
	free []*helper
}

var idle helpers

// get returns an idle helper, starting a new one if there is none.
func (l *helpers) get() *helper {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		h := l.free[n-1]
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return h
	}
	l.mu.Unlock()
	h := &helper{tasks: make(chan task, 1)}
	go h.loop()
	return h
}

func (l *helpers) put(h *helper) {
	l.mu.Lock()
	l.free = append(l.free, h)
	l.mu.Unlock()
}
