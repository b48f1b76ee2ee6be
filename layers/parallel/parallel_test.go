package parallel

import (
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
