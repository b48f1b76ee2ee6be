package gguf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/gguf"
	"github.com/alibi-go/alibi/train"
)

// llamaDir holds node-llama-cpp (llama.cpp's prebuilt CPU library) and the
// script that runs it.
var llamaDir = filepath.Join("..", "..", "testdata", "llama")

// runsFlag names trained runs to compare with llama.cpp as the micro runs
// are (go test ./model/gguf -run TestLlamaRuns -args -runs runs/tiny,...).
var runsFlag = flag.String("runs", "", "comma-separated run directories to export and score with llama.cpp (TestLlamaRuns)")

// longFlag adds, in TestLlamaRuns, one window of this many tokens at the
// start of each run's validation split, scored by both (not for a
// sinusoidal run, whose table stops at 4L).
var longFlag = flag.Int("long", 0, "TestLlamaRuns: also score one window of this many tokens")

// tolerance is the largest difference of the mean negative log-likelihood
// per token, in nats, between llama.cpp and the project's evaluation of the
// same windows of an f32 file.
const tolerance = 1e-3

// needLlama skips the test when Node or node-llama-cpp is missing, and
// fails it in CI, which installs them.
func needLlama(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the comparison with llama.cpp is not a short test")
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(llamaDir, "node_modules", "node-llama-cpp")); err != nil {
		missing = "node-llama-cpp is not installed: run (cd testdata/llama && npm ci --ignore-scripts)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(missing)
	}
	t.Skip(missing)
}

// llamaModel is one file for score.mjs to load, and what to do with it.
type llamaModel struct {
	Path    string     `json:"path"`
	Context int        `json:"context"`
	Windows [][]uint32 `json:"windows"`
	Texts   []string   `json:"texts,omitempty"`
}

// llamaResult is score.mjs's answer for one model.
type llamaResult struct {
	Logprobs [][]*float64 `json:"logprobs"`
	Tokens   [][]uint32   `json:"tokens"`
}

