package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
)

// passkeyTask runs the passkey evaluation of every opened run and writes the
// report; fileText, when not nil, is the filler instead of each run's
// training split; episodes are laid out in each run's tokens.
func passkeyTask(opened []*eval.Trained, fileText []byte, o eval.PasskeyOptions, jsonPath, plotPath string, stdout, stderr io.Writer) error {
	var report eval.PasskeyReport
	terminal := cli.IsTerminal(stderr)
	for _, r := range opened {
		var filler []uint32
		var err error
		if fileText != nil {
			filler = r.Tokenizer.Encode(fileText)
		} else if filler, err = r.TrainingTokens(cli.CorpusProgress(stderr, terminal)); err != nil {
			return err
		}
		o.Progress = eval.NewPasskeyProgress(stderr, terminal, nil)
		o.Tokenizer = r.Tokenizer
		res, err := eval.Passkey(r.Model, filler, o)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		weights := r.Weights
		res.Run, res.Weights = r.Label(), &weights
		fmt.Fprintf(stderr, "%s (%s): passkey effective context %s, %.1fs, %.0f prompt tokens/s\n",
			res.Run, res.Scheme(), effectiveSummary(res), res.WallSeconds, res.TokensPerSecond)
		report.Runs = append(report.Runs, res)
	}
	if err := report.Markdown(stdout); err != nil {
		return err
	}
	if jsonPath != "" {
		var buf bytes.Buffer
		if err := report.WriteJSON(&buf); err != nil {
			return err
		}
		if err := osutil.WriteFileAtomic(jsonPath, buf.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", jsonPath, err)
		}
	}
	if plotPath != "" {
		return report.Plot(plotPath)
	}
	return nil
}

func effectiveSummary(r eval.PasskeyResult) string {
	if r.EffectiveContext == 0 {
		return "none (" + r.EffectiveNote + ")"
	}
	return strconv.Itoa(r.EffectiveContext)
}

// parseInts parses a comma-separated list of positive integers for flag.
func parseInts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--%s: %q is not a positive integer", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseDepths parses a comma-separated list of depths in [0, 1].
func parseDepths(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("--depths: %q is not a depth in [0, 1]", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
