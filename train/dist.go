package train

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Comm is the communicator of a data-parallel run (Options.Comm): Size
// processes, ranks 0..Size-1, train one run. Every rank draws every step's
// whole batch from the same sampler and trains on its share of the rows
// (batch/Size of them, rank r the r-th share), the ranks' gradients are
// summed by one AllreduceSum a step over a flat float32 buffer and averaged,
// and every rank takes the same AdamW step, so all hold the same weights.
// Rank 0 alone reads and writes the run directory; it sends the others the
// state it starts from (fresh or resumed) with Bcast. The calls are
// collective: every rank makes them in the same order. package mpi's Comm
// (build tag mpi) is one.
type Comm interface {
	Size() int
	Rank() int
	// AllreduceSum replaces buf on every rank by its sum over the ranks.
	AllreduceSum(buf []float32) error
	// Bcast copies buf from rank root to the others, whose buf has the
	// same length.
	Bcast(buf []byte, root int) error
}

// ranks is the number of ranks of a run with comm (1 without one).
func ranks(comm Comm) int {
	if comm == nil {
		return 1
	}
	return comm.Size()
}

// agree is a collective check after a step that may fail on some ranks
// only: each rank passes its own error; if any rank has one, every rank
// returns an error (its own, or one naming the first rank that failed), so
// that no rank waits for another that has stopped.
//
// The others' error wraps the first failing rank's kind (ErrFinished,
// ErrRunLocked, ErrRunExists, ErrPastSteps, ErrInterrupted), so that every
// rank exits as that rank does.
func agree(comm Comm, err error) error { return Agree(comm, err) }

// Agree is agree for a command: the collective check of an error that some
// ranks may have and others not (nil comm: err itself).
func Agree(comm Comm, err error) error {
	if ranks(comm) == 1 {
		return err
	}
	flags := make([]float32, comm.Size())
	if err != nil {
		flags[comm.Rank()] = float32(1 + kindOf(err))
	}
	if e := comm.AllreduceSum(flags); e != nil {
		return e
	}
	if err != nil {
		first := slices.IndexFunc(flags, func(f float32) bool { return f != 0 }) == comm.Rank()
		return &RankError{Rank: comm.Rank(), Err: err, First: first}
	}
	for r, f := range flags {
		if f != 0 {
			if k := int(f) - 1; k > 0 {
				return &agreedError{fmt.Errorf("rank %d stopped: %w", r, errKinds[k])}
			}
			return &agreedError{fmt.Errorf("rank %d stopped (its error is in its own output)", r)}
		}
	}
	return nil
}

// errKinds are the errors whose kind agree passes on: index 0 is any other.
var errKinds = []error{nil, ErrFinished, ErrRunLocked, ErrRunExists, ErrPastSteps, ErrInterrupted}

func kindOf(err error) int {
	for k, e := range errKinds[1:] {
		if errors.Is(err, e) {
			return k + 1
		}
	}
	return 0
}

// agreedError is an error every rank of a data-parallel run knows of: they
// all stop, so none need be aborted.
type agreedError struct{ error }

func (e *agreedError) Unwrap() error { return e.error }

// Agreed reports whether every rank of a data-parallel run returns an
// error with err, so that each can just exit: an error found by a
// collective check, one that the identical config gives every rank, or a
// stop every rank agreed on. A rank with another error must end the job
// (mpi's Abort), or the others wait for it for ever.
func Agreed(err error) bool {
	var a *agreedError
	var r *RankError
	return errors.As(err, &a) || errors.As(err, &r)
}

// RankError is an error that a rank of a data-parallel run met on its own
// (the others return an error naming the first such rank). First says that
// no lower rank failed: a command prints the error of that rank alone
// (ranks that fail together mostly fail alike).
type RankError struct {
	Rank  int
	Err   error
	First bool
}

func (e *RankError) Error() string { return e.Err.Error() }
func (e *RankError) Unwrap() error { return e.Err }

// fingerprint is what every rank of a run must share, each part hashed:
// the run config, the program, the corpus and the tokenizer.
type fingerprint struct {
	config, code, data, tokenizer [sha256.Size]byte
}

// fingerprintParts names the parts, in order.
var fingerprintParts = []string{"config", "program (its executable)", "corpus", "tokenizer"}

// fingerprintOf hashes cfg and this process's executable; the data parts are
// filled by withData.
func fingerprintOf(cfg Config) fingerprint {
	var f fingerprint
	cfg.Out = "" // the run directory: each machine may mount it elsewhere
	b, _ := json.Marshal(cfg)
	f.config = sha256.Sum256(b)
	if exe, err := os.Executable(); err == nil {
		if fh, err := os.Open(exe); err == nil {
			h := sha256.New()
			io.Copy(h, fh)
			fh.Close()
			copy(f.code[:], h.Sum(nil))
		}
	}
	return f
}

// withData adds the corpus's and the tokenizer's hashes.
func (f fingerprint) withData(corpusSHA256, tokenizerHash string) fingerprint {
	f.data = sha256.Sum256([]byte(corpusSHA256))
	f.tokenizer = sha256.Sum256([]byte(tokenizerHash))
	return f
}

