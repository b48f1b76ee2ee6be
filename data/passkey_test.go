package data

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data/bpe"
)

// opticksFiller returns the embedded default corpus, the filler of most tests.
func opticksFiller(t *testing.T) []byte {
	t.Helper()
	text, err := DefaultCorpus()
	if err != nil {
		t.Fatalf("DefaultCorpus: %v", err)
	}
	return text
}

// digitFiller returns n pseudo-random decimal digits: a filler in which many
// 5-digit keys occur, so the generator must redraw keys.
func digitFiller(n int) []byte {
	r := rand.New(rand.NewPCG(7, 11))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return b
}

func mustPasskey(t *testing.T, text []byte, seed uint64) *Passkey {
	t.Helper()
	p, err := NewPasskey(text, seed)
	if err != nil {
		t.Fatalf("NewPasskey: %v", err)
	}
	return p
}

// checkEpisode asserts the layout, distance and depth of ep to the byte, and
// that the key occurs exactly twice in the prompt, both inside the statement.
func checkEpisode(t *testing.T, ep PasskeyEpisode, text []byte, distance int, depth float64) {
	t.Helper()
	after := distance - MinPasskeyDistance
	wantBefore := int(math.Round(depth * float64(after)))
	if got := ep.Distance(); got != distance {
		t.Errorf("Distance() = %d, want %d", got, distance)
	}
	if ep.StatementStart != wantBefore {
		t.Errorf("StatementStart = %d, want %d (depth %v of %d)", ep.StatementStart, wantBefore, depth, after)
	}
	if ep.AnswerStart != len(ep.Prompt) {
		t.Errorf("AnswerStart = %d, len(Prompt) = %d", ep.AnswerStart, len(ep.Prompt))
	}
	if want := wantBefore + PasskeyStatementLen + distance; len(ep.Prompt) != want {
		t.Errorf("len(Prompt) = %d, want %d", len(ep.Prompt), want)
	}
	if len(ep.Answer) != PasskeyDigits || ep.Answer[0] == '0' || strings.Trim(string(ep.Answer), "0123456789") != "" {
		t.Fatalf("Answer = %q, want %d digits not starting with 0", ep.Answer, PasskeyDigits)
	}
	key := string(ep.Answer)
	stmt := "The pass key is " + key + ". Remember it. " + key + " is the pass key."
	if got := string(ep.Prompt[ep.StatementStart:ep.StatementEnd]); got != stmt {
		t.Errorf("statement = %q, want %q", got, stmt)
	}
	if got := string(ep.Prompt[len(ep.Prompt)-MinPasskeyDistance:]); got != PasskeyQuestion {
		t.Errorf("prompt ends %q, want %q", got, PasskeyQuestion)
	}
	pre := ep.Prompt[:ep.StatementStart]
	post := ep.Prompt[ep.StatementEnd : len(ep.Prompt)-MinPasskeyDistance]
	if len(post) != after {
		t.Errorf("filler after statement = %d bytes, want %d", len(post), after)
	}
	for name, piece := range map[string][]byte{"before": pre, "after": post} {
		if !bytes.Contains(text, piece) {
			t.Errorf("filler %s (%d bytes) is not a slice of the text", name, len(piece))
		}
		if bytes.Contains(piece, ep.Answer) {
			t.Errorf("key %s occurs in the filler %s", key, name)
		}
	}
	if n := strings.Count(string(ep.Prompt), key); n != 2 {
		t.Errorf("key %s occurs %d times in the prompt, want 2", key, n)
	}
	if i := strings.Index(string(ep.Prompt), key); i != ep.StatementStart+len("The pass key is ") {
		t.Errorf("first occurrence of the key at %d, want %d", i, ep.StatementStart+len("The pass key is "))
	}
}

func TestPasskeyConstants(t *testing.T) {
	if MinPasskeyDistance != 38 {
		t.Errorf("MinPasskeyDistance = %d, want 38", MinPasskeyDistance)
	}
	if PasskeyStatementLen != 58 {
		t.Errorf("PasskeyStatementLen = %d, want 58", PasskeyStatementLen)
	}
}

