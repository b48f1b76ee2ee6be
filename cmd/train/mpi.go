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
// stdout and stderr, another rank nowhere (rank 0 reports the run), and
// report, which prints an error (with its suffix) once for the job and
// returns code: a single process's, or an error every rank knows of
// (train.Agreed) from rank 0 or, when it is one rank's own
// (train.RankError), from the lowest rank that has one. A rank's error the
// others do not know of is printed with the rank and ends the job
// (MPI_Abort), or they would wait for that rank for ever.
func rankOutput(comm train.Comm, stdout, stderr io.Writer) (out, quiet io.Writer, report func(code int, err error, suffix string) int) {
	if comm == nil {
		return stdout, stderr, func(code int, err error, suffix string) int {
			fmt.Fprintf(stderr, "train: %v%s\n", err, suffix)
			return code
		}
	}
	rank, size := comm.Rank(), comm.Size()
	out, quiet = stdout, stderr
	if rank != 0 {
		out, quiet = io.Discard, io.Discard
	}
	return out, quiet, func(code int, err error, suffix string) int {
		var re *train.RankError
		switch {
		case errors.As(err, &re):
			if re.First {
				fmt.Fprintf(stderr, "train: rank %d of %d: %v%s\n", rank, size, err, suffix)
			}
		case train.Agreed(err):
			if rank == 0 {
				fmt.Fprintf(stderr, "train: %v%s\n", err, suffix)
			}
		default:
			fmt.Fprintf(stderr, "train: rank %d of %d: %v%s\n", rank, size, err, suffix)
			if a, ok := comm.(interface{ Abort(int) }); ok {
				a.Abort(max(code, 1))
			}
		}
		return code
	}
}
