package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --extend puts each evaluation-time extension of a trained run beside the
// trained schemes, as a column of its own: at 1x L (factor 1) it equals its
// run, past L it does not; a second call reuses the extension's file.
func TestExperimentExtend(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,rope", "--out", out, "--mults", "1,2", "--max-tokens", "100",
		"--extend", "rope:pi,alibi:interp,rope:yarn"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	for _, want := range []string{"rope+pi", "rope+yarn", "alibi+interp", "--extend rope:pi,alibi:interp,rope:yarn"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, o.String())
		}
	}
	var rep struct {
		Runs []struct {
			Pos     string `json:"pos"`
			Results []struct {
				Len int     `json:"len"`
				PPL float64 `json:"ppl"`
			} `json:"results"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// The report keeps the losses by position in buckets, each run's
	// eval.json the full arrays.
	if strings.Contains(string(b), "position_loss") || !strings.Contains(string(b), "position_buckets") {
		t.Errorf("report.json does not hold bucketed losses by position")
	}
	if ev, err := os.ReadFile(filepath.Join(out, "alibi", "eval.json")); err != nil || !strings.Contains(string(ev), "position_loss") {
		t.Errorf("eval.json lacks the full losses by position: %v", err)
	}
	ppl := map[string][2]float64{}
	var order []string
	for _, r := range rep.Runs {
		order = append(order, r.Pos)
		ppl[r.Pos] = [2]float64{r.Results[0].PPL, r.Results[1].PPL}
	}
	if got := strings.Join(order, ","); got != "alibi,alibi+interp,rope,rope+pi,rope+yarn" {
		t.Fatalf("runs %s", got)
	}
	for v, base := range map[string]string{"alibi+interp": "alibi", "rope+pi": "rope", "rope+yarn": "rope"} {
		if ppl[v][0] != ppl[base][0] || ppl[v][1] == ppl[base][1] {
			t.Errorf("%s: %v, %s: %v; want the same at L and not at 2L", v, ppl[v], base, ppl[base])
		}
	}
	if _, err := os.Stat(filepath.Join(out, "rope", "eval-yarn.json")); err != nil {
		t.Error(err)
	}
	e.Reset()
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("second call: exit %d: %s", code, e.String())
	}
	if strings.Contains(e.String(), "+pi len") {
		t.Errorf("second call evaluated an extension again:\n%s", e.String())
	}
}

// --pos alibi+log-length trains the scheme with log-length scaling, in a
// directory and a report column of its own.
func TestExperimentLogLength(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,alibi+log-length", "--out", out, "--mults", "1,2", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "alibi+log-length") {
		t.Errorf("report lacks the log-length column:\n%s", o.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "alibi+log-length", "config.yaml"))
	if err != nil || !strings.Contains(string(b), "logit_scale: log-length") || !strings.Contains(string(b), "pos: alibi") {
		t.Errorf("the log-length run's config: %s, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "alibi", "config.yaml")); strings.Contains(string(b), "logit_scale") {
		t.Errorf("the plain run has logit_scale:\n%s", b)
	}
	e.Reset()
	if code := command([]string{"--config", cfg, "--pos", "alibi+sqrt", "--out", out}, &o, &e); code == 0 || !strings.Contains(e.String(), "--pos") {
		t.Errorf("--pos alibi+sqrt: exit %d, %s", code, e.String())
	}
}
