package bpe

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Pieces worked out by hand from the regular expressions.
func TestPatternSplitByHand(t *testing.T) {
	tests := []struct {
		name    string
		pattern Pattern
		text    string
		want    []string
	}{
		{"gpt2 words", GPT2, "Light is refracted", []string{"Light", " is", " refracted"}},
		{"gpt2 run of spaces gives its last to the word", GPT2, "a   b", []string{"a", "  ", " b"}},
		{"gpt2 tab before a space-word", GPT2, "a\t b", []string{"a", "\t", " b"}},
		{"gpt2 space then tab", GPT2, "a \tb", []string{"a", " ", "\t", "b"}},
		{"gpt2 crlf", GPT2, "a\r\nb", []string{"a", "\r", "\n", "b"}},
		{"gpt2 blank lines", GPT2, "a\n\n\nb", []string{"a", "\n\n", "\n", "b"}},
		{"gpt2 trailing spaces kept whole", GPT2, "end   ", []string{"end", "   "}},
		{"gpt2 text of spaces", GPT2, "   ", []string{"   "}},
		{"gpt2 digits", GPT2, "in 1704, 12345 x", []string{"in", " 1704", ",", " 12345", " x"}},
		{"gpt2 digits after letters", GPT2, "abc123", []string{"abc", "123"}},
		{"gpt2 contractions", GPT2, "it's we'll they're I'd", []string{"it", "'s", " we", "'ll", " they", "'re", " I", "'d"}},
		{"gpt2 contractions are case-sensitive", GPT2, "IT'S", []string{"IT", "'", "S"}},
		{"gpt2 a contraction before a word", GPT2, "'sup", []string{"'s", "up"}},
		{"gpt2 punctuation runs", GPT2, "a...!? (b)", []string{"a", "...!?", " (", "b", ")"}},
		{"gpt2 space before an apostrophe", GPT2, "a 's", []string{"a", " '", "s"}},
		{"gpt2 unicode letters", GPT2, "φῶς 光的 naïve", []string{"φῶς", " 光的", " naïve"}},
		{"gpt2 combining mark breaks a word", GPT2, "cafe\u0301s", []string{"cafe", "\u0301", "s"}},
		{"gpt2 unicode numbers", GPT2, "x ½٣", []string{"x", " ½٣"}},
		{"gpt2 no-break space is white space", GPT2, "a\u00a0b", []string{"a", "\u00a0", "b"}},
		{"gpt2 ideographic spaces", GPT2, "a\u3000\u3000b", []string{"a", "\u3000", "\u3000", "b"}},
		{"gpt2 invalid bytes are other", GPT2, "a\xff\xfeb \xc3", []string{"a", "\xff\xfe", "b", " \xc3"}},
		{"gpt2 emoji", GPT2, "hi 🌈🌈!", []string{"hi", " 🌈🌈!"}},
		{"gpt2 empty", GPT2, "", nil},

		{"llama3 words", Llama3, "Light is refracted", []string{"Light", " is", " refracted"}},
		{"llama3 punctuation joins a word", Llama3, "(word) \"quoted\"", []string{"(word", ")", " \"", "quoted", "\""}},
		{"llama3 tab joins a word", Llama3, "a\tb", []string{"a", "\tb"}},
		{"llama3 digits in threes", Llama3, "1234567 x12", []string{"123", "456", "7", " x", "12"}},
		{"llama3 space before digits", Llama3, "a 12", []string{"a", " ", "12"}},
		{"llama3 contractions fold case", Llama3, "IT'S we'LL", []string{"IT", "'S", " we", "'LL"}},
		{"llama3 long s folds to s", Llama3, "it'ſ", []string{"it", "'ſ"}},
		{"llama3 apostrophe joins a word", Llama3, "'hello", []string{"'hello"}},
		{"llama3 newline after punctuation", Llama3, "a.\n\nb", []string{"a", ".\n\n", "b"}},
		{"llama3 newlines end the white space", Llama3, "a  \n  b", []string{"a", "  \n", " ", " b"}},
		{"llama3 crlf", Llama3, "a\r\nb", []string{"a", "\r\n", "b"}},
		{"llama3 trailing spaces", Llama3, "end   ", []string{"end", "   "}},
		{"llama3 run of spaces", Llama3, "a   b", []string{"a", "  ", " b"}},
		{"llama3 no-break space joins a word", Llama3, "a\u00a0b", []string{"a", "\u00a0b"}},
		{"llama3 invalid bytes", Llama3, "\xffab \xfe\xfd\n", []string{"\xffab", " \xfe\xfd\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range tt.pattern.Split([]byte(tt.text)) {
				got = append(got, string(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s.Split(%q) = %q, want %q", tt.pattern, tt.text, got, tt.want)
			}
		})
	}
}

// The hand-written matchers against a literal transcription of the regular
// expressions into a backtracking matcher, on random strings of the
// characters where the patterns' alternatives differ.
func TestPatternSplitMatchesRegex(t *testing.T) {
	alphabet := []string{" ", " ", " ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u0085", "\u2028", "\ufeff",
		"a", "B", "s", "S", "t", "l", "L", "e", "d", "m", "r", "v", "é", "ſ", "光", "\u0301",
		"'", "'", "1", "2", "٣", "½", ".", "!", "(", "🌈", "\xff", "\xc3", "\xe2\x82"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range []Pattern{GPT2, Llama3} {
		ref := referenceRegex(p)
		for n := 0; n < 20000; n++ {
			var b strings.Builder
			for k := r.IntN(24); k > 0; k-- {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := []byte(b.String())
			var got [][]byte
			got = append(got, p.Split(text)...)
			want := ref.split(text)
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("%s.Split(%q) = %q, the regex gives %q", p, text, got, want)
			}
		}
	}
}

// Any bytes split into non-empty pieces that concatenate to them.
func TestPatternSplitCoversRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []Pattern{GPT2, Llama3} {
		for n := 0; n < 2000; n++ {
			text := make([]byte, r.IntN(200))
			for i := range text {
				text[i] = byte(r.UintN(256))
			}
			pieces := p.Split(text)
			for _, piece := range pieces {
				if len(piece) == 0 {
					t.Fatalf("%s: empty piece in %q", p, text)
				}
			}
			if !bytes.Equal(bytes.Join(pieces, nil), text) {
				t.Fatalf("%s: pieces of %q do not concatenate to it", p, text)
			}
		}
	}
}

// safeCut's positions start a piece in both patterns: splitting the text
// there and splitting it whole agree.
func TestSafeCut(t *testing.T) {
	text := []byte("x 'a\n\nb  \r\nc.\nd\n é\n1\nZ \t\n(e\n")
	for _, p := range []Pattern{GPT2, Llama3} {
		whole := p.Split(text)
		starts := map[int]bool{}
		off := 0
		for _, piece := range whole {
			starts[off] = true
			off += len(piece)
		}
		for from := 0; from < len(text); from++ {
			cut := safeCut(text, from)
			if cut < 0 {
				continue
			}
			if !starts[cut] {
				t.Errorf("%s: safeCut(%d) = %d, which no piece starts at", p, from, cut)
			}
			if c := text[cut]; !('a' <= c|0x20 && c|0x20 <= 'z') || text[cut-1] != '\n' {
				t.Errorf("safeCut(%d) = %d: not a letter after a newline", from, cut)
			}
		}
	}
	if got := safeCut([]byte("no newline at all"), 0); got != -1 {
		t.Errorf("safeCut without newlines = %d, want -1", got)
	}
}

// matcher is a backtracking regular-expression matcher in continuation
// style, over the characters of a text (an invalid byte is the rune -1).
type matcher func(s []rune, i int, k func(int) bool) bool

func charIs(pred func(rune) bool) matcher {
	return func(s []rune, i int, k func(int) bool) bool {
		return i < len(s) && pred(s[i]) && k(i+1)
	}
}

func lit(r rune) matcher { return charIs(func(c rune) bool { return c == r }) }

func seq(ms ...matcher) matcher {
	if len(ms) == 0 {
		return func(s []rune, i int, k func(int) bool) bool { return k(i) }
	}
	return func(s []rune, i int, k func(int) bool) bool {
		return ms[0](s, i, func(j int) bool { return seq(ms[1:]...)(s, j, k) })
	}
}

func alt(ms ...matcher) matcher {
	return func(s []rune, i int, k func(int) bool) bool {
		for _, m := range ms {
			if m(s, i, k) {
				return true
			}
		}
		return false
	}
}

// repeat matches m greedily between lo and hi times (hi < 0: unbounded).
func repeat(m matcher, lo, hi int) matcher {
	var rec func(s []rune, i, n int, k func(int) bool) bool
	rec = func(s []rune, i, n int, k func(int) bool) bool {
		if hi < 0 || n < hi {
			if m(s, i, func(j int) bool { return j > i && rec(s, j, n+1, k) }) {
				return true
			}
		}
		return n >= lo && k(i)
	}
	return func(s []rune, i int, k func(int) bool) bool { return rec(s, i, 0, k) }
}

func opt(m matcher) matcher  { return repeat(m, 0, 1) }
func plus(m matcher) matcher { return repeat(m, 1, -1) }

// notAhead is (?!m).
func notAhead(m matcher) matcher {
	return func(s []rune, i int, k func(int) bool) bool {
		return !m(s, i, func(int) bool { return true }) && k(i)
	}
}

// referenceSplitter splits a text by the leftmost matches of a matcher.
type referenceSplitter struct{ m matcher }

func (r referenceSplitter) split(text []byte) [][]byte {
	var runes []rune
	var offs []int
	for i := 0; i < len(text); {
		c, w := utf8.DecodeRune(text[i:])
		if c == utf8.RuneError && w == 1 {
			c = -1
		}
		runes, offs = append(runes, c), append(offs, i)
		i += w
	}
	offs = append(offs, len(text))
	var out [][]byte
	for i := 0; i < len(runes); {
		end := -1
		if !r.m(runes, i, func(j int) bool { end = j; return true }) || end <= i {
			panic("the pattern matched nothing at " + string(text[offs[i]:]))
		}
		out = append(out, text[offs[i]:offs[end]])
		i = end
	}
	return out
}

// referenceRegex transcribes a pattern's regular expression.
func referenceRegex(p Pattern) referenceSplitter {
	L := charIs(func(r rune) bool { return r >= 0 && unicode.Is(unicode.L, r) })
	N := charIs(func(r rune) bool { return r >= 0 && unicode.Is(unicode.N, r) })
	S := charIs(func(r rune) bool { return r >= 0 && unicode.Is(unicode.White_Space, r) })
	notS := charIs(func(r rune) bool { return r < 0 || !unicode.Is(unicode.White_Space, r) })
	notSLN := charIs(func(r rune) bool {
		return r < 0 || !(unicode.Is(unicode.White_Space, r) || unicode.Is(unicode.L, r) || unicode.Is(unicode.N, r))
	})
	str := func(s string) matcher {
		var ms []matcher
		for _, r := range s {
			ms = append(ms, lit(r))
		}
		return seq(ms...)
	}
	fold := func(s string) matcher {
		var ms []matcher
		for _, r := range s {
			ms = append(ms, charIs(func(c rune) bool { return c >= 0 && strings.EqualFold(string(c), string(r)) }))
		}
		return seq(ms...)
	}
	space := lit(' ')
	tail := alt(seq(plus(S), notAhead(notS)), plus(S)) // \s+(?!\S)|\s+
	if p == GPT2 {
		return referenceSplitter{alt(str("'s"), str("'t"), str("'re"), str("'ve"), str("'m"), str("'ll"), str("'d"),
			seq(opt(space), plus(L)), seq(opt(space), plus(N)), seq(opt(space), plus(notSLN)), tail)}
	}
	crlf := charIs(func(r rune) bool { return r == '\r' || r == '\n' })
	notCRLFLN := charIs(func(r rune) bool {
		return r < 0 || !(r == '\r' || r == '\n' || unicode.Is(unicode.L, r) || unicode.Is(unicode.N, r))
	})
	return referenceSplitter{alt(
		seq(lit('\''), alt(fold("s"), fold("t"), fold("re"), fold("ve"), fold("m"), fold("ll"), fold("d"))),
		seq(opt(notCRLFLN), plus(L)),
		repeat(N, 1, 3),
		seq(opt(space), plus(notSLN), repeat(crlf, 0, -1)),
		seq(repeat(S, 0, -1), plus(crlf)),
		tail)}
}
