package train

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
	"gopkg.in/yaml.v3"
)

// Config is a whole run, as read from a YAML file such as configs/tiny.yaml.
type Config struct {
	// Name names the run; the default run directory is runs/<name>.
	Name  string       `yaml:"name" json:"name"`
	Out   string       `yaml:"out" json:"out"`
	Model model.Config `yaml:"model" json:"model"`
	Data  DataConfig   `yaml:"data" json:"data"`
	Train Settings     `yaml:"train" json:"train"`
}

// DataConfig says where the text comes from and how it is split.
type DataConfig struct {
	// Corpus is a text file, a directory of text files, or "builtin:opticks"
	// (the default, shipped with the project).
	Corpus  string  `yaml:"corpus" json:"corpus"`
	ValFrac float64 `yaml:"val_frac" json:"val_frac"`
	// Tokenizer turns the text into tokens (data.ParseTokenizerSpec):
	// "bytes" (the default), "bpe:N" for a byte-level BPE of N tokens
	// trained on the training split, or the path of a Hugging Face
	// tokenizer.json. model.vocab is its size.
	Tokenizer string `yaml:"tokenizer" json:"tokenizer"`
	// Passkey is the fraction of training windows that are passkey
	// episodes (data.Sampler MixPasskey), in [0, 1); 0, the default, trains
	// on plain text only. The validation split stays plain text.
	Passkey float64 `yaml:"passkey" json:"passkey"`
	// MQAR and MultiKey are the fractions of the other training windows
	// that are episodes of the retrieval tasks (data.Sampler MixRecall:
	// data.TaskMQAR, data.TaskMultiKey), each in [0, 1); 0, the default,
	// mixes none.
	MQAR     float64 `yaml:"mqar,omitempty" json:"mqar,omitempty"`
	MultiKey float64 `yaml:"multikey,omitempty" json:"multikey,omitempty"`
}

// Settings are the optimisation and bookkeeping settings.
type Settings struct {
	Batch       int     `yaml:"batch" json:"batch"`
	Steps       int     `yaml:"steps" json:"steps"`
	LR          float64 `yaml:"lr" json:"lr"`
	MinLR       float64 `yaml:"min_lr" json:"min_lr"`
	Warmup      int     `yaml:"warmup" json:"warmup"`
	Beta1       float64 `yaml:"beta1" json:"beta1"`
	Beta2       float64 `yaml:"beta2" json:"beta2"`
	Eps         float64 `yaml:"eps" json:"eps"`
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"`
	Clip        float64 `yaml:"clip" json:"clip"`
	LogEvery    int     `yaml:"log_every" json:"log_every"`
	EvalEvery   int     `yaml:"eval_every" json:"eval_every"`
	EvalTokens  int     `yaml:"eval_tokens" json:"eval_tokens"`
	// EvalLens are window lengths at which the periodic validation also
	// scores the model, beside train_len: a run trained at L = 256 then
	// compares with one trained at 512, at 512, as training goes.
	EvalLens        []int `yaml:"eval_lens,omitempty" json:"eval_lens,omitempty"`
	FinalEvalTokens int   `yaml:"final_eval_tokens" json:"final_eval_tokens"` // 0: the whole validation split
	CheckpointEvery int   `yaml:"checkpoint_every" json:"checkpoint_every"`
	KeepCheckpoints int   `yaml:"keep_checkpoints" json:"keep_checkpoints"`
	// Precision is the arithmetic of the linear layers' products: "fp32"
	// (the default, also when empty) or "bf16", bfloat16 factors with
	// float32 accumulation (layers.BF16: mixed precision, with float32
	// weights, gradients, optimizer and checkpoints).
	Precision string `yaml:"precision,omitempty" json:"precision,omitempty"`
}

// Defaults returns the settings a config file may leave out.
func Defaults() Config {
	return Config{
		Model: model.Config{Pos: model.PosALiBi, Seed: 1337},
		Data:  DataConfig{Corpus: "builtin:opticks", ValFrac: 0.1, Tokenizer: data.ByteTokenizerName},
		Train: Settings{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Clip: 1.0, LogEvery: 10, EvalEvery: 500,
			EvalTokens: 16384, CheckpointEvery: 500, KeepCheckpoints: 3},
	}
}

// LoadConfig reads a YAML run config over Defaults. Unknown keys, wrong
// types and invalid values are errors naming the key.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := parseConfig(b, filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	if cfg.Name == "" {
		cfg.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return cfg, nil
}

// ParseConfig parses YAML over Defaults and validates the result. Errors
// are one line and name the key: an unknown key, a value of the wrong type
// (with the line), or an invalid value.
func ParseConfig(b []byte) (Config, error) { return parseConfig(b, "") }