// runLlama loads every model in llama.cpp, in one node process, and
// returns its results in order.
func runLlama(t *testing.T, models []llamaModel) []llamaResult {
	t.Helper()
	req, err := json.Marshal(map[string]any{"models": models})
	if err != nil {
		t.Fatal(err)
	}
	reqPath := filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(reqPath, req, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("node", filepath.Join(llamaDir, "score.mjs"), reqPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node score.mjs: %v: %s", err, stderr.String())
	}
	var res struct {
		Results []llamaResult `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != len(models) {
		t.Fatalf("node score.mjs: %d results for %d models (%v): %.300s", len(res.Results), len(models), err, out)
	}
	return res.Results
}

// projectNLL is the project's negative log-likelihood of each next token of
// window, scored in one pass from its first token, as eval scores a
// window.
func projectNLL(t *testing.T, m *model.Model, window []uint32) []float64 {
	t.Helper()
	n := len(window) - 1
	g, err := m.NewGraph(1, n, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ids, targets := make([]int, n), make([]int, n)
	for i := range ids {
		ids[i], targets[i] = int(window[i]), int(window[i+1])
	}
	if err := g.Execute(ids, targets); err != nil {
		t.Fatal(err)
	}
	nll := make([]float64, n)
	layers.TokenNLL(g.LogitsData(), m.Config.Vocab, targets, nll)
	return nll
}

// agreement compares llama.cpp's log-probabilities of windows with the
// project's negative log-likelihoods: the difference of the mean NLL per
// token and the largest difference of one token's.
func agreement(t *testing.T, name string, got [][]*float64, want [][]float64) (meanDiff, maxDiff float64) {
	t.Helper()
	var sumGot, sumWant float64
	n := 0
	if len(got) != len(want) {
		t.Fatalf("%s: llama.cpp scored %d windows of %d", name, len(got), len(want))
	}
	for w := range want {
		if len(got[w]) != len(want[w]) {
			t.Fatalf("%s: window %d: llama.cpp scored %d tokens of %d", name, w, len(got[w]), len(want[w]))
		}
		for i, lp := range got[w] {
			if lp == nil {
				t.Fatalf("%s: window %d token %d: llama.cpp gave no probability", name, w, i)
			}
			sumGot -= *lp
			sumWant += want[w][i]
			maxDiff = max(maxDiff, math.Abs(-*lp-want[w][i]))
			n++
		}
	}
	return math.Abs(sumGot-sumWant) / float64(n), maxDiff
}

// meanNLL is the mean of the project's negative log-likelihoods.
func meanNLL(ws [][]float64) float64 {
	var s float64
	n := 0
	for _, w := range ws {
		for _, x := range w {
			s += x
		}
		n += len(w)
	}
	return s / float64(n)
}

// meanLlama is the mean negative log-likelihood of llama.cpp's
// log-probabilities (checked present by agreement).
func meanLlama(ws [][]*float64) float64 {
	var s float64
	n := 0
	for _, w := range ws {
		for _, x := range w {
			s -= *x
		}
		n += len(w)
	}
	return s / float64(n)
}

// microRun is a micro run trained once per test binary.
type microRun struct {
	once    sync.Once
	trained *eval.Trained
	err     error
}

var (
	microMu   sync.Mutex
	microRuns = map[string]*microRun{}
	microRoot string
)

// trainMicro trains (once) a micro model of the scheme with the tokenizer
// spec ("" for bytes, or "bpe:N") and opens it.
func trainMicro(t *testing.T, pos, tokenizer string, d int) *eval.Trained {
	t.Helper()
	key := fmt.Sprintf("%s/%s/d%d", pos, tokenizer, d)
	microMu.Lock()
	if microRoot == "" {
		dir, err := os.MkdirTemp("", "gguf-micro-")
		if err != nil {
			microMu.Unlock()
			t.Fatal(err)
		}
		microRoot = dir
	}
	r, ok := microRuns[key]
	if !ok {
		r = &microRun{}
		microRuns[key] = r
	}
	microMu.Unlock()
	r.once.Do(func() {
		tok := ""
		if tokenizer != "" {
			tok = "data: {tokenizer: " + tokenizer + "}\n"
		}
		cfg, err := train.ParseConfig([]byte(fmt.Sprintf(`
model: {d_model: %d, n_layers: 2, n_heads: 4, d_ff: %d, pos: %s, train_len: 32, seed: 3}
train: {batch: 8, steps: 150, lr: 5.0e-3, warmup: 10, checkpoint_every: 150, eval_tokens: 256, final_eval_tokens: 1024}
%s`, d, 2*d, pos, tok)))
		if err != nil {
			r.err = err
			return
		}
		cfg.Out = filepath.Join(microRoot, strings.NewReplacer("/", "-", ":", "-").Replace(key))
		if _, r.err = train.Train(context.Background(), cfg, train.Options{}); r.err != nil {
			return
		}
		r.trained, r.err = eval.OpenRun(cfg.Out, nil)
	})
	if r.err != nil {
		t.Fatalf("micro %s run: %v", key, r.err)
	}
	// Each caller gets its own model: an extension changes it.
	tr, err := eval.OpenCheckpoint(r.trained.Weights.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	tr.Name = r.trained.Name
	return tr
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if microRoot != "" {
		os.RemoveAll(microRoot)
	}
	os.Exit(code)
}

// export writes tr's model as a GGUF file in dir.
func export(t *testing.T, tr *eval.Trained, dir, name string, opt gguf.Options) (string, *gguf.File) {
	t.Helper()
	tok, err := tr.RunTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	src := gguf.Source{Model: tr.Model, Tokenizer: tok, Name: tr.Label(), Checkpoint: tr.Weights.Checkpoint,
		Step: tr.Weights.Step, Steps: tr.Weights.Steps, Finished: tr.Weights.Final(), Meta: tr.Meta}
	f, _, err := gguf.Build(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".gguf")
	writeFile(t, path, f)
	return path, f
}

func writeFile(t *testing.T, path string, f *gguf.File) {
	t.Helper()
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// windows are the validation split's first two windows of L+1 tokens and
// its first of 4L+1: scored at L and past it.
func windows(t *testing.T, tr *eval.Trained) (atL, at4L [][]uint32) {
	t.Helper()
	val, err := tr.ValidationTokens(nil)
	if err != nil {
		t.Fatal(err)
	}
	l := tr.Model.Config.TrainLen
	if len(val) < 4*l+1 {
		t.Fatalf("%d validation tokens, want %d", len(val), 4*l+1)
	}
	return [][]uint32{val[:l+1], val[l : 2*l+1]}, [][]uint32{val[:4*l+1]}
}

// comparison is one exported model scored by both at L and 4L.
type comparison struct {
	name      string
	tr        *eval.Trained
	path      string
	file      *gguf.File
	atL, at4L [][]uint32
	tol       float64
	// scorer, when set, is the model the project scores with instead of
	// tr.Model; far, that the two must disagree (a control).
	scorer *model.Model
	far    bool
}

// compare scores every comparison with llama.cpp (one node process) and
// with the project, and checks the agreement at L and at 4L.
func compare(t *testing.T, cs []comparison) {
	t.Helper()
	var models []llamaModel
	for _, c := range cs {
		l := c.tr.Model.Config.TrainLen
		models = append(models, llamaModel{Path: c.path, Context: 8 * l, Windows: append(append([][]uint32{}, c.atL...), c.at4L...)})
	}
	res := runLlama(t, models)
	t.Logf("%-20s %12s %12s %12s %12s %16s", "model", "|dNLL| at L", "max at L", "|dNLL| 4L", "max at 4L", "4L vs tanh-GELU")
	for i, c := range cs {
		scorer := c.tr.Model
		if c.scorer != nil {
			scorer = c.scorer
		}
		var wantL, want4L [][]float64
		for _, w := range c.atL {
			wantL = append(wantL, projectNLL(t, scorer, w))
		}
		for _, w := range c.at4L {
			want4L = append(want4L, projectNLL(t, scorer, w))
		}
		nL := len(c.atL)
		meanL, maxL := agreement(t, c.name, res[i].Logprobs[:nL], wantL)
		mean4L, max4L := agreement(t, c.name, res[i].Logprobs[nL:], want4L)
		if c.far {
			t.Logf("%-20s %12.2e %12.2e %12.2e %12.2e (a control: must be far off)", c.name, meanL, maxL, mean4L, max4L)
			if max(meanL, mean4L) <= c.tol {
				t.Errorf("%s: the control agrees with the project to %.3g nats at L and %.3g at 4L, within %g: the comparison cannot see the mistake", c.name, meanL, mean4L, c.tol)
			}
			continue
		}
		// The file run with llama.cpp's GELU: what is left of the difference
		// is the rest of llama.cpp's arithmetic.
		ref := newReference(t, c.file, geluLlama)
		var tanh4L [][]float64
		for _, w := range c.at4L {
			tanh4L = append(tanh4L, ref.nll(t, w))
		}
		meanTanh, _ := agreement(t, c.name, res[i].Logprobs[nL:], tanh4L)
		t.Logf("%-20s %12.2e %12.2e %12.2e %12.2e %16.2e   ppl at L %.4f -> %.4f, at 4L %.4f -> %.4f", c.name, meanL, maxL, mean4L, max4L, meanTanh,
			math.Exp(meanNLL(wantL)), math.Exp(meanLlama(res[i].Logprobs[:nL])), math.Exp(meanNLL(want4L)), math.Exp(meanLlama(res[i].Logprobs[nL:])))
		if c.file.Tensors[0].Type == gguf.F32 && meanTanh > 1e-5 {
			t.Errorf("%s: llama.cpp differs from the file run with its own GELU by %.3g nats per token at 4L: more than its GELU tells the two apart", c.name, meanTanh)
		}
		if meanL > c.tol || mean4L > c.tol {
			t.Errorf("%s: the mean NLL per token differs from the project's by %.3g nats at L and %.3g at 4L, more than %g", c.name, meanL, mean4L, c.tol)
		}
	}
}

// variant is a micro model exported one way.
type variant struct {
	name, pos, tokenizer, extend string
	factor                       float64
	d                            int // d_model; 0 for 32
}

// variants are the models llama.cpp runs: every scheme it has, with the
// byte tokenizer and with a BPE, rope with each extension it has.
var variants = []variant{
	{name: "alibi bytes", pos: model.PosALiBi},
	{name: "none bytes", pos: model.PosNone},
	{name: "rope bytes", pos: model.PosRoPE},
	{name: "rope+pi x4 bytes", pos: model.PosRoPE, extend: "pi", factor: 4},
	{name: "rope+ntk x4 bytes", pos: model.PosRoPE, extend: "ntk", factor: 4},
	{name: "sinusoidal bytes", pos: model.PosSinusoidal},
	{name: "alibi bpe:300", pos: model.PosALiBi, tokenizer: "bpe:300"},
	{name: "rope bpe:300", pos: model.PosRoPE, tokenizer: "bpe:300"},
}

// exportVariant trains (once) and exports a variant in type typ to dir:
// a sinusoidal model with a table of 4L positions.
func exportVariant(t *testing.T, v variant, dir string, typ gguf.TensorType) comparison {
	t.Helper()
	d := v.d
	if d == 0 {
		d = 32
	}
	tr := trainMicro(t, v.pos, v.tokenizer, d)
	if v.extend != "" {
		if err := tr.Model.Extend(v.extend, v.factor); err != nil {
			t.Fatal(err)
		}
	}
	opt := gguf.Options{Type: typ}
	if v.pos == model.PosSinusoidal {
		opt.Context = 4 * tr.Model.Config.TrainLen
	}
	name := strings.NewReplacer(" ", "-", "+", "-", ":", "-").Replace(v.name) + "-" + typ.String()
	path, f := export(t, tr, dir, name, opt)
	atL, at4L := windows(t, tr)
	return comparison{name: v.name, tr: tr, path: path, file: f, atL: atL, at4L: at4L, tol: tolerance}
}

// The exported files, read back and run by an independent float64 forward
// pass of llama.cpp's architectures with the project's GELU, give the
// project's own scores at L and at 4L: the weights, their layout, the
// positions and the slopes are the model's. It needs no llama.cpp.
func TestFileIsTheModel(t *testing.T) {
	dir := t.TempDir()
	for _, v := range variants {
		c := exportVariant(t, v, dir, gguf.F32)
		raw, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		ref := newReference(t, f, geluExact)
		for _, ws := range [][][]uint32{c.atL, c.at4L} {
			var got [][]*float64
			var want [][]float64
			for _, w := range ws {
				want = append(want, projectNLL(t, c.tr.Model, w))
				var lp []*float64
				for _, x := range ref.nll(t, w) {
					x := -x
					lp = append(lp, &x)
				}
				got = append(got, lp)
			}
			mean, most := agreement(t, v.name, got, want)
			t.Logf("%-20s %d tokens: |dNLL| %.2e, largest per token %.2e", v.name, len(ws[0])-1, mean, most)
			if mean > 1e-6 || most > 1e-5 {
				t.Errorf("%s at %d tokens: the file's forward pass differs from the model's by %.3g nats per token on average, %.3g at most", v.name, len(ws[0])-1, mean, most)
			}
		}
	}
}

// Trained micro models of every scheme that llama.cpp runs, with the byte
// tokenizer and with a BPE, exported and scored by llama.cpp at L and at 4L
// (past the training length) agree with the project's evaluation of the
// same windows.
func TestLlamaCppScores(t *testing.T) {
	needLlama(t)
	dir := t.TempDir()
	var cs []comparison
	for _, v := range variants {
		cs = append(cs, exportVariant(t, v, dir, gguf.F32))
	}
	cs = append(cs, controls(t, cs, dir)...)
	compare(t, cs)
}

// controls are mistakes the comparison must see: the project's ALiBi
// slopes in reverse order against the right file; a file without
// max_alibi_bias (llama.cpp then runs ALiBi off); and a file whose rotary
// pairs are (2k, 2k+1), not the half split (k, k+d_head/2).
func controls(t *testing.T, cs []comparison, dir string) []comparison {
	t.Helper()
	var out []comparison
	for _, c := range cs {
		switch c.name {
		case "alibi bytes":
			reversed, err := model.FromWeights(c.tr.Model.Config, c.tr.Model.Weights)
			if err != nil {
				t.Fatal(err)
			}
			slices.Reverse(reversed.PositionBuffer)
			r := c
			r.name, r.scorer, r.far = "slopes reversed", reversed, true
			out = append(out, r)

			f := *c.file
			f.KV = slices.DeleteFunc(slices.Clone(f.KV), func(kv gguf.KV) bool { return kv.Key == "mpt.attention.max_alibi_bias" })
			r = c
			r.name, r.file, r.far = "no max_alibi_bias", &f, true
			r.path = filepath.Join(dir, "no-max-bias.gguf")
			writeFile(t, r.path, &f)
			out = append(out, r)
		case "rope bytes":
			f := *c.file
			f.Tensors = slices.Clone(f.Tensors)
			cfg := c.tr.Model.Config
			for i, tn := range f.Tensors {
				if strings.HasSuffix(tn.Name, "attn_qkv.weight") || strings.HasSuffix(tn.Name, "attn_qkv.bias") {
					f.Tensors[i] = interleave(t, tn, cfg.DModel, cfg.NHeads)
				}
			}
			r := c
			r.name, r.file, r.far = "rotary pairs (2k,2k+1)", &f, true
			r.path = filepath.Join(dir, "interleaved.gguf")
			writeFile(t, r.path, &f)
			out = append(out, r)
		}
	}
	return out
}

// interleave reorders the query and key rows of a fused qkv tensor so that
// llama.cpp's half-split rotation turns the model's dimensions (2k, 2k+1)
// together: the rotary pairing of GPT-J and the original RoFormer.
func interleave(t *testing.T, tn gguf.Tensor, d, heads int) gguf.Tensor {
	t.Helper()
	v, err := gguf.Decode(tn)
	if err != nil {
		t.Fatal(err)
	}
	width := len(v) / (3 * d) // values per row: d_model for the weight, 1 for the bias
	dh := d / heads
	out := slices.Clone(v)
	for part := 0; part < 2; part++ {
		for h := 0; h < heads; h++ {
			base := part*d + h*dh
			for k := 0; k < dh/2; k++ {
				copy(out[(base+k)*width:(base+k+1)*width], v[(base+2*k)*width:(base+2*k+1)*width])
				copy(out[(base+k+dh/2)*width:(base+k+dh/2+1)*width], v[(base+2*k+1)*width:(base+2*k+2)*width])
			}
		}
	}
	n, err := gguf.Encode(tn.Name, tn.Dims, tn.Type, out)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// llama.cpp tokenizes 100 KB of the corpus to the project's ids, with the
// byte tokenizer, a BPE of GPT-2's pattern and one of Llama 3's (trained
// here without ignore_merges, which llama.cpp's llama-bpe always applies).
func TestLlamaCppTokenizes(t *testing.T) {
	needLlama(t)
	dir := t.TempDir()
	corpus, err := data.LoadCorpus("builtin:opticks")
	if err != nil {
		t.Fatal(err)
	}
	llama3, err := bpe.Train(corpus.Bytes[:400_000], 1000, bpe.TrainOptions{Pattern: bpe.Llama3})
	if err != nil {
		t.Fatal(err)
	}
	var models []llamaModel
	var toks []data.Tokenizer
	var texts [][]byte
	for i, tok := range []data.Tokenizer{data.ByteTokenizer{}, trainMicro(t, model.PosALiBi, "bpe:300", 32).Tokenizer, llama3} {
		m, err := model.New(model.Config{Vocab: tok.VocabSize(), DModel: 32, NLayers: 1, NHeads: 4, DFF: 64, Pos: model.PosALiBi, TrainLen: 16, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := gguf.Build(gguf.Source{Model: m, Tokenizer: tok}, gguf.Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("tokenizer-%d.gguf", i))
		writeFile(t, path, f)
		text := corpus.Bytes[150_000*i : 150_000*i+100_000]
		for !utf8.Valid(text) { // the script reads the file as UTF-8
			text = text[:len(text)-1]
		}
		textPath := filepath.Join(dir, fmt.Sprintf("text-%d.txt", i))
		if err := os.WriteFile(textPath, text, 0o644); err != nil {
			t.Fatal(err)
		}
		models = append(models, llamaModel{Path: path, Context: 64, Texts: []string{textPath}})
		toks, texts = append(toks, tok), append(texts, text)
	}
	for i, res := range runLlama(t, models) {
		want := toks[i].Encode(texts[i])
		got := res.Tokens[0]
		t.Logf("%v: %d bytes, %d tokens", toks[i], len(texts[i]), len(want))
		if !slices.Equal(got, want) {
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			t.Errorf("%v: llama.cpp's %d ids differ from the project's %d from id %d: %v, want %v", toks[i], len(got), len(want), at,
				got[at:min(len(got), at+8)], want[at:min(len(want), at+8)])
		}
	}
}

// f16 and q8_0 files load in llama.cpp and score within their stated
// tolerance of the project's evaluation of the f32 model.
func TestLlamaCppSmallerTypes(t *testing.T) {
	needLlama(t)
	dir := t.TempDir()
	tol := map[gguf.TensorType]float64{gguf.F16: 1e-3, gguf.Q8_0: 5e-3}
	var cs []comparison
	for _, v := range []variant{variants[0], variants[2], variants[5], variants[7]} {
		v.d = 64 // node-llama-cpp 3.21.1's llama.cpp runs a q8_0 file of d_model 32 correctly for 64 tokens only (seen on an AMX Xeon)
		for _, typ := range []gguf.TensorType{gguf.F16, gguf.Q8_0} {
			c := exportVariant(t, v, dir, typ)
			c.name += " " + typ.String()
			c.tol = tol[typ]
			cs = append(cs, c)
		}
	}
	compare(t, cs)
}

// The runs of -runs, exported in each type and scored by llama.cpp and by
// the project at L and at 4L: the agreement and the perplexities that the
// README states (go test ./model/gguf -run TestLlamaRuns -v -args -runs
// runs/tiny,runs/tiny-rope,...). A rope run is also exported with pi at
// factor 4.
func TestLlamaRuns(t *testing.T) {
	if *runsFlag == "" {
		t.Skip("no -runs given")
	}
	needLlama(t)
	dir := t.TempDir()
	var cs []comparison
	for _, run := range strings.Split(*runsFlag, ",") {
		for _, ext := range []string{"", "pi"} {
			for _, typ := range []gguf.TensorType{gguf.F32, gguf.F16, gguf.Q8_0} {
				tr, err := eval.OpenRun(run, nil)
				if err != nil {
					t.Fatal(err)
				}
				if ext != "" && tr.Model.Config.Pos != model.PosRoPE {
					continue
				}
				name := filepath.Base(run)
				if ext != "" {
					if err := tr.Model.Extend(ext, 4); err != nil {
						t.Fatal(err)
					}
					name += "+" + ext + "x4"
				}
				opt := gguf.Options{Type: typ}
				l := tr.Model.Config.TrainLen
				if tr.Model.Config.Pos == model.PosSinusoidal {
					opt.Context = 4 * l
				}
				path, f := export(t, tr, dir, name+"-"+typ.String(), opt)
				val, err := tr.ValidationTokens(nil)
				if err != nil {
					t.Fatal(err)
				}
				c := comparison{name: name + " " + typ.String(), tr: tr, path: path, file: f, tol: 1}
				for w := 0; w < 8; w++ {
					c.atL = append(c.atL, val[w*l:(w+1)*l+1])
				}
				for w := 0; w < 2; w++ {
					c.at4L = append(c.at4L, val[w*4*l:(w+1)*4*l+1])
				}
				cs = append(cs, c)
			}
		}
	}
	compare(t, cs)
	if *longFlag > 0 {
		longWindow(t, dir, strings.Split(*runsFlag, ","), *longFlag)
	}
}

// longWindow scores one window of n tokens, the start of each run's
// validation split, with llama.cpp (f32 file) and with the project, and
// logs both perplexities.
func longWindow(t *testing.T, dir string, runs []string, n int) {
	t.Helper()
	var models []llamaModel
	var want []float64
	var names []string
	for _, run := range runs {
		tr, err := eval.OpenRun(run, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Model.Config.Pos == model.PosSinusoidal {
			continue
		}
		val, err := tr.ValidationTokens(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(val) < n+1 {
			t.Fatalf("%s: %d validation tokens, fewer than %d", run, len(val), n+1)
		}
		path, _ := export(t, tr, dir, filepath.Base(run)+"-long", gguf.Options{})
		models = append(models, llamaModel{Path: path, Context: 2 * n, Windows: [][]uint32{val[:n+1]}})
		want = append(want, meanNLL([][]float64{projectNLL(t, tr.Model, val[:n+1])}))
		names = append(names, filepath.Base(run))
	}
	for i, res := range runLlama(t, models) {
		got := meanLlama(res.Logprobs)
		t.Logf("%-20s one window of %d tokens: perplexity %.4f (project) -> %.4f (llama.cpp), |dNLL| %.2e", names[i], n, math.Exp(want[i]), math.Exp(got), math.Abs(got-want[i]))
	}
}
