package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

// ErrInterrupted is returned when the context was cancelled: the current
// step finished and a checkpoint was written, so the run can be resumed.
var ErrInterrupted = errors.New("training interrupted")

// Options control one call of Run.
type Options struct {
	// Resume continues from the newest good checkpoint in the run directory.
	Resume bool
	// Log receives progress: a bar when Terminal, else plain lines. Nil
	// discards it.
	Log      io.Writer
	Terminal bool
}

// Summary is written to summary.json at the end of a run.
type Summary struct {
	Steps           int     `json:"steps"`
	Tokens          int64   `json:"tokens"`
	WallSeconds     float64 `json:"wall_seconds"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	FinalTrainLoss  float64 `json:"final_train_loss"`
	ValLoss         float64 `json:"val_loss"`
	ValPPL          float64 `json:"val_ppl"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
	Params          int     `json:"params"`
	Pos             string  `json:"pos"`
	TrainLen        int     `json:"train_len"`
	Checkpoint      string  `json:"checkpoint"`
}

// warmSteps are left out of the throughput figure (first-step allocation).
const warmSteps = 5

// Run trains cfg in its run directory, writing the resolved config,
// checkpoints, metrics.jsonl and summary.json.
func Run(ctx context.Context, cfg Config, opt Options) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	dir := cfg.RunDir()
	rss := osutil.StartRSS()
	defer rss.Stop()

	trainTok, valTok, err := LoadData(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, model.CheckpointDir), 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	removeStaleTemps(dir, logw)
	st, err := newState(cfg, trainTok)
	if err != nil {
		return nil, err
	}
	if opt.Resume {
		resumed, err := st.resume(dir, logw)
		if err != nil {
			return nil, err
		}
		if !resumed {
			fmt.Fprintf(logw, "no checkpoint in %s yet: starting from the beginning\n", dir)
		}
	}
	if err := writeResolvedConfig(dir, cfg); err != nil {
		return nil, err
	}
	metrics, err := openMetrics(filepath.Join(dir, "metrics.jsonl"), st.step)
	if err != nil {
		return nil, err
	}
	defer metrics.Close()

	t := cfg.Train
	L := cfg.Model.TrainLen
	g, err := st.model.NewGraph(t.Batch, L, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if g != nil {
			g.Close()
		}
	}()
	params := make([][]float32, len(st.model.Weights.Names))
	decay := make([]bool, len(params))
	for i, name := range st.model.Weights.Names {
		params[i] = st.model.Weights.Data(name)
		decay[i] = st.model.Weights.Decays(name)
	}
	grads := make([][]float32, len(params))
	x, y := make([]int, t.Batch*L), make([]int, t.Batch*L)
	prog := newProgress(logw, opt.Terminal, t.Steps, st.step)
	segStart := time.Now()
	var trainTime time.Duration
	var timedTokens int64
	var loss float64
	for st.step < t.Steps {
		stepStart := time.Now()
		st.sampler.Next(x, y)
		if err := g.Run(x, y); err != nil {
			return nil, fmt.Errorf("step %d: %w", st.step+1, err)
		}
		loss = g.LossValue()
		for i := range grads {
			grads[i] = g.GradData(i)
		}
		norm := ClipGlobalNorm(grads, t.Clip)
		if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil, fmt.Errorf("step %d: non-finite loss %g or gradient norm %g; stopping without a checkpoint (the last good one is kept)", st.step+1, loss, norm)
		}
		lr := t.LRAt(st.step)
		st.opt.Update(params, grads, decay, lr)
		st.step++
		st.tokens += int64(t.Batch * L)
		if st.step > warmSteps {
			trainTime += time.Since(stepStart)
			timedTokens += int64(t.Batch * L)
		}
		elapsed := st.elapsed + time.Since(segStart).Seconds()
		tps := float64(t.Batch*L) / time.Since(stepStart).Seconds()
		if trainTime > 0 {
			tps = float64(timedTokens) / trainTime.Seconds()
		}
		prog.step(st.step, loss, tps, elapsed)
		if st.step%t.LogEvery == 0 || st.step == t.Steps {
			if err := metrics.write(map[string]any{"step": st.step, "loss": loss, "lr": lr, "grad_norm": norm,
				"tokens": st.tokens, "tokens_per_second": tps, "elapsed_seconds": elapsed}); err != nil {
				return nil, err
			}
		}
		if st.step%t.EvalEvery == 0 && st.step < t.Steps {
			// Validate in batches of the training batch's size, and hand the
			// evaluation graph's memory back afterwards, so that peak memory
			// stays that of the training graph plus one small batch.
			r, err := eval.Perplexity(st.model, valTok, eval.Options{Len: L, MaxTokens: t.EvalTokens, BatchTokens: t.Batch * L})
			debug.FreeOSMemory()
			if err != nil {
				return nil, err
			}
			prog.message(fmt.Sprintf("step %d: val loss %.4f, val ppl %.3f", st.step, r.NatsPerToken, r.PPL))
			if err := metrics.write(map[string]any{"step": st.step, "val_loss": r.NatsPerToken, "val_ppl": r.PPL,
				"val_tokens": r.Tokens, "elapsed_seconds": elapsed}); err != nil {
				return nil, err
			}
		}
		interrupted := ctx.Err() != nil
		if st.step%t.CheckpointEvery == 0 || st.step == t.Steps || interrupted {
			st.elapsed = elapsed
			if err := st.save(dir, cfg); err != nil {
				return nil, err
			}
		}
		if interrupted && st.step < t.Steps {
			prog.finish()
			return nil, fmt.Errorf("%w at step %d; checkpoint saved in %s", ErrInterrupted, st.step, dir)
		}
	}
	prog.finish()
	// The training graph's buffers are not needed any more: let the final
	// evaluation reuse their memory.
	g.Close()
	g, grads = nil, nil
	ckpt := model.CheckpointPath(dir, st.step)
	fmt.Fprintf(logw, "evaluating on the whole validation split (%d tokens)...\n", len(valTok))
	r, err := eval.Perplexity(st.model, valTok, eval.Options{Len: L})
	if err != nil {
		return nil, err
	}
	sum := &Summary{Steps: st.step, Tokens: st.tokens, WallSeconds: st.elapsed + time.Since(segStart).Seconds(),
		FinalTrainLoss: loss, ValLoss: r.NatsPerToken, ValPPL: r.PPL, PeakRSSBytes: rss.Peak(),
		Params: st.model.Weights.NumParams(), Pos: cfg.Model.Pos, TrainLen: L, Checkpoint: ckpt}
	if trainTime > 0 {
		sum.TokensPerSecond = float64(timedTokens) / trainTime.Seconds()
	}
	if err := metrics.write(map[string]any{"step": st.step, "val_loss": r.NatsPerToken, "val_ppl": r.PPL,
		"val_tokens": r.Tokens, "elapsed_seconds": sum.WallSeconds}); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// LoadData reads the configured corpus and splits it into training and