// parseConfig is ParseConfig for a config file in dir (empty: none): a
// relative data.tokenizer path is the file's in dir, made absolute so that
// the run's config.yaml names the same file wherever it is read from.
func parseConfig(b []byte, dir string) (Config, error) {
	cfg := Defaults()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return Config{}, yamlSyntaxError(b, err)
	}
	if len(doc.Content) > 0 && !(doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
		if err := decodeKeys(doc.Content[0], reflect.ValueOf(&cfg).Elem(), ""); err != nil {
			return Config{}, err
		}
	}
	if cfg.Data.Tokenizer == "" {
		cfg.Data.Tokenizer = data.ByteTokenizerName
	}
	if spec, err := data.ParseTokenizerSpec(cfg.Data.Tokenizer); err == nil && spec.Kind == "file" && dir != "" && !filepath.IsAbs(spec.Path) {
		if abs, err := filepath.Abs(filepath.Join(dir, spec.Path)); err == nil {
			cfg.Data.Tokenizer = abs
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	if cfg.Model.Vocab == 0 {
		spec, _ := data.ParseTokenizerSpec(cfg.Data.Tokenizer) // Validate parsed it
		cfg.Model.Vocab = spec.Vocab
		if spec.Kind == data.ByteTokenizerName {
			cfg.Model.Vocab = data.VocabSize
		}
	}
	return cfg, nil
}

// decodeKeys decodes the mapping n into the struct v, key by key, so that
// every error names its dotted key: prefix+key.
func decodeKeys(n *yaml.Node, v reflect.Value, prefix string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		what := "the config"
		if prefix != "" {
			what = strings.TrimSuffix(prefix, ".")
		}
		return fmt.Errorf("line %d: %s must be a mapping of keys to values", n.Line, what)
	}
	fields := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fields[tag] = i
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		idx, ok := fields[k.Value]
		switch {
		case !ok:
			return fmt.Errorf("line %d: unknown key %q", k.Line, key)
		case seen[k.Value]:
			return fmt.Errorf("line %d: key %q appears twice", k.Line, key)
		}
		seen[k.Value] = true
		f := v.Field(idx)
		if f.Kind() == reflect.Struct {
			if err := decodeKeys(val, f, key+"."); err != nil {
				return err
			}
			continue
		}
		if err := val.Decode(f.Addr().Interface()); err != nil {
			got := fmt.Sprintf("%q", val.Value)
			switch val.Kind {
			case yaml.SequenceNode:
				got = "a list"
			case yaml.MappingNode:
				got = "a mapping"
			}
			return fmt.Errorf("line %d: %s must be %s, got %s", val.Line, key, kindName(f.Kind()), got)
		}
	}
	return nil
}

// kindName says what a config value of kind k looks like.
func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int:
		return "an integer"
	case reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	}
	return "a string"
}

