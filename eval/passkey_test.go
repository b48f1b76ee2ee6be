package eval

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/model"
)

// filler is text without digits, long enough for every test distance.
var filler = []byte(strings.Repeat("Light which is reflected from a body is refracted at its surface. ", 100))

// fillerIDs is filler under the byte tokenizer.
var fillerIDs = data.ByteTokenizer{}.Encode(filler)

// oracle is handed the answer: its logits put the next answer byte first.
type oracle struct{ calls int }

func (o *oracle) answerLogits(prompt, answer []uint32) ([]float32, error) {
	o.calls++
	out := make([]float32, len(answer)*256)
	for i, b := range answer {
		out[i*256+int(b)] = 10
	}
	return out, nil
}

// constant ignores its input: every row is the same logits.
type constant struct{}

func (constant) answerLogits(prompt, answer []uint32) ([]float32, error) {
	out := make([]float32, len(answer)*256)
	for i := range out {
		out[i] = float32(i % 256 % 7) // the first maximum is byte 6, never a digit
	}
	return out, nil
}

func TestPasskeyOracleAndConstant(t *testing.T) {
	o := PasskeyOptions{Distances: []int{40, 64, 100}, Depths: []float64{0, 1}, Episodes: 5, Seed: 3}
	o.defaults()
	or := &oracle{}
	res, err := scorePasskey(or, 256, 128, fillerIDs, o)
	if err != nil {
		t.Fatal(err)
	}
	if or.calls != 15 {
		t.Errorf("oracle ran %d episodes, want 15", or.calls)
	}
	// An oracle's digit has probability e^10/(e^10+255).
	wantLP := 10 - math.Log(math.Exp(10)+255)
	for _, p := range res.Points {
		if p.Accuracy != 1 || p.Correct != 5 || p.DigitAccuracy != 1 || math.Abs(p.LogProb-wantLP) > 1e-5 {
			t.Errorf("oracle at %d: %+v, want accuracy 1 and log-prob %.6f", p.Distance, p, wantLP)
		}
		if p.ByDepth[0].Episodes != 3 || p.ByDepth[1].Episodes != 2 || p.ByDepth[0].Correct != 3 {
			t.Errorf("oracle at %d by depth: %+v", p.Distance, p.ByDepth)
		}
	}
	if res.ShortAccuracy != 1 || res.EffectiveContext != 100 {
		t.Errorf("oracle: short accuracy %v, effective context %d, want 1 and 100", res.ShortAccuracy, res.EffectiveContext)
	}
	res, err = scorePasskey(constant{}, 256, 128, fillerIDs, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Points {
		if p.Accuracy != 0 || p.DigitAccuracy != 0 {
			t.Errorf("constant model at %d: %+v, want accuracy 0", p.Distance, p)
		}
	}
	if res.EffectiveContext != 0 || !strings.Contains(res.EffectiveNote, "does not retrieve") {
		t.Errorf("constant model: effective context %d (%q)", res.EffectiveContext, res.EffectiveNote)
	}
}

func TestEffectiveContext(t *testing.T) {
	pt := func(d, correct int) PasskeyPoint {
		return PasskeyPoint{Distance: d, Episodes: 10, Correct: correct, Accuracy: float64(correct) / 10}
	}
	for _, c := range []struct {
		name       string
		points     []PasskeyPoint
		short      float64
		length     int
		note       string
		contiguous int
	}{
		{"falls past L", []PasskeyPoint{pt(48, 10), pt(64, 8), pt(128, 5), pt(256, 4), pt(512, 1)}, 0.9, 128, "", 128},
		{"exactly half counts", []PasskeyPoint{pt(64, 8), pt(128, 4), pt(256, 3)}, 0.8, 128, "", 128},
		{"largest, not first failure", []PasskeyPoint{pt(64, 6), pt(128, 2), pt(1024, 3)}, 0.6, 1024, "", 64},
		{"unsorted points", []PasskeyPoint{pt(1024, 3), pt(128, 2), pt(64, 6)}, 0.6, 1024, "", 64},
		{"nothing short", []PasskeyPoint{pt(128, 5)}, 0, 0, "no distance up to L/2 = 64", 0},
		{"zero short", []PasskeyPoint{pt(64, 0), pt(128, 5)}, 0, 0, "does not retrieve", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			short, length, note := EffectiveContext(c.points, 128)
			if math.Abs(short-c.short) > 1e-12 || length != c.length || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
				t.Errorf("got %v, %d, %q; want %v, %d, %q", short, length, note, c.short, c.length, c.note)
			}
			if got := ContiguousContext(c.points, 128); got != c.contiguous {
				t.Errorf("contiguous context %d, want %d", got, c.contiguous)
			}
		})
	}
}

