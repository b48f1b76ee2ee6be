package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/train"
)

// lenses reports whether the experiment runs any context lens.
func (o options) lenses() bool { return o.distances != nil }

// contextReport is what the context lenses measured, for every run: the
// JSON of context.json, beside report.json.
type contextReport struct {
	Passkey eval.PasskeyReport `json:"passkey"`
}

// write saves context.json and context.png in dir.
func (c contextReport) write(dir string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := osutil.WriteFileAtomic(filepath.Join(dir, "context.json"), append(b, '\n')); err != nil {
		return err
	}
	if len(c.Passkey.Runs) > 0 {
		return c.Passkey.Plot(filepath.Join(dir, "context.png"))
	}
	return nil
}

// markdown writes the lenses' sections of the report.
func (c contextReport) markdown(b *strings.Builder, cfg train.Config, o options) {
	b.WriteString("## Does the model use the context?\n\n")
	if len(c.Passkey.Runs) > 0 {
		fmt.Fprintf(b, "### Retrieval at a distance (passkey)\n\n%d episodes per distance, the key at depths %v cycling, filler from each run's training split. "+
			"The effective context length is the largest distance whose accuracy is at least half the run's own accuracy at distances up to L/2 = %d.\n\n",
			o.episodes, eval.DefaultPasskeyDepths, cfg.Model.TrainLen/2)
		c.Passkey.Markdown(b)
		b.WriteString("\n![passkey accuracy vs distance](context.png)\n\n")
	}
}