func (f fingerprint) parts() [][sha256.Size]byte {
	return [][sha256.Size]byte{f.config, f.code, f.data, f.tokenizer}
}

// checkSame compares every rank's fingerprint with rank 0's: the error, on
// every rank, names the first rank and part that differ.
func checkSame(comm Comm, f fingerprint, upTo int) error {
	if ranks(comm) == 1 {
		return nil
	}
	var root []byte
	for _, p := range f.parts()[:upTo] {
		root = append(root, p[:]...)
	}
	mine := append([]byte(nil), root...)
	if err := comm.Bcast(root, 0); err != nil {
		return err
	}
	diff := make([]float32, comm.Size()*upTo)
	for i := range upTo {
		a, b := mine[i*sha256.Size:(i+1)*sha256.Size], root[i*sha256.Size:(i+1)*sha256.Size]
		if string(a) != string(b) {
			diff[comm.Rank()*upTo+i] = 1
		}
	}
	if err := comm.AllreduceSum(diff); err != nil {
		return err
	}
	var bad []string
	for r := range comm.Size() {
		for i := range upTo {
			if diff[r*upTo+i] != 0 {
				bad = append(bad, fingerprintParts[i])
			}
		}
		if len(bad) > 0 {
			return &agreedError{fmt.Errorf("rank %d of %d has another %s than rank 0: every rank must run the same program on the same config, corpus and tokenizer", r, comm.Size(), strings.Join(bad, ", "))}
		}
	}
	return nil
}

// syncState sends rank 0's state (weights, optimizer moments and step,
// step and token counts, loss, the sampler's state and the run's timings)
// to every other rank.
func syncState(comm Comm, st *state) error {
	if ranks(comm) == 1 {
		return nil
	}
	var head []byte
	if comm.Rank() == 0 {
		smp, err := st.sampler.MarshalBinary()
		if err != nil {
			return err
		}
		head = binary.LittleEndian.AppendUint64(head, uint64(st.step))
		head = binary.LittleEndian.AppendUint64(head, uint64(st.opt.Step))
		head = binary.LittleEndian.AppendUint64(head, uint64(st.tokens))
		head = binary.LittleEndian.AppendUint64(head, math.Float64bits(st.loss))
		head = binary.LittleEndian.AppendUint64(head, math.Float64bits(st.earlier))
		head = binary.LittleEndian.AppendUint64(head, uint64(st.startedFor))
		head = append(head, smp...)
	}
	size := make([]byte, 8)
	binary.LittleEndian.PutUint64(size, uint64(len(head)))
	if err := comm.Bcast(size, 0); err != nil {
		return err
	}
	if comm.Rank() != 0 {
		head = make([]byte, binary.LittleEndian.Uint64(size))
	}
	if err := comm.Bcast(head, 0); err != nil {
		return err
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(head[8*i:]) }
	st.step, st.opt.Step, st.tokens = int(u(0)), int(u(1)), int64(u(2))
	st.loss, st.earlier, st.startedFor = math.Float64frombits(u(3)), math.Float64frombits(u(4)), int(u(5))
	if comm.Rank() != 0 {
		if err := st.sampler.UnmarshalBinary(head[48:]); err != nil {
			return fmt.Errorf("the sampler's state from rank 0: %w", err)
		}
	}
	for i, name := range st.model.Weights.Names {
		for _, v := range [][]float32{st.model.Weights.Data(name), st.opt.M[i], st.opt.V[i]} {
			if err := comm.Bcast(float32Bytes(v), 0); err != nil {
				return err
			}
		}
	}
	if st.model.Config.DropeStep > 0 && st.step >= st.model.Config.DropeStep {
		st.model.DropPositions()
	}
	return nil
}

// float32Bytes is the memory of v as bytes (no copy).
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafeBytes(v)
}

func unsafeBytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// allreduce is a data-parallel step's one collective: the ranks' gradients,
// their losses and their stop requests summed in one flat buffer, then
// averaged. It returns the mean loss and whether any rank asked to stop,
// and adds the call's time to seconds.
type allreduce struct {
	comm Comm
	flat []float32
	// seconds is this segment's time in the all-reduce, steps its steps'
	// time (see state.allreduceShare).
	seconds, steps float64
}

func (a *allreduce) run(grads [][]float32, loss float64, stop bool) (float64, bool, error) {
	n := 0
	for _, g := range grads {
		n += len(g)
	}
	if cap(a.flat) < n+2 {
		a.flat = make([]float32, n+2)
	}
	a.flat = a.flat[:n+2]
	at := 0
	for _, g := range grads {
		at += copy(a.flat[at:], g)
	}
	a.flat[n], a.flat[n+1] = float32(loss), 0
	if stop {
		a.flat[n+1] = 1
	}
	t0 := time.Now()
	if err := a.comm.AllreduceSum(a.flat); err != nil {
		return 0, false, err
	}
	a.seconds += time.Since(t0).Seconds()
	inv := 1 / float32(a.comm.Size())
	at = 0
	for _, g := range grads {
		for i := range g {
			g[i] = a.flat[at+i] * inv
		}
		at += len(g)
	}
	return float64(a.flat[n] * inv), a.flat[n+1] != 0, nil
}