// The cached scorer's logits are the full forward pass's, for chunks that
// split the prompt anywhere, and reusing the cache changes nothing.
func TestCachedScorerMatchesFullPass(t *testing.T) {
	for _, pos := range []string{"alibi", "sinusoidal", "rope", "t5", "fire"} {
		t.Run(pos, func(t *testing.T) {
			m := testModel(t, pos)
			gen, err := data.NewTokenPasskey(fillerIDs, data.ByteTokenizer{}, 5)
			if err != nil {
				t.Fatal(err)
			}
			e, err := gen.Episode(60, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			ids := ints(append(append([]uint32(nil), e.Prompt...), e.Answer[:4]...))
			full := logitsOf(t, m, ids)
			want := full[(len(e.Prompt)-1)*256:]
			for _, chunk := range []int{7, 32, 1024} {
				s := &cachedScorer{m: m, cache: m.NewCache(1), chunk: chunk}
				other, _ := gen.Episode(90, 1)
				for round := range 3 {
					p, a := e.Prompt, e.Answer
					if round == 1 {
						p, a = other.Prompt, other.Answer
					}
					got, err := s.answerLogits(p, a)
					if err != nil {
						t.Fatal(err)
					}
					if round == 1 {
						continue
					}
					for i := range want {
						if d := math.Abs(float64(got[i] - want[i])); d > 2e-4*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("chunk %d round %d: logit %d is %v, full pass %v", chunk, round, i, got[i], want[i])
						}
					}
				}
				s.close()
			}
		})
	}
}

// Correct is the exact match of greedy decoding through model.Generate.
func TestPasskeyCorrectIsGreedyDecoding(t *testing.T) {
	m := testModel(t, "alibi")
	gen, _ := data.NewTokenPasskey(fillerIDs, data.ByteTokenizer{}, 8)
	s := &cachedScorer{m: m, cache: m.NewCache(1), chunk: 16}
	defer s.close()
	greedy := model.NewSampler(model.Greedy, 0)
	for k := range 20 {
		e, err := gen.Episode(40+3*k, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		// A random model never writes the key; hand it the key's first k%5
		// digits in the prompt, and ask for the rest.
		keep := k % data.PasskeyDigits
		e.Prompt = append(e.Prompt, e.Answer[:keep]...)
		e.Answer = e.Answer[keep:]
		logits, err := s.answerLogits(e.Prompt, e.Answer)
		if err != nil {
			t.Fatal(err)
		}
		var chain []byte // greedy choices given the true bytes, up to the first miss
		for i := range e.Answer {
			c := greedy.Next(logits[i*256 : (i+1)*256])
			chain = append(chain, byte(c))
			if c != int(e.Answer[i]) {
				break
			}
		}
		prompt, err := data.ByteTokenizer{}.Decode(e.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		gens, _, err := m.Generate([][]byte{prompt}, model.GenerateOptions{Tokens: len(e.Answer), Sampling: model.Greedy}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(gens[0].Text, chain) {
			t.Errorf("episode %d: greedy decoding wrote %q, the teacher-forced choices are %q", k, gens[0].Text, chain)
		}
	}
}

func TestPasskeyOptionErrors(t *testing.T) {
	m := testModel(t, "alibi")
	for _, c := range []struct {
		o    PasskeyOptions
		want string
	}{
		{PasskeyOptions{Distances: []int{20}}, "distance 20 is shorter than the question (38 bytes)"},
		{PasskeyOptions{Depths: []float64{1.5}}, "depth 1.5 is outside [0, 1]"},
		{PasskeyOptions{Episodes: -1}, "episodes must be positive"},
		{PasskeyOptions{Distances: []int{64}, MemoryLimit: 1000}, "needs about"},
		{PasskeyOptions{Distances: []int{8000}}, "distance 8000 needs 7962 bytes of filler in one piece, the filler has 6600"},
	} {
		t.Run(fmt.Sprint(c.want), func(t *testing.T) {
			_, err := Passkey(m, fillerIDs, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}

// A tiny end-to-end run: a random model answers nothing at any distance.
func TestPasskeyRandomModel(t *testing.T) {
	m := testModel(t, "kerple")
	res, err := Passkey(m, fillerIDs, PasskeyOptions{Distances: []int{40, 200}, Episodes: 4, Chunk: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 || res.Pos != "kerple" || res.TrainLen != 8 {
		t.Fatalf("%+v", res)
	}
	for _, p := range res.Points {
		if p.Episodes != 4 || p.LogProb >= 0 || math.IsNaN(p.LogProb) || p.PromptTokens != longestPrompt(p.Distance, data.MinPasskeyDistance, DefaultPasskeyDepths) {
			t.Errorf("%+v", p)
		}
	}
	if res.Precision != "" || res.Scheme() != "kerple" {
		t.Errorf("fp32: precision %q, scheme %q", res.Precision, res.Scheme())
	}
	// A bf16 model's result says so, as a perplexity report's column does.
	m.Precision = layers.BF16
	if res, err = Passkey(m, fillerIDs, PasskeyOptions{Distances: []int{40}, Episodes: 1, Chunk: 64}); err != nil {
		t.Fatal(err)
	}
	if res.Precision != "bf16" || res.Scheme() != "kerple bf16" {
		t.Errorf("bf16: precision %q, scheme %q", res.Precision, res.Scheme())
	}
}
