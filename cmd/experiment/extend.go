package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model"
)

// parseExtends reads --extend, scheme:method pairs, into o.extends: each
// scheme must be one of --pos and the method one of its extensions.
func (o *options) parseExtends() error {
	if o.extendList == "" {
		return nil
	}
	o.extends = map[string][]string{}
	var seen []string
	for _, f := range strings.Split(o.extendList, ",") {
		f = strings.TrimSpace(f)
		scheme, method, ok := strings.Cut(f, ":")
		if !ok {
			return fmt.Errorf("--extend: %q is not scheme:method (e.g. rope:yarn)", f)
		}
		if !slices.Contains(o.schemes(), scheme) {
			return fmt.Errorf("--extend %s: %s is not one of --pos", f, scheme)
		}
		var m model.Config
		m.ApplyLabel(scheme, 0)
		if _, err := position.ExtensionFor(m.Pos, method); err != nil {
			return fmt.Errorf("--extend %s: %v", f, err)
		}
		if slices.Contains(seen, f) {
			return fmt.Errorf("--extend lists %s twice", f)
		}
		seen = append(seen, f)
		o.extends[scheme] = append(o.extends[scheme], method)
	}
	return nil
}

// extensionPairs lists every registered extension as scheme:method, for
// --extend's usage: "rope:pi, rope:ntk, ..., alibi:interp".
func extensionPairs() string {
	var pairs []string
	for _, scheme := range model.Schemes() {
		for _, method := range position.ExtensionsFor(scheme) {
			pairs = append(pairs, scheme+":"+method)
		}
	}
	return strings.Join(pairs, ", ")
}

// extensionFile is the file in a run's directory that keeps its
// evaluations under an extension.
func extensionFile(method string) string { return "eval-" + method + ".json" }

// extendRun evaluates a trained run under an extension at every length
// (non-overlapping windows, the factor each length over L), reusing what
// its extension file already holds.
func extendRun(r *eval.Trained, val []uint32, dir, method string, lengths []int, o options, made madeBy, stderr io.Writer, terminal bool) error {
	have, _, err := readEvaluationsFile(dir, extensionFile(method), o, made)
	if err != nil {
		return err
	}
	if err := r.Model.Extend(method, 0); err != nil {
		return err
	}
	defer r.Model.Extend("", 0)
	for _, l := range lengths {
		if _, ok := have[evalKey{l, 0}]; ok {
			continue
		}
		debug.FreeOSMemory()
		opt := o.evalOptions(l, stderr, terminal)
		opt.Tokenizer = r.Tokenizer
		res, err := eval.Perplexity(r.Model, val, opt)
		if err != nil {
			return fmt.Errorf("%s at length %d: %w", method, l, err)
		}
		fmt.Fprintf(stderr, "%s +%s len %d: ppl %.4f (%d tokens, %.1fs, %.0f tokens/s)\n",
			dir, method, l, res.PPL, res.Tokens, res.WallSeconds, res.TokensPerSecond)
		have[evalKey{l, 0}] = res
		if err := writeEvaluations(dir, extensionFile(method), o, made.final, have); err != nil {
			return err
		}
	}
	return nil
}

// extendedRun is the report's column of a trained run under an extension:
// the run, named scheme+method, with the extension's results at every
// length.
func extendedRun(r eval.TrainedRun, c cell, method string, o options, made madeBy) (eval.TrainedRun, error) {
	have, weights, err := readEvaluationsFile(c.cfg.Out, extensionFile(method), o, made)
	if err != nil {
		return eval.TrainedRun{}, err
	}
	v := r
	v.Weights = weights
	v.Pos = r.Pos + "+" + method // r.Pos is the run's Label
	v.Run = r.Run + " +" + method
	v.Results = nil
	v.Validation = nil // the same training as r's column: its time to perplexity is there
	for _, l := range o.lengths(c.cfg) {
		res, ok := have[evalKey{l, 0}]
		if !ok {
			return eval.TrainedRun{}, fmt.Errorf("not evaluated with %s at length %d", method, l)
		}
		v.Results = append(v.Results, res)
	}
	return v, nil
}
