package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An experiment's figure is drawn from what its report.json holds: --redraw
// draws the same PNG, byte for byte, from report.json alone (the runs
// removed), and a context.json's figure too.
func TestRedrawFromJSONAlone(t *testing.T) {
	cfg, out := setup(t)
	var o, e bytes.Buffer
	if code := command([]string{"--config", cfg, "--pos", "alibi,none", "--out", out, "--mults", "1,2", "--strides", "1,1/2", "--max-tokens", "80"}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	tmp := t.TempDir()
	for _, name := range []string{"report", "context"} {
		want, err := os.ReadFile(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		js, err := os.ReadFile(filepath.Join(out, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(tmp, name+".json")
		os.WriteFile(path, js, 0o644)
		e.Reset()
		if code := command([]string{"--redraw", path}, &o, &e); code != 0 {
			t.Fatalf("--redraw %s: exit %d: %s", name, code, e.String())
		}
		got, err := os.ReadFile(filepath.Join(tmp, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s.png drawn again from %s.json differs from the experiment's (%d bytes, want %d)", name, name, len(got), len(want))
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--redraw", filepath.Join(tmp, "report.json"), "--pos", "alibi"}, "give it without --pos"},
		{[]string{"--redraw", filepath.Join(tmp, "report.md")}, "want a report's .json file"},
		{[]string{"--redraw", filepath.Join(tmp, "none.json")}, "no such file"},
	} {
		e.Reset()
		if code := command(c.args, &o, &e); code != 1 || !strings.Contains(e.String(), c.want) || strings.Count(e.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, e.String(), c.want)
		}
	}
}