func TestPasskeyEpisodeDistanceDepth(t *testing.T) {
	opticks := opticksFiller(t)
	digits := digitFiller(100_000)
	cases := []struct {
		name     string
		text     []byte
		distance int
		depth    float64
		before   int
	}{
		{"shortest depth 0", opticks, MinPasskeyDistance, 0, 0},
		{"shortest depth 1", opticks, MinPasskeyDistance, 1, 0},
		{"one byte after", opticks, MinPasskeyDistance + 1, 0.5, 1}, // round(0.5) = 1
		{"32 depth 0.5", opticks, 32 + MinPasskeyDistance, 0.5, 16},
		{"64 depth 0", opticks, 64 + MinPasskeyDistance, 0, 0},
		{"64 depth 1", opticks, 64 + MinPasskeyDistance, 1, 64},
		{"100 depth 0.333", opticks, 100 + MinPasskeyDistance, 0.333, 33},
		{"1000 depth 0.25", opticks, 1000 + MinPasskeyDistance, 0.25, 250},
		{"16384 depth 1", opticks, 16384, 1, 16384 - MinPasskeyDistance},
		{"16384 depth 0.1", opticks, 16384, 0.1, 1635}, // 0.1*16346 = 1634.6
		{"digits 20000 depth 1", digits, 20000 + MinPasskeyDistance, 1, 20000},
		{"whole text after", digits, len(digits) + MinPasskeyDistance, 0.5, len(digits) / 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPasskey(t, c.text, 1)
			for range 5 {
				ep, err := p.Episode(c.distance, c.depth)
				if err != nil {
					t.Fatalf("Episode(%d, %v): %v", c.distance, c.depth, err)
				}
				if ep.StatementStart != c.before {
					t.Errorf("StatementStart = %d, want %d", ep.StatementStart, c.before)
				}
				checkEpisode(t, ep, c.text, c.distance, c.depth)
			}
		})
	}
}

// TestPasskeyRedrawsKeysInFiller draws many episodes from a digit filler in
// which about a third of all keys occur: every key must avoid its filler.
func TestPasskeyRedrawsKeysInFiller(t *testing.T) {
	digits := digitFiller(50_000)
	p := mustPasskey(t, digits, 3)
	for i := range 50 {
		distance := 20000 + MinPasskeyDistance + i
		ep, err := p.Episode(distance, 1)
		if err != nil {
			t.Fatalf("Episode %d: %v", i, err)
		}
		checkEpisode(t, ep, digits, distance, 1)
	}
}

func TestPasskeyDeterminism(t *testing.T) {
	text := opticksFiller(t)
	requests := []struct {
		distance int
		depth    float64
	}{{MinPasskeyDistance, 0}, {200, 0.5}, {1000, 1}, {5000, 0.1}, {300, 0.9}}
	gen := func(seed uint64) []PasskeyEpisode {
		p := mustPasskey(t, text, seed)
		var eps []PasskeyEpisode
		for _, r := range requests {
			ep, err := p.Episode(r.distance, r.depth)
			if err != nil {
				t.Fatalf("Episode(%d, %v): %v", r.distance, r.depth, err)
			}
			eps = append(eps, ep)
			// A failed request draws nothing.
			if _, err := p.Episode(r.distance, 2); err == nil {
				t.Fatalf("Episode(%d, 2) gave no error", r.distance)
			}
		}
		return eps
	}
	a, b, c := gen(42), gen(42), gen(43)
	differ := 0
	for i := range a {
		if !bytes.Equal(a[i].Prompt, b[i].Prompt) || !bytes.Equal(a[i].Answer, b[i].Answer) ||
			a[i].StatementStart != b[i].StatementStart || a[i].StatementEnd != b[i].StatementEnd || a[i].AnswerStart != b[i].AnswerStart {
			t.Errorf("episode %d differs between two generators seeded 42", i)
		}
		if !bytes.Equal(a[i].Prompt, c[i].Prompt) {
			differ++
		}
		if !bytes.Equal(a[i].Answer, c[i].Answer) && bytes.Equal(a[i].Prompt, c[i].Prompt) {
			t.Errorf("episode %d: answers differ but prompts are equal", i)
		}
	}
	if differ != len(a) {
		t.Errorf("seeds 42 and 43 gave %d of %d different prompts, want all", differ, len(a))
	}
}

