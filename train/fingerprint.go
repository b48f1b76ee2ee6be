package train

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// Metadata keys a checkpoint stores to name the corpus it was trained on.
const (
	metaCorpusSHA256 = model.MetaCorpusSHA256
	metaCorpusBytes  = model.MetaCorpusBytes
	metaGoVersion    = "data.go_version"
)

// mayChangeOnResume are the config keys a resumed run may change: where the
// run lives, how long it trains (the schedule is then recomputed over the
// new total: the package documentation's "Resuming" section), and
// bookkeeping that does not touch the weights. Every other key must match the
// checkpoint's.
var mayChangeOnResume = map[string]bool{
	"name": true, "out": true, "train.steps": true,
	"train.log_every": true, "train.eval_every": true, "train.eval_tokens": true, "train.eval_lens": true, "train.final_eval_tokens": true,
	"train.checkpoint_every": true, "train.keep_checkpoints": true,
}

// configKey is one leaf of a Config: its dotted YAML key and value.
type configKey struct{ key, value string }

// flatten lists the leaves of cfg in the order of the YAML file.
func flatten(cfg Config) []configKey {
	var out []configKey
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			key := prefix + tag
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Struct:
				walk(key+".", f)
			case reflect.Float64:
				out = append(out, configKey{key, strconv.FormatFloat(f.Float(), 'g', -1, 64)})
			default:
				out = append(out, configKey{key, fmt.Sprint(f.Interface())})
			}
		}
	}
	walk("", reflect.ValueOf(cfg))
	return out
}

// CheckResume reports the first setting of now that a resume of the run
// saved (as RunConfig reads it) may not change, naming the key and both
// values; nil if now continues that run. Only where the run lives, train.steps
// and the logging, validation and checkpoint intervals may change.
func CheckResume(saved, now Config) error {
	a, b := flatten(saved), flatten(now)
	for i := range a {
		if mayChangeOnResume[a[i].key] || a[i].value == b[i].value {
			continue
		}
		return fmt.Errorf("%s is %s in the checkpoint but %s now", a[i].key, quoteEmpty(a[i].value), quoteEmpty(b[i].value))
	}
	return nil
}

// sameRun checks that a resumed run uses the settings and the corpus it was
// trained with. It names the first key that differs, with both values.
func sameRun(saved, now Config, c *model.Checkpoint, corpus *data.Corpus) error {
	if err := CheckResume(saved, now); err != nil {
		return err
	}
	if sum, ok := c.Meta[metaCorpusSHA256]; ok && sum != corpus.SHA256 {
		return fmt.Errorf("the corpus changed: %s is %s (%s bytes) in the checkpoint but %s (%d bytes) now",
			metaCorpusSHA256, sum, c.Meta[metaCorpusBytes], corpus.SHA256, len(corpus.Bytes))
	}
	return nil
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
