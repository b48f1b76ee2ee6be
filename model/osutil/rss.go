// Package osutil holds the operating-system helpers every part of the project
// shares: replacing a file atomically, so a crash never leaves a torn
// checkpoint, report or metrics file (through a temporary file whose mode,
// like that of any file os.Create makes, is 0666 less the umask), and
// sampling this process's resident memory, for the peak figures that
// training and evaluation report.
package osutil

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RSSSampler tracks the peak resident memory of this process over a phase,
// sampling /proc/self/statm in the background (the kernel's own high-water
// mark covers the whole process life, not one phase).
type RSSSampler struct {
	mu   sync.Mutex
	peak int64
	stop chan struct{}
	done chan struct{}
}

// StartRSS starts sampling every 100 ms. (Sampling every 10 ms measurably
// slowed training: about 8% fewer tokens/s on 2 cores.)
func StartRSS() *RSSSampler {
	s := &RSSSampler{peak: CurrentRSS(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.observe(CurrentRSS())
			}
		}
	}()
	return s
}

func (s *RSSSampler) observe(r int64) {
	s.mu.Lock()
	if r > s.peak {
		s.peak = r
	}
	s.mu.Unlock()
}

// Peak is the highest resident set size seen so far, in bytes.
func (s *RSSSampler) Peak() int64 {
	s.observe(CurrentRSS())
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Stop ends sampling and returns the peak.
func (s *RSSSampler) Stop() int64 {
	close(s.stop)
	<-s.done
	return s.Peak()
}

// CurrentRSS is this process's resident set size in bytes (0 where
// /proc is unavailable).
func CurrentRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