func TestPasskeyErrors(t *testing.T) {
	if _, err := NewPasskey(nil, 1); err == nil {
		t.Error("NewPasskey(nil) gave no error")
	}
	short := []byte("a short filler text of fifty bytes, more or less..")
	p := mustPasskey(t, short, 1)
	cases := []struct {
		name     string
		distance int
		depth    float64
		want     string
	}{
		{"distance below question", MinPasskeyDistance - 1, 0.5, "shorter than the question"},
		{"distance zero", 0, 0, "shorter than the question"},
		{"negative distance", -5, 0, "shorter than the question"},
		{"depth below 0", 100, -0.01, "outside [0, 1]"},
		{"depth above 1", 100, 1.01, "outside [0, 1]"},
		{"depth NaN", 100, math.NaN(), "outside [0, 1]"},
		{"depth +Inf", 100, math.Inf(1), "outside [0, 1]"},
		{"filler too short", MinPasskeyDistance + len(short) + 1, 0, "bytes of filler"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Episode(c.distance, c.depth)
			if err == nil {
				t.Fatalf("Episode(%d, %v) gave no error", c.distance, c.depth)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "passkey: ") {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
	// The whole text as filler on both sides is still possible.
	if _, err := p.Episode(MinPasskeyDistance+len(short), 1); err != nil {
		t.Errorf("filler of exactly len(text): %v", err)
	}
	// A filler in which every key occurs: all 90000 keys written out.
	var all []byte
	for k := 10000; k < 100000; k++ {
		all = append(all, byte('0'+k/10000), byte('0'+k/1000%10), byte('0'+k/100%10), byte('0'+k/10%10), byte('0'+k%10), ' ')
	}
	p = mustPasskey(t, all, 1)
	if _, err := p.Episode(len(all)+MinPasskeyDistance, 0); err == nil || !strings.Contains(err.Error(), "occur in the filler") {
		t.Errorf("filler holding every key: err = %v, want one naming keys in the filler", err)
	}
}

func TestPasskeyEpisodeAt(t *testing.T) {
	text := opticksFiller(t)
	cases := []struct{ before, distance int }{
		{0, MinPasskeyDistance},
		{1, MinPasskeyDistance},   // before > after
		{500, MinPasskeyDistance}, // the key at the very end of the filler
		{0, 4096},
		{3000, 100},
		{len(text), MinPasskeyDistance + len(text)},
	}
	for _, c := range cases {
		p := mustPasskey(t, text, 9)
		ep, err := p.EpisodeAt(c.before, c.distance)
		if err != nil {
			t.Fatalf("EpisodeAt(%d, %d): %v", c.before, c.distance, err)
		}
		if ep.StatementStart != c.before || ep.Distance() != c.distance {
			t.Errorf("EpisodeAt(%d, %d): StatementStart %d, Distance %d", c.before, c.distance, ep.StatementStart, ep.Distance())
		}
		if want := c.before + PasskeyStatementLen + c.distance; len(ep.Prompt) != want {
			t.Errorf("EpisodeAt(%d, %d): len(Prompt) = %d, want %d", c.before, c.distance, len(ep.Prompt), want)
		}
	}
	// Episode is EpisodeAt at before = round(depth*after): same seed, same episode.
	a, b := mustPasskey(t, text, 4), mustPasskey(t, text, 4)
	e1, err1 := a.Episode(1000+MinPasskeyDistance, 0.4567)
	e2, err2 := b.EpisodeAt(457, 1000+MinPasskeyDistance)
	if err1 != nil || err2 != nil {
		t.Fatalf("errors %v, %v", err1, err2)
	}
	if !bytes.Equal(e1.Prompt, e2.Prompt) || !bytes.Equal(e1.Answer, e2.Answer) {
		t.Error("Episode(1038, 0.4567) differs from EpisodeAt(457, 1038) with the same seed")
	}
	p := mustPasskey(t, []byte("0123456789 filler"), 1)
	for _, c := range []struct {
		before, distance int
		want             string
	}{
		{-1, 100, "negative filler"},
		{18, MinPasskeyDistance, "bytes of filler"},
		{0, MinPasskeyDistance - 1, "shorter than the question"},
	} {
		if _, err := p.EpisodeAt(c.before, c.distance); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EpisodeAt(%d, %d): err = %v, want one containing %q", c.before, c.distance, err, c.want)
		}
	}
}

// TestPasskeyScore scores an oracle (handed the answer) and a constant
// guesser over a set of episodes by exact match.
func TestPasskeyScore(t *testing.T) {
	p := mustPasskey(t, opticksFiller(t), 5)
	const n = 40
	oracle, constant := 0, 0
	for i := range n {
		ep, err := p.Episode(MinPasskeyDistance+10*i, float64(i)/n)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Correct(append(bytes.Clone(ep.Answer), ". The"...)) {
			oracle++
		}
		if ep.Correct([]byte("00000")) { // keys start with 1..9: never right
			constant++
		}
		if ep.Correct(ep.Answer[:PasskeyDigits-1]) {
			t.Errorf("episode %d: a 4-byte generation scored correct", i)
		}
		wrong := bytes.Clone(ep.Answer)
		wrong[PasskeyDigits-1] = '0' + (wrong[PasskeyDigits-1]-'0'+1)%10
		if ep.Correct(wrong) {
			t.Errorf("episode %d: %q scored correct for key %q", i, wrong, ep.Answer)
		}
	}
	if got := float64(oracle) / n; got != 1 {
		t.Errorf("oracle accuracy = %v, want 1", got)
	}
	if got := float64(constant) / n; got != 0 {
		t.Errorf("constant guesser accuracy = %v, want 0", got)
	}
}

// TestPasskeyLag: in bytes the lag is the constant the byte-level reports
// used (17 bytes of " is the pass key." and 4 more digits); under a BPE
// that has merged " is", " the", " pass", " key" it is far fewer tokens.
func TestPasskeyLag(t *testing.T) {
	if PasskeyAttentionLag != 21 {
		t.Fatalf("PasskeyAttentionLag is %d, want 21", PasskeyAttentionLag)
	}
	if got := PasskeyLag(ByteTokenizer{}); got != PasskeyAttentionLag {
		t.Fatalf("byte tokenizer: lag %d, want %d", got, PasskeyAttentionLag)
	}
	text, err := DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bpe.Train(text[:len(text)*9/10], 1024, bpe.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	words := len(tok.Encode([]byte(" is the pass key.")))
	if got := PasskeyLag(tok); got != words+PasskeyDigits-1 || words >= len(" is the pass key.") {
		t.Fatalf("bpe: lag %d, phrase %d tokens", got, words)
	}
}
