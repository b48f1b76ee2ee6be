// Package parallel runs loops on every core in a fixed, machine-independent
// split. The custom ops in layers use it for their kernels and the optimizer
// in train for AdamW and the gradient norm.
//
// The work [0, n) is cut into chunks whose number depends only on n and a
// minimum chunk size, never on the number of cores, and a reduction that
// keeps one partial result per chunk and adds them in chunk order gives the
// same bits on any machine and from run to run. Each worker takes the
// chunks of its own share first and then helps with the others' (see
// Shares), so a worker that starts late just takes fewer. The workers are
// the caller and helper goroutines that stay awake between loops (see Run).
package parallel

import "runtime"

// MaxChunks bounds the number of chunks a loop is cut into.
const MaxChunks = 16

// Workers is the number of goroutines the loops run on: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// NumChunks is the number of chunks [0, n) is cut into: n/minChunk, between 1
// and MaxChunks.
func NumChunks(n, minChunk int) int {
	c := n / max(1, minChunk)
	return min(max(c, 1), MaxChunks)
}

// ChunkBounds returns the half-open range of chunk c of [0, n) cut into chunks.
func ChunkBounds(n, chunks, c int) (lo, hi int) {
	return n * c / chunks, n * (c + 1) / chunks
}

// Chunks runs fn(chunk, lo, hi) on every chunk of [0, n) concurrently and
// returns when all are done.
func Chunks(n, minChunk int, fn func(chunk, lo, hi int)) {
	ChunksOnWorkers(n, minChunk, func(_, chunk, lo, hi int) { fn(chunk, lo, hi) })
}

// ChunksOnWorkers is Chunks that also tells fn which of at most Workers()
// goroutines runs the chunk (0-based), so that each can use its own scratch
// buffer.
func ChunksOnWorkers(n, minChunk int, fn func(worker, chunk, lo, hi int)) {
	chunks := NumChunks(n, minChunk)
	if chunks <= 1 {
		if n > 0 {
			fn(0, 0, 0, n)
		}
		return
	}
	RunShares(min(Workers(), chunks), chunks, func(w, c int) {
		lo, hi := ChunkBounds(n, chunks, c)
		fn(w, c, lo, hi)
	})
}