// Validate reports the first invalid setting by its key.
//
// model.vocab may be 0: the tokenizer's size, which Train sets once the
// tokenizer is made. Given, it must be the size data.tokenizer makes.
func (c Config) Validate() error {
	spec, err := data.ParseTokenizerSpec(c.Data.Tokenizer)
	if err != nil {
		return fmt.Errorf("data.tokenizer: %w", err)
	}
	m := c.Model
	switch {
	case m.Vocab == 0:
		m.Vocab = 1 // derived from the tokenizer
	case spec.Kind == data.ByteTokenizerName && m.Vocab != data.VocabSize:
		return fmt.Errorf("model.vocab is %d but data.tokenizer bytes has %d tokens: leave model.vocab out, it is the tokenizer's", m.Vocab, data.VocabSize)
	case spec.Kind == "bpe" && m.Vocab != spec.Vocab:
		return fmt.Errorf("model.vocab is %d but data.tokenizer bpe:%d has %d tokens: leave model.vocab out, it is the tokenizer's", m.Vocab, spec.Vocab, spec.Vocab)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	t := c.Train
	if m.DropeStep > 0 && m.DropeStep >= t.Steps {
		return fmt.Errorf("model.drope_step (%d) must be below train.steps (%d): the rotation is dropped after that many steps, and the steps after it recalibrate", m.DropeStep, t.Steps)
	}
	for _, f := range []struct {
		key      string
		v        int
		required bool // no default
	}{{"train.batch", t.Batch, true}, {"train.steps", t.Steps, true}, {"train.log_every", t.LogEvery, false},
		{"train.eval_every", t.EvalEvery, false}, {"train.eval_tokens", t.EvalTokens, false},
		{"train.checkpoint_every", t.CheckpointEvery, false}, {"train.keep_checkpoints", t.KeepCheckpoints, false}} {
		switch {
		case f.v == 0 && f.required:
			return fmt.Errorf("%s is required: a positive integer (it is missing or 0)", f.key)
		case f.v < 1:
			return fmt.Errorf("%s must be positive, got %d", f.key, f.v)
		}
	}
	if _, err := layers.ParsePrecision(t.Precision); err != nil {
		return fmt.Errorf("train.precision: %w", err)
	}
	if t.FinalEvalTokens < 0 {
		return fmt.Errorf("train.final_eval_tokens must not be negative (0: the whole validation split), got %d", t.FinalEvalTokens)
	}
	// Validation scores windows of train_len tokens, so it scores at least
	// one window's worth.
	for _, f := range []struct {
		key string
		v   int
	}{{"train.eval_tokens", t.EvalTokens}, {"train.final_eval_tokens", t.FinalEvalTokens}} {
		if f.v > 0 && f.v < c.Model.TrainLen {
			return fmt.Errorf("%s (%d) must be at least model.train_len (%d): validation scores windows of train_len tokens", f.key, f.v, c.Model.TrainLen)
		}
	}
	for _, n := range t.EvalLens {
		switch {
		case n < 1:
			return fmt.Errorf("train.eval_lens must be positive lengths, got %d", n)
		case n > t.EvalTokens:
			return fmt.Errorf("train.eval_lens %d is longer than train.eval_tokens (%d): validation scores at least one window", n, t.EvalTokens)
		}
	}
	if t.LR == 0 {
		return errors.New("train.lr is required: a positive number (it is missing or 0)")
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"train.lr", t.LR}, {"train.min_lr", t.MinLR}, {"train.beta1", t.Beta1}, {"train.beta2", t.Beta2}, {"train.eps", t.Eps},
		{"train.weight_decay", t.WeightDecay}, {"train.clip", t.Clip}, {"data.val_frac", c.Data.ValFrac}, {"data.passkey", c.Data.Passkey}, {"data.mqar", c.Data.MQAR}, {"data.multikey", c.Data.MultiKey}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s must be a finite number, got %g", f.key, f.v)
		}
	}
	switch {
	case t.Warmup < 0:
		return fmt.Errorf("train.warmup must not be negative, got %d", t.Warmup)
	case !(t.LR > 0):
		return fmt.Errorf("train.lr must be positive, got %g", t.LR)
	case !(t.MinLR >= 0 && t.MinLR <= t.LR):
		return fmt.Errorf("train.min_lr must be in [0, lr], got %g", t.MinLR)
	case !(t.Beta1 >= 0 && t.Beta1 < 1):
		return fmt.Errorf("train.beta1 must be in [0, 1), got %g", t.Beta1)
	case !(t.Beta2 >= 0 && t.Beta2 < 1):
		return fmt.Errorf("train.beta2 must be in [0, 1), got %g", t.Beta2)
	case !(t.Eps > 0):
		return fmt.Errorf("train.eps must be positive, got %g", t.Eps)
	case !(t.WeightDecay >= 0):
		return fmt.Errorf("train.weight_decay must not be negative, got %g", t.WeightDecay)
	case !(t.Clip >= 0):
		return fmt.Errorf("train.clip must not be negative (0 disables clipping), got %g", t.Clip)
	case !(c.Data.ValFrac > 0 && c.Data.ValFrac < 1):
		return fmt.Errorf("data.val_frac must be in (0, 1), got %g", c.Data.ValFrac)
	case !(c.Data.Passkey >= 0 && c.Data.Passkey < 1):
		return fmt.Errorf("data.passkey must be in [0, 1), got %g", c.Data.Passkey)
	case c.Data.Passkey > 0 && spec.Kind == data.ByteTokenizerName && c.Model.TrainLen+1 < data.PasskeyWindowMin:
		return fmt.Errorf("data.passkey needs model.train_len of at least %d to hold an episode, got %d", data.PasskeyWindowMin-1, c.Model.TrainLen)
	}
	for _, mix := range []struct {
		task string
		frac float64
	}{{data.TaskMQAR, c.Data.MQAR}, {data.TaskMultiKey, c.Data.MultiKey}} {
		if !(mix.frac >= 0 && mix.frac < 1) {
			return fmt.Errorf("data.%s must be in [0, 1), got %g", mix.task, mix.frac)
		}
		if r, _ := data.NewRecall(mix.task, []uint32{0}, data.ByteTokenizer{}, 0); mix.frac > 0 && spec.Kind == data.ByteTokenizerName && c.Model.TrainLen < r.MinLength() {
			return fmt.Errorf("data.%s needs model.train_len of at least %d to hold an episode, got %d", mix.task, r.MinLength(), c.Model.TrainLen)
		}
	}
	return nil
}

// RunDir is the run directory: Out if set, else runs/<Name>.
func (c Config) RunDir() string {
	if c.Out != "" {
		return c.Out
	}
	return filepath.Join("runs", c.Name)
}

// CheckTokenizerFile refuses a data.tokenizer that names a file which is
// not there. Train calls it before a new run's directory is made (a resumed
// run reads its own tokenizer.json).
func (c Config) CheckTokenizerFile() error {
	spec, err := data.ParseTokenizerSpec(c.Data.Tokenizer)
	if err != nil || spec.Kind != "file" {
		return err
	}
	if fi, err := os.Stat(spec.Path); err != nil {
		return fmt.Errorf("data.tokenizer: the tokenizer.json %s: %v (data.tokenizer is bytes, bpe:N or the path of a tokenizer.json; a relative path is the config file's)", spec.Path, osutil.PathReason(err))
	} else if fi.IsDir() {
		return fmt.Errorf("data.tokenizer: %s is a directory, not a tokenizer.json", spec.Path)
	}
	return nil
}
