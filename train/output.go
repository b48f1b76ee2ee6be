package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"gopkg.in/yaml.v3"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// metricsFile appends one JSON object per line to metrics.jsonl.
type metricsFile struct{ f *os.File }

// openMetrics opens metrics.jsonl for appending, first dropping any line
// of a step after `step` (left by a run that died after its last
// checkpoint), so a resumed run has no duplicated or missing lines.
func openMetrics(path string, step int) (*metricsFile, error) {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(old))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Step *int `json:"step"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Step == nil || *rec.Step > step {
			continue
		}
		keep.Write(sc.Bytes())
		keep.WriteByte('\n')
	}
	if !bytes.Equal(keep.Bytes(), old) {
		if err := osutil.WriteFileAtomic(path, keep.Bytes()); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	// 0666: the umask decides the mode, as for every file the project writes.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o666)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &metricsFile{f: f}, nil
}

func (m *metricsFile) write(rec map[string]any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := m.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Close closes the file and reports its error; closing again does nothing,
// so a deferred Close may follow the one whose error is checked.
func (m *metricsFile) Close() error {
	if m.f == nil {
		return nil
	}
	f := m.f
	m.f = nil
	if err := f.Close(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return osutil.WriteFileAtomic(path, append(b, '\n'))
}

// writeResolvedConfig saves the config the run really uses (defaults and
// flags applied) as config.yaml in the run directory.
func writeResolvedConfig(dir string, cfg Config) error {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := osutil.WriteFileAtomic(filepath.Join(dir, "config.yaml"), b); err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	return nil
}

// progress shows a bar on a terminal and plain periodic lines elsewhere.
type progress struct {
	w        io.Writer
	bar      *progressbar.ProgressBar
	total    int
	lastLine time.Time
}

func newProgress(w io.Writer, terminal bool, total, done int) *progress {
	p := &progress{w: w, total: total, lastLine: time.Now()}
	if terminal {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("training"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionFullWidth(),
			progressbar.OptionThrottle(200*time.Millisecond),
		)
		p.bar.Set(done)
	}
	return p
}

func (p *progress) step(step int, loss, tps, elapsed float64) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("step %d loss %.4f %.0f tok/s", step, loss, tps))
		p.bar.Set(step)
		return
	}
	if time.Since(p.lastLine) >= 10*time.Second || step == p.total || step == 1 {
		p.lastLine = time.Now()
		eta := 0.0
		if step > 0 {
			eta = elapsed / float64(step) * float64(p.total-step)
		}
		fmt.Fprintf(p.w, "step %d/%d loss %.4f %.0f tok/s elapsed %.0fs eta %.0fs\n", step, p.total, loss, tps, elapsed, eta)
	}
}

func (p *progress) message(s string) {
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// ReadLoss returns the training loss of every step a run's metrics.jsonl
// logged, in order.
func ReadLoss(dir string) ([]eval.LossPoint, error) {
	return scanMetrics(dir, func(rec metricsLine) (eval.LossPoint, bool) {
		if rec.Step == nil || rec.Loss == nil {
			return eval.LossPoint{}, false
		}
		return eval.LossPoint{Step: *rec.Step, Loss: *rec.Loss}, true
	})
}

// ReadValidation reads the periodic validations of the run in dir from its
// metrics.jsonl, in order: step, wall seconds and perplexity, with the
// training tokens so far, tokensPerStep (batch x train_len) a step, and the
// window length: trainLen, or the train.eval_lens length a line names.
func ReadValidation(dir string, tokensPerStep, trainLen int) ([]eval.ValPoint, error) {
	return scanMetrics(dir, func(rec metricsLine) (eval.ValPoint, bool) {
		if rec.Step == nil || rec.Elapsed == nil {
			return eval.ValPoint{}, false
		}
		p := eval.ValPoint{Step: *rec.Step, Tokens: int64(*rec.Step) * int64(tokensPerStep), Seconds: *rec.Elapsed}
		switch {
		case rec.ValPPL != nil:
			p.PPL, p.Len = *rec.ValPPL, trainLen
		case rec.ValPPLAtLen != nil && rec.ValLen != nil:
			p.PPL, p.Len = *rec.ValPPLAtLen, *rec.ValLen
		default:
			return eval.ValPoint{}, false
		}
		return p, true
	})
}

// metricsLine is what the readers take from a line of metrics.jsonl.
type metricsLine struct {
	Step   *int     `json:"step"`
	Loss   *float64 `json:"loss"`
	ValPPL *float64 `json:"val_ppl"`
	// A validation at one of train.eval_lens: its length and perplexity.
	ValLen      *int     `json:"val_len"`
	ValPPLAtLen *float64 `json:"val_ppl_at_len"`
	Elapsed     *float64 `json:"elapsed_seconds"`
}

// scanMetrics returns pick's value of every line of dir's metrics.jsonl
// that it accepts.
func scanMetrics[T any](dir string, pick func(metricsLine) (T, bool)) ([]T, error) {
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec metricsLine
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if v, ok := pick(rec); ok {
			out = append(out, v)
		}
	}
	return out, nil
}
