package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// gridFile is an experiment file (--grid): the configs of a grid, each
// with its own schemes, for grids that are not every scheme on every
// config (ALiBi at L = 256 beside sinusoidal at 512, say).
//
//	runs:
//	  - config: configs/small-256.yaml
//	    pos: alibi
//	  - config: configs/small.yaml
//	    pos: alibi,sinusoidal
type gridFile struct {
	Runs []struct {
		Config string `yaml:"config"`
		Pos    string `yaml:"pos"`
	} `yaml:"runs"`
}

// readGridFile reads an experiment file's configs and schemes, in order.
func readGridFile(path string) (configs, schemes []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--grid: %w", err)
	}
	var g gridFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&g); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("--grid %s: %s", path, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if len(g.Runs) == 0 {
		return nil, nil, fmt.Errorf("--grid %s: no runs (a list of config: and pos: entries)", path)
	}
	for i, r := range g.Runs {
		if r.Config == "" || r.Pos == "" {
			return nil, nil, fmt.Errorf("--grid %s: run %d needs both a config and a pos entry", path, i+1)
		}
		configs = append(configs, r.Config)
		schemes = append(schemes, r.Pos)
	}
	return configs, schemes, nil
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
			c.Model.ApplyLabel(label) // alibi, or alibi+log-length
			if err := c.Validate(); err != nil {
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
