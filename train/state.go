package train

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/safetensors"
)

const (
	// metadata keys of the training state inside a checkpoint
	metaStep        = model.MetaStep
	metaTokens      = "train.tokens"
	metaElapsed     = "train.elapsed_seconds"
	metaLoss        = "train.loss"
	metaStepSeconds = "train.step_seconds"
	metaTimedTokens = "train.timed_tokens"
	metaSampler     = "train.sampler"
	metaOptStep     = "train.optimizer_step"
	metaRunCfg      = model.MetaRunConfig
	momentPrefix    = "optim."
)

// state is everything that decides the future of a run, and the running
// totals its summary reports.
type state struct {
	model   *model.Model
	opt     *AdamW
	sampler *data.Sampler
	corpus  *data.Corpus
	tok     data.Tokenizer
	step    int
	tokens  int64
	loss    float64 // training loss of the last step
	// earlier is the wall time of the run's earlier segments, up to the
	// checkpoint this segment resumed from, and segStart the start of this
	// segment; stepSeconds and timedTokens are the time and tokens of the
	// steps that count towards the throughput (all but each segment's
	// first warmSteps).
	earlier     float64
	segStart    time.Time
	stepSeconds float64
	timedTokens int64
	// warmSeconds and warmTokens are this segment's warm-up steps, the
	// throughput of a run too short to have any other.
	warmSeconds float64
	warmTokens  int64
	// saved is the newest checkpoint written or resumed from ("" if none),
	// and startedFor the train.steps its run was started (or last resumed)
	// with.
	saved      string
	startedFor int
	// allreduce is the data-parallel run's gradient sum, nil alone.
	allreduce *allreduce
}

// wall is the run's wall time so far: the earlier segments' and this one's.
func (s *state) wall() float64 { return s.earlier + time.Since(s.segStart).Seconds() }

func newState(cfg Config, d *Data) (*state, error) {
	m, err := model.New(cfg.Model)
	if err != nil {
		return nil, err
	}
	if m.Precision, err = layers.ParsePrecision(cfg.Train.Precision); err != nil {
		return nil, fmt.Errorf("train.precision: %w", err)
	}
	// The data order has its own seed stream, apart from initialisation.
	s, err := data.NewSampler(d.Train, cfg.Model.TrainLen, cfg.Train.Batch, cfg.Model.Seed+1)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", cfg.Data.Corpus, err)
	}
	if err := s.MixPasskey(cfg.Data.Passkey, d.Tokenizer); err != nil {
		return nil, fmt.Errorf("data.passkey: %w", err)
	}
	for _, mix := range []struct {
		task string
		frac float64
	}{{data.TaskMQAR, cfg.Data.MQAR}, {data.TaskMultiKey, cfg.Data.MultiKey}} {
		if err := s.MixRecall(mix.task, mix.frac, d.Tokenizer); err != nil {
			return nil, fmt.Errorf("data.%s: %w", mix.task, err)
		}
	}
	sizes := make([]int, len(m.Weights.Names))
	for i, name := range m.Weights.Names {
		sizes[i] = len(m.Weights.Data(name))
	}
	return &state{model: m, opt: NewAdamW(cfg.Train, sizes), sampler: s, corpus: d.Corpus, tok: d.Tokenizer, segStart: time.Now()}, nil
}

// save writes a checkpoint of the current step and keeps the newest
// keep_checkpoints files.
func (s *state) save(dir string, cfg Config) error {
	c := model.NewCheckpoint(s.model)
	for i, name := range s.model.Weights.Names {
		shape := s.model.Weights.Tensor(name).Shape()
		c.Extra = append(c.Extra, safetensors.F32(momentPrefix+"m."+name, shape, s.opt.M[i]),
			safetensors.F32(momentPrefix+"v."+name, shape, s.opt.V[i]))
	}
	smp, err := s.sampler.MarshalBinary()
	if err != nil {
		return err
	}
	runCfg, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	float := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	c.Meta[metaStep] = strconv.Itoa(s.step)
	c.Meta[metaTokens] = strconv.FormatInt(s.tokens, 10)
	c.Meta[metaElapsed] = float(s.wall())
	c.Meta[metaLoss] = float(s.loss)
	c.Meta[metaStepSeconds] = float(s.stepSeconds)
	c.Meta[metaTimedTokens] = strconv.FormatInt(s.timedTokens, 10)
	c.Meta[metaSampler] = base64.StdEncoding.EncodeToString(smp)
	c.Meta[metaOptStep] = strconv.Itoa(s.opt.Step)
	c.Meta[metaRunCfg] = string(runCfg)
	c.Meta[model.MetaCorpus] = cfg.Data.Corpus
	c.Meta[model.MetaValFrac] = float(cfg.Data.ValFrac)
	c.Meta[model.MetaTokenizer] = s.tok.Hash()
	c.Meta[metaCorpusSHA256] = s.corpus.SHA256
	c.Meta[metaCorpusBytes] = strconv.Itoa(len(s.corpus.Bytes))
	if s.corpus.GoVersion != "" {
		c.Meta[metaGoVersion] = s.corpus.GoVersion
	}
	path := model.CheckpointPath(dir, s.step)
	if faultInjection { // false, and compiled away, outside the fault tests
		var buf bytes.Buffer
		if err := c.Encode(&buf); err != nil {
			return err
		}
		crashInCheckpoint(s.step, path, buf.Bytes())
	}
	if err := model.SaveCheckpoint(path, c); err != nil {
		return err
	}
	s.saved = path
	cs, err := model.Checkpoints(dir)
	if err != nil {
		return err
	}
	for len(cs) > cfg.Train.KeepCheckpoints {
		if err := os.Remove(cs[0]); err != nil {
			return fmt.Errorf("remove old checkpoint: %w", err)
		}
		cs = cs[1:]
	}
	return nil
}

