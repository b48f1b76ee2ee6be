// Package mpi is the few calls of MPI (the Message Passing Interface) that a
// data-parallel training run needs, over Open MPI through cgo, built with
// the tag mpi: go build -tags mpi (Debian: libopenmpi-dev, which provides
// the pkg-config name ompi-c, and openmpi-bin for mpirun). World returns
// the communicator of every process the launcher (mpirun, or srun in a
// Slurm allocation) started, as a train.Comm.
//
// Without the tag the package is pure Go and World returns
// ErrNotBuilt; Launched tells, from the environment that Open MPI, MPICH's
// Hydra and Slurm set, whether the process was started as one of several,
// so that a command can say how to build for MPI rather than train N
// copies of one run.
package mpi

import (
	"errors"
	"os"
	"strconv"
)

// ErrNotBuilt is World's error in a build without the tag mpi.
var ErrNotBuilt = errors.New("this program was built without MPI: build or run it with -tags mpi (Debian: apt-get install libopenmpi-dev openmpi-bin)")

// Launched returns the number of processes the environment says the
// launcher started and which one this is (0 and 0 when it says none):
// Open MPI's OMPI_COMM_WORLD_SIZE and _RANK, PMI_SIZE and PMI_RANK
// (MPICH, Intel MPI), PMIX_RANK with Slurm's SLURM_NTASKS (srun with
// PMIx), or SLURM_NTASKS and SLURM_PROCID under srun.
func Launched() (size, rank int) {
	for _, v := range [][2]string{{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"}, {"SLURM_NTASKS", "PMIX_RANK"}} {
		if n, err := strconv.Atoi(os.Getenv(v[0])); err == nil && n > 0 {
			r, _ := strconv.Atoi(os.Getenv(v[1]))
			return n, r
		}
	}
	if os.Getenv("SLURM_STEP_ID") != "" { // inside srun
		n, err := strconv.Atoi(os.Getenv("SLURM_NTASKS"))
		if err == nil && n > 0 {
			r, _ := strconv.Atoi(os.Getenv("SLURM_PROCID"))
			return n, r
		}
	}
	return 0, 0
}
