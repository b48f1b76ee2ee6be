//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int world_size(void) { int n; MPI_Comm_size(MPI_COMM_WORLD, &n); return n; }
static int world_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int allreduce_sum_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int bcast_bytes(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}
static void abort_world(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Built reports whether the package was built with MPI (the tag mpi).
const Built = true

// Comm is MPI_COMM_WORLD. Its calls are collective: every rank makes the
// same calls in the same order. They run on the OS thread that initialised
// MPI (MPI_THREAD_FUNNELED), which World locks for the rest of the
// program's life; call them from that goroutine.
type Comm struct {
	size, rank int
}

var (
	once  sync.Once
	world *Comm
	err0  error
)

// World initialises MPI (once) and returns the communicator of every
// process the launcher started. It locks the calling goroutine to its OS
// thread, as MPI funnels its calls through one thread.
func World() (*Comm, error) {
	once.Do(func() {
		runtime.LockOSThread()
		var provided C.int
		if rc := C.MPI_Init_thread(nil, nil, C.MPI_THREAD_FUNNELED, &provided); rc != C.MPI_SUCCESS {
			err0 = fmt.Errorf("mpi: MPI_Init_thread failed (code %d)", int(rc))
			return
		}
		if provided < C.MPI_THREAD_FUNNELED {
			err0 = fmt.Errorf("mpi: the MPI library grants thread level %d, below MPI_THREAD_FUNNELED", int(provided))
			C.abort_world(1)
			return
		}
		world = &Comm{size: int(C.world_size()), rank: int(C.world_rank())}
	})
	return world, err0
}

// Size is the number of ranks.
func (c *Comm) Size() int { return c.size }

// Rank is this process's rank, 0..Size-1.
func (c *Comm) Rank() int { return c.rank }

// AllreduceSum replaces buf, on every rank, by its element-wise sum over
// the ranks (in place, float32).
func (c *Comm) AllreduceSum(buf []float32) error {
	for len(buf) > 0 { // MPI counts are C ints
		n := min(len(buf), 1<<30)
		if rc := C.allreduce_sum_f32((*C.float)(unsafe.Pointer(&buf[0])), C.int(n)); rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: MPI_Allreduce failed (code %d)", int(rc))
		}
		buf = buf[n:]
	}
	return nil
}

// Bcast copies buf from rank root to every other rank (each passes a buffer
// of the same length).
func (c *Comm) Bcast(buf []byte, root int) error {
	for len(buf) > 0 {
		n := min(len(buf), 1<<30)
		if rc := C.bcast_bytes(unsafe.Pointer(&buf[0]), C.int(n), C.int(root)); rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: MPI_Bcast failed (code %d)", int(rc))
		}
		buf = buf[n:]
	}
	return nil
}

// Abort ends every rank of the job with code: for a rank that cannot go on
// while the others wait on it.
func (c *Comm) Abort(code int) { C.abort_world(C.int(code)) }

// Finalize ends MPI; no call may follow.
func (c *Comm) Finalize() error {
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Finalize failed (code %d)", int(rc))
	}
	return nil
}
