package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/alibi-go/alibi/train"
	"github.com/alibi-go/alibi/train/mpi"
)

// world returns the communicator of an MPI launch (mpirun, or srun in a
// Slurm allocation) of several processes, with the function that ends MPI,
// or nil when the process was started alone. A launch of several processes
// of a build without MPI is refused: each would train its own copy of the
// run.
func world() (train.Comm, func(), error) {
	size, rank := mpi.Launched()
	if size <= 1 {
		return nil, func() {}, nil
	}
	if !mpi.Built {
		return nil, nil, fmt.Errorf("started as rank %d of %d processes (mpirun or srun), but built without MPI, so each would train a copy of the run: run it as go run -tags mpi ./cmd/train ... (Debian: apt-get install libopenmpi-dev openmpi-bin)", rank, size)
	}
	c, err := mpi.World()
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.Finalize() }, nil
}

// rankOutput returns where a rank writes: rank 0 (or a single process) to
// stdout and stderr, another rank nowhere but its own errors (see
// train.RankError), so that a job prints each line once.
func rankOutput(comm train.Comm, stdout, stderr io.Writer) (out, errw io.Writer, printErr func(error) bool) {
	if comm == nil || comm.Rank() == 0 {
		return stdout, stderr, func(error) bool { return true }
	}
	return io.Discard, stderr, func(err error) bool {
		var re *train.RankError
		return errors.As(err, &re) && re.Rank == comm.Rank()
	}
}