// resume restores the newest checkpoint that loads cleanly, saying which
// ones it skipped and why. It reports false when the run has none. A
// checkpoint of another config or corpus is an error, not skipped: the
// older checkpoints are of the same run.
func (s *state) resume(dir string, cfg Config, corpus *data.Corpus, log io.Writer) (bool, error) {
	cs, err := model.Checkpoints(dir)
	if err != nil {
		return false, err
	}
	var newest error
	for i := len(cs) - 1; i >= 0; i-- {
		c, err := model.LoadCheckpoint(cs[i])
		if err != nil {
			if newest == nil {
				newest = err
			}
			fmt.Fprintf(log, "skipping checkpoint: %v\n", err)
			continue
		}
		saved, err := s.checkSameRun(c, cfg, corpus, log)
		if err != nil {
			return false, fmt.Errorf("resume %s: %w; resume with the run's own settings (only train.steps and the logging and checkpoint intervals may change), or train into another directory", cs[i], err)
		}
		if err := s.restore(c); err != nil {
			return false, fmt.Errorf("resume %s: %w", cs[i], err)
		}
		s.saved, s.startedFor = cs[i], saved.Train.Steps
		if skipped := len(cs) - 1 - i; skipped > 0 {
			fmt.Fprintf(log, "resuming from %s (step %d), the newest checkpoint that loads: the steps after it are trained again, past the %d newer %s that cannot be read\n",
				cs[i], s.step, skipped, plural(skipped, "checkpoint", "checkpoints"))
		} else {
			fmt.Fprintf(log, "resuming from %s (step %d)\n", cs[i], s.step)
		}
		return true, nil
	}
	if len(cs) > 0 {
		return false, fmt.Errorf("resume: none of the %d checkpoints in %s could be loaded; newest: %w", len(cs), filepath.Join(dir, model.CheckpointDir), newest)
	}
	return false, nil
}

// plural is one if n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkSameRun compares the run config and corpus stored in c with the
// current ones, and returns the stored config.
func (s *state) checkSameRun(c *model.Checkpoint, cfg Config, corpus *data.Corpus, log io.Writer) (Config, error) {
	saved, err := checkpointConfig(c)
	if err != nil {
		return Config{}, err
	}
	if _, ok := c.Meta[metaCorpusSHA256]; !ok {
		fmt.Fprintf(log, "warning: the checkpoint records no fingerprint of its corpus (an older format): the corpus cannot be checked\n")
	}
	if h, ok := c.Meta[model.MetaTokenizer]; ok && h != s.tok.Hash() {
		return Config{}, fmt.Errorf("the tokenizer changed: %s is %.12s… in the checkpoint but the run's %s is %v with hash %.12s…",
			model.MetaTokenizer, h, model.TokenizerFile, s.tok, s.tok.Hash())
	}
	return saved, sameRun(saved, cfg, c, corpus)
}

// checkpointConfig is the run config a training checkpoint stores.
func checkpointConfig(c *model.Checkpoint) (Config, error) {
	saved := Defaults()
	dec := json.NewDecoder(strings.NewReader(c.Meta[metaRunCfg]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&saved); err != nil {
		return Config{}, fmt.Errorf("training state %s: %w", metaRunCfg, err)
	}
	return saved, nil
}

// restore loads a checkpoint's weights and training state into s, which
// must have been built from the same config.
func (s *state) restore(c *model.Checkpoint) error {
	w := s.model.Weights
	for _, name := range w.Names {
		copy(w.Data(name), c.Weights.Data(name))
	}
	for i, name := range w.Names {
		for _, mv := range []struct {
			key string
			dst []float32
		}{{"m.", s.opt.M[i]}, {"v.", s.opt.V[i]}} {
			t, ok := c.ExtraTensor(momentPrefix + mv.key + name)
			if !ok {
				return fmt.Errorf("optimizer state %s%s%s is missing", momentPrefix, mv.key, name)
			}
			v, err := t.Float32s()
			if err != nil || len(v) != len(mv.dst) {
				return fmt.Errorf("optimizer state %s%s%s is malformed", momentPrefix, mv.key, name)
			}
			copy(mv.dst, v)
		}
	}
	var err error
	ints := map[string]*int{metaStep: &s.step, metaOptStep: &s.opt.Step}
	for k, p := range ints {
		if *p, err = strconv.Atoi(c.Meta[k]); err != nil {
			return fmt.Errorf("training state %s: %w", k, err)
		}
	}
	if s.tokens, err = strconv.ParseInt(c.Meta[metaTokens], 10, 64); err != nil {
		return fmt.Errorf("training state %s: %w", metaTokens, err)
	}
	for k, p := range map[string]*float64{metaElapsed: &s.earlier, metaLoss: &s.loss, metaStepSeconds: &s.stepSeconds} {
		v, ok := c.Meta[k]
		if !ok && k != metaElapsed { // not in checkpoints of older versions
			continue
		}
		if *p, err = strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("training state %s: %w", k, err)
		}
	}
	if v, ok := c.Meta[metaTimedTokens]; ok {
		if s.timedTokens, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("training state %s: %w", metaTimedTokens, err)
		}
	}
	smp, err := base64.StdEncoding.DecodeString(c.Meta[metaSampler])
	if err != nil {
		return fmt.Errorf("training state %s: %w", metaSampler, err)
	}
	if err := s.sampler.UnmarshalBinary(smp); err != nil {
		return fmt.Errorf("training state %s: %w", metaSampler, err)
	}
	return nil
}