// validation tokens. A corpus shorter than one window is an error.
func LoadData(cfg Config) (trainTok, valTok []int, err error) {
	text, err := data.LoadCorpus(cfg.Data.Corpus)
	if err != nil {
		return nil, nil, err
	}
	trainTok, valTok, err = data.Split(data.Encode(text), cfg.Data.ValFrac)
	if err != nil {
		return nil, nil, fmt.Errorf("corpus %s: %w", cfg.Data.Corpus, err)
	}
	if len(trainTok) < cfg.Model.TrainLen+1 {
		return nil, nil, fmt.Errorf("corpus %s: its training split of %d tokens is shorter than one window of train_len %d + 1",
			cfg.Data.Corpus, len(trainTok), cfg.Model.TrainLen)
	}
	if len(valTok) < 2 {
		return nil, nil, fmt.Errorf("corpus %s: its validation split of %d tokens is too short to score", cfg.Data.Corpus, len(valTok))
	}
	return trainTok, valTok, nil
}

// removeStaleTemps deletes temporary files that a crash in the middle of a
// checkpoint write left behind; the checkpoints themselves are untouched.
func removeStaleTemps(dir string, log io.Writer) {
	temps, _ := filepath.Glob(filepath.Join(dir, model.CheckpointDir, ".*.tmp-*"))
	for _, t := range temps {
		if os.Remove(t) == nil {
			fmt.Fprintf(log, "removed %s, left by an interrupted checkpoint write\n", t)
		}
	}
}
