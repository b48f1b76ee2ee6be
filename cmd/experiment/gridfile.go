package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/alibi-go/alibi/train"
)

// entry is one config of the experiment with the schemes it trains.
type entry struct {
	path    string // the config file, as given
	cfg     train.Config
	schemes []string // --pos labels: alibi, alibi+log-length, ...
}

// readGridFile reads an experiment file (--grid): the configs of a grid,
// each with its own schemes, for grids that are not every scheme on every
// config (ALiBi at L = 256 beside sinusoidal at 512, say). It returns the
// configs and their schemes in order.
//
//	runs:
//	  - config: configs/small-256.yaml
//	    pos: alibi
//	  - config: configs/small.yaml
//	    pos: alibi,sinusoidal
//
// Errors are one line in the form of the config files' (train.ParseConfig),
// with the line: an unknown key, a key twice, a value of the wrong kind.
func readGridFile(path string) (configs, schemes []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--grid: %w", err)
	}
	if configs, schemes, err = parseGridFile(b); err != nil {
		return nil, nil, fmt.Errorf("--grid %s: %w", path, err)
	}
	return configs, schemes, nil
}

// parseGridFile parses an experiment file's text (see readGridFile).
func parseGridFile(b []byte) (configs, schemes []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, nil, train.YAMLSyntaxError(b, err)
	}
	noRuns := errors.New("no runs (a list of config: and pos: entries)")
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return nil, nil, noRuns
	}
	top, err := gridKeys(doc.Content[0], "the experiment file", "runs")
	if err != nil {
		return nil, nil, err
	}
	runs := top["runs"]
	if runs == nil || runs.Tag == "!!null" {
		return nil, nil, noRuns
	}
	if runs.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("line %d: runs must be a list of config: and pos: entries", runs.Line)
	}
	if len(runs.Content) == 0 {
		return nil, nil, noRuns
	}
	for i, n := range runs.Content {
		what := fmt.Sprintf("run %d", i+1)
		keys, err := gridKeys(n, what, "config", "pos")
		if err != nil {
			return nil, nil, err
		}
		var v [2]string
		for j, key := range []string{"config", "pos"} {
			val := keys[key]
			if val == nil {
				return nil, nil, fmt.Errorf("line %d: %s needs both a config and a pos entry", n.Line, what)
			}
			if val.Kind != yaml.ScalarNode || val.Tag == "!!null" || val.Value == "" {
				return nil, nil, fmt.Errorf("line %d: %s of %s must be a string, such as %s", val.Line, key, what, map[string]string{
					"config": "configs/tiny.yaml", "pos": "alibi,sinusoidal"}[key])
			}
			v[j] = val.Value
		}
		configs = append(configs, v[0])
		schemes = append(schemes, v[1])
	}
	return configs, schemes, nil
}

// gridKeys returns the values of mapping n by key, refusing a node that is
// not a mapping (what names it), a key other than known and a key twice.
func gridKeys(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s must be a mapping of %s", n.Line, what, strings.Join(known, ": and ")+":")
	}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			return nil, fmt.Errorf("line %d: unknown key %q", k.Line, k.Value)
		case keys[k.Value] != nil:
			return nil, fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
		}
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		keys[k.Value] = v
	}
	return keys, nil
}

// loadEntries loads each config and checks its schemes: the configs of
// --grid, or of --config (a comma-separated list) each with --pos. Two
// configs may not share a name: their runs would share a directory.
func (o *options) loadEntries() error {
	configs, schemes := strings.Split(o.configList, ","), []string(nil)
	if o.gridPath != "" {
		var err error
		if configs, schemes, err = readGridFile(o.gridPath); err != nil {
			return err
		}
	}
	names := map[string]string{}
	for i, path := range configs {
		path = strings.TrimSpace(path)
		cfg, err := train.LoadConfig(path)
		if err != nil {
			return err
		}
		if o.steps != 0 {
			cfg.Train.Steps = o.steps
		}
		if o.evalEvery != 0 {
			cfg.Train.EvalEvery = o.evalEvery
		}
		if other, ok := names[cfg.Name]; ok {
			return fmt.Errorf("configs %s and %s are both named %q: their runs would share %s", other, path, cfg.Name,
				filepath.Join(o.out, cfg.Name))
		}
		names[cfg.Name] = path
		posList := o.posList
		if schemes != nil {
			posList = schemes[i]
		}
		e := entry{path: path, cfg: cfg}
		for _, p := range strings.Split(posList, ",") {
			c := cfg
			label := strings.TrimSpace(p)
			c.Model.ApplyLabel(label, c.Train.Steps) // alibi, alibi+log-length, rope+drope
			err := c.Validate()
			if err == nil && c.Model.Label() != label {
				// One name a variant: its directory and its column.
				err = fmt.Errorf("%s names the run %s (the config's settings and the suffixes in the order +log-length, +randomized, +drope): write it so", label, c.Model.Label())
			}
			if err != nil {
				if len(configs) > 1 {
					return fmt.Errorf("--pos of %s: %v", path, err)
				}
				return fmt.Errorf("--pos: %v", err)
			}
			e.schemes = append(e.schemes, label)
		}
		flag := "--pos"
		if len(configs) > 1 {
			flag += " of " + path
		}
		if err := twice(flag, e.schemes); err != nil {
			return err
		}
		o.entries = append(o.entries, e)
	}
	return nil
}

// isGrid reports whether the experiment has several configs: then runs
// live in <out>/<config name>/ and are grouped by scheme and length.
func (o options) isGrid() bool { return len(o.entries) > 1 }

// schemes lists every scheme of the experiment once, in order.
func (o options) schemes() []string {
	var out []string
	for _, e := range o.entries {
		for _, s := range e.schemes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
