package train

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/safetensors"
)

const (
	// metadata keys of the training state inside a checkpoint
	metaStep     = "train.step"
	metaTokens   = "train.tokens"
	metaElapsed  = "train.elapsed_seconds"
	metaSampler  = "train.sampler"
	metaOptStep  = "train.optimizer_step"
	metaRunCfg   = "train.config"
	momentPrefix = "optim."
)

// state is everything that decides the future of a run.
type state struct {
	model   *model.Model
	opt     *AdamW
	sampler *data.Sampler
	step    int
	tokens  int64
	elapsed float64 // wall seconds of earlier segments of a resumed run
}

func newState(cfg Config, trainTok []int) (*state, error) {
	m, err := model.New(cfg.Model)
	if err != nil {
		return nil, err
	}
	// The data order has its own seed stream, apart from initialisation.
	s, err := data.NewSampler(trainTok, cfg.Model.TrainLen, cfg.Train.Batch, cfg.Model.Seed+1)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", cfg.Data.Corpus, err)
	}
	sizes := make([]int, len(m.Weights.Names))
	for i, name := range m.Weights.Names {
		sizes[i] = len(m.Weights.Data(name))
	}
	return &state{model: m, opt: NewAdamW(cfg.Train, sizes), sampler: s}, nil
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
	c.Meta[metaStep] = strconv.Itoa(s.step)
	c.Meta[metaTokens] = strconv.FormatInt(s.tokens, 10)
	c.Meta[metaElapsed] = strconv.FormatFloat(s.elapsed, 'g', -1, 64)
	c.Meta[metaSampler] = base64.StdEncoding.EncodeToString(smp)
	c.Meta[metaOptStep] = strconv.Itoa(s.opt.Step)
	c.Meta[metaRunCfg] = string(runCfg)
	c.Meta[model.MetaCorpus] = cfg.Data.Corpus
	c.Meta[model.MetaValFrac] = strconv.FormatFloat(cfg.Data.ValFrac, 'g', -1, 64)
	path := model.CheckpointPath(dir, s.step)
	if os.Getenv(FaultEnv) != "" {
		var buf bytes.Buffer
		if err := c.Encode(&buf); err != nil {
			return err
		}
		crashInCheckpoint(s.step, path, buf.Bytes())
	}
	if err := model.SaveCheckpoint(path, c); err != nil {
		return err
	}
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
// ones it skipped and why. It reports false when the run has none.
func (s *state) resume(dir string, log io.Writer) (bool, error) {
	cs, err := model.Checkpoints(dir)
	if err != nil {
		return false, err
	}
	var newest error
	for i := len(cs) - 1; i >= 0; i-- {
		c, err := model.LoadCheckpoint(cs[i])
		if err == nil {
			if err = s.restore(c); err != nil {
				err = fmt.Errorf("%s: %w", cs[i], err)
			}
		}
		if err != nil {
			if newest == nil {
				newest = err
			}
			fmt.Fprintf(log, "skipping checkpoint: %v\n", err)
			continue
		}
		fmt.Fprintf(log, "resuming from %s (step %d)\n", cs[i], s.step)
		return true, nil
	}
	if len(cs) > 0 {
		return false, fmt.Errorf("resume: none of the %d checkpoints in %s could be loaded; newest: %w", len(cs), filepath.Join(dir, model.CheckpointDir), newest)
	}
	return false, nil
}

// restore loads a checkpoint's weights and training state into s, which
// must have been built from the same config.
func (s *state) restore(c *model.Checkpoint) error {
	if err := sameModel(s.model.Config, c.Config); err != nil {
		return err
	}
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
	if s.elapsed, err = strconv.ParseFloat(c.Meta[metaElapsed], 64); err != nil {
		return fmt.Errorf("training state %s: %w", metaElapsed, err)
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

// sameModel refuses a checkpoint of another model, naming the first
// mismatching field.
func sameModel(want, got model.Config) error {
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	var ma, mb map[string]any
	json.Unmarshal(a, &ma)
	json.Unmarshal(b, &mb)
	keys := make([]string, 0, len(ma))
	for k := range ma {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		if fmt.Sprint(ma[k]) != fmt.Sprint(mb[k]) {
			diffs = append(diffs, fmt.Sprintf("%s is %v in the checkpoint but %v in the config", k, mb[k], ma[k]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("checkpoint is of another model: %s", strings.Join(diffs, "; "))
	}
	return nil
}
