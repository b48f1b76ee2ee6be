package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/alibi-go/alibi/eval"
)

// redraw draws the figure of a report's JSON again, from the JSON alone,
// into the PNG of the same name beside it: a report.json (the comparison:
// perplexity against length, loss by position, training curves) or a
// context.json (the context lenses). It is what the code draws now, so a
// committed figure follows the plotting code without its runs.
func redraw(path string, flags *flag.FlagSet) (string, error) {
	var other []string
	flags.Visit(func(f *flag.Flag) {
		if f.Name != "redraw" {
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return "", fmt.Errorf("--redraw draws a report's figure from its JSON alone: give it without %s", strings.Join(other, ", "))
	}
	png, ok := strings.CutSuffix(path, ".json")
	if !ok {
		return "", fmt.Errorf("--redraw %s: want a report's .json file", path)
	}
	png += ".png"
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--redraw: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return "", fmt.Errorf("--redraw %s: not a report's JSON: %v", path, err)
	}
	switch {
	case keys["runs"] != nil:
		c, err := readBeside(path)
		if err != nil {
			return "", fmt.Errorf("--redraw %w", err)
		}
		return png, c.Plot(png)
	case keys["strides"] != nil || keys["passkey"] != nil || keys["attention"] != nil:
		var c contextReport
		if err := json.Unmarshal(b, &c); err != nil {
			return "", fmt.Errorf("--redraw %s: %w", path, err)
		}
		return png, eval.ContextPlot(png, c.Strides, c.Passkey, c.Attention)
	}
	return "", fmt.Errorf("--redraw %s is neither a report.json (runs) nor a context.json (strides, passkey, attention)", path)
}
