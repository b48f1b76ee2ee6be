package train

import (
	"fmt"
	"strings"

	"github.com/alibi-go/alibi/model"
)

// StepBench is the training step of a config on a fixed batch, ready to be
// timed: the forward and backward pass, global-norm clipping and the AdamW
// update, as the training loop runs them, on one batch drawn from the
// config's corpus. NewStepBench runs one untimed step first, which
// allocates the graph's buffers and takes their page faults (the training
// loop's tokens/s leaves its first steps out for the same reason). The
// benchmarks of this package and cmd/bench time it.
type StepBench struct {
	g             *model.Graph
	step          *stepper
	cfg           Config
	x, y          []int
	tokens        int
	flopsPerToken float64
}

// NewStepBench builds the training graph of cfg, draws one batch from its
// corpus and runs one step. The corpus is read, and the model initialised,
// as Train does.
func NewStepBench(cfg Config) (*StepBench, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := LoadData(cfg, nil, "", nil)
	if err != nil {
		return nil, err
	}
	cfg.Model.Vocab = d.Tokenizer.VocabSize()
	st, err := newState(cfg, d)
	if err != nil {
		return nil, err
	}
	t, L := cfg.Train, cfg.Model.TrainLen
	g, err := st.model.NewGraph(t.Batch, L, true)
	if err != nil {
		return nil, fmt.Errorf("training graph of %s: %w", cfg.Name, err)
	}
	sb := &StepBench{g: g, step: newStepper(st.model, st.opt, g), cfg: cfg,
		x: make([]int, t.Batch*L), y: make([]int, t.Batch*L), tokens: t.Batch * L,
		flopsPerToken: cfg.Model.FLOPsPerToken(L, true)}
	st.sampler.Next(sb.x, sb.y)
	if err := sb.Run(0); err != nil {
		g.Close()
		return nil, err
	}
	return sb, nil
}

// LoadStepBench is NewStepBench on the config file at path, changed by
// variant first: "precision=fp32" or "precision=bf16" sets
// train.precision, any other non-empty variant is a position label such
// as alibi+log-length (model.Config.ApplyLabel), and "" keeps the file's
// config.
func LoadStepBench(path, variant string) (*StepBench, error) {
	cfg, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if p, ok := strings.CutPrefix(variant, "precision="); ok {
		cfg.Train.Precision = p
	} else if variant != "" {
		cfg.Model.ApplyLabel(variant, cfg.Train.Steps)
	}
	return NewStepBench(cfg)
}

// Run runs the step with the learning rate of step i of the config's
// schedule. The batch is the same every time.
func (sb *StepBench) Run(i int) error {
	t := sb.cfg.Train
	if _, _, _, err := sb.step.run(sb.x, sb.y, t.Clip, t.LRAt(i), func() bool { return false }); err != nil {
		return fmt.Errorf("%s: training step: %w", sb.cfg.Name, err)
	}
	return nil
}

// Tokens is the number of tokens in a step: batch times train_len.
func (sb *StepBench) Tokens() int { return sb.tokens }

// FLOPsPerToken is a training step's floating-point operations per token
// (model.Config.FLOPsPerToken): the matrix products of the forward and
// backward passes, what a step's GFLOP/s counts.
func (sb *StepBench) FLOPsPerToken() float64 { return sb.flopsPerToken }

// Config is the config the step runs.
func (sb *StepBench) Config() Config { return sb.cfg }

// TimeOps makes every later step add the wall time of each kind of op to
// times (model.Graph.TimeOps; nil stops the timing).
func (sb *StepBench) TimeOps(times model.OpTimes) { sb.g.TimeOps(times) }

// Close releases the graph.
func (sb *StepBench) Close() { sb.g.Close() }
