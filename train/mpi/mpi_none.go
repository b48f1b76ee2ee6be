//go:build !mpi

package mpi

// Built reports whether the package was built with MPI (the tag mpi).
const Built = false

// Comm is MPI_COMM_WORLD; without the tag mpi there is none.
type Comm struct{}

// World returns ErrNotBuilt: this build has no MPI.
func World() (*Comm, error) { return nil, ErrNotBuilt }

// Size is 1.
func (*Comm) Size() int { return 1 }

// Rank is 0.
func (*Comm) Rank() int { return 0 }

// AllreduceSum leaves buf as it is.
func (*Comm) AllreduceSum([]float32) error { return ErrNotBuilt }

// Bcast leaves buf as it is.
func (*Comm) Bcast([]byte, int) error { return ErrNotBuilt }

// Abort does nothing.
func (*Comm) Abort(int) {}

// Finalize does nothing.
func (*Comm) Finalize() error { return nil }
