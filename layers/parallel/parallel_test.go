package parallel

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

func TestChunksCoverEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, minChunk, wantChunks int }{
		{0, 1, 1}, {1, 1, 1}, {5, 1, 5}, {5, 10, 1}, {100, 1, MaxChunks}, {100, 30, 3}, {1000, 0, MaxChunks},
	} {
		if got := NumChunks(tc.n, tc.minChunk); got != tc.wantChunks {
			t.Errorf("NumChunks(%d, %d) = %d, want %d", tc.n, tc.minChunk, got, tc.wantChunks)
		}
		seen := make([]int, tc.n)
		var mu sync.Mutex
		chunks := map[int]bool{}
		Chunks(tc.n, tc.minChunk, func(c, lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			chunks[c] = true
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d minChunk=%d: index %d visited %d times", tc.n, tc.minChunk, i, s)
			}
		}
		if tc.n > 0 && len(chunks) != tc.wantChunks {
			t.Errorf("n=%d minChunk=%d: %d chunks ran, want %d", tc.n, tc.minChunk, len(chunks), tc.wantChunks)
		}
	}
}

// The split does not depend on the number of cores, and workers are numbered
// below Workers().
func TestChunksIndependentOfCores(t *testing.T) {
	split := func(procs int) [][2]int {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		out := make([][2]int, NumChunks(1000, 7))
		var mu sync.Mutex
		ChunksOnWorkers(1000, 7, func(w, c, lo, hi int) {
			if w < 0 || w >= procs {
				t.Errorf("worker %d with GOMAXPROCS %d", w, procs)
			}
			mu.Lock()
			out[c] = [2]int{lo, hi}
			mu.Unlock()
		})
		return out
	}
	one, four := split(1), split(4)
	for c := range one {
		if one[c] != four[c] {
			t.Fatalf("chunk %d is %v with 1 core and %v with 4", c, one[c], four[c])
		}
	}
}

// Every task is handed out once, whichever workers ask; a worker alone
// takes its own share in order, then the next workers' shares in turn.
func TestSharesHandOutEachTaskOnce(t *testing.T) {
	for _, tc := range []struct{ workers, n int }{{1, 0}, {1, 5}, {2, 1}, {2, 7}, {3, 16}, {4, 3}} {
		for w := range tc.workers {
			s := NewShares(tc.workers, tc.n)
			var got, want []int
			for task, ok := s.Next(w); ok; task, ok = s.Next(w) {
				got = append(got, task)
			}
			for i := range tc.workers {
				v := (w + i) % tc.workers
				for task := tc.n * v / tc.workers; task < tc.n*(v+1)/tc.workers; task++ {
					want = append(want, task)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%d workers, %d tasks: worker %d alone took %v, want %v", tc.workers, tc.n, w, got, want)
			}
		}
		// Worker w asks w+1 times a round, so the first workers run out
		// of their own tasks and take the others'.
		s := NewShares(tc.workers, tc.n)
		seen := make([]int, tc.n)
		for done := false; !done; {
			done = true
			for w := range tc.workers {
				for range w + 1 {
					if task, ok := s.Next(w); ok {
						seen[task]++
						done = false
					}
				}
			}
		}
		for task, c := range seen {
			if c != 1 {
				t.Fatalf("%d workers, %d tasks: task %d handed out %d times", tc.workers, tc.n, task, c)
			}
		}
	}
}

// Concurrent workers take every task once.
func TestSharesConcurrent(t *testing.T) {
	const n = 10000
	s := NewShares(4, n)
	var counts [n]int32
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for task, ok := s.Next(w); ok; task, ok = s.Next(w) {
				counts[task]++ // each task once, so no two goroutines write one element
			}
		}()
	}
	wg.Wait()
	for task, c := range counts {
		if c != 1 {
			t.Fatalf("task %d taken %d times", task, c)
		}
	}
}
