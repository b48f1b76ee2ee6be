package bpe

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Pattern is the rule that splits text into pieces before the merges apply
// (merges never cross two pieces). Each is a hand-written matcher equal to a
// regular expression of Hugging Face's tokenizers, which use Oniguruma: Go's
// regexp has no look-ahead, and the hand-written form is faster. Letters,
// numbers and white space are Unicode's L, N and White_Space as Go's unicode
// package knows them; a byte that is not part of valid UTF-8 counts as one
// character that is none of the three (as U+FFFD would), so any bytes split,
// and the pieces always concatenate to the text.
type Pattern uint8

const (
	// GPT2 is GPT-2's pattern, the one of the ByteLevel pre-tokenizer with
	// use_regex true (GPT-2, RoBERTa, and the BPEs this package trains):
	//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
	GPT2 Pattern = iota + 1
	// Llama3 is Llama 3's pattern (also OpenAI's cl100k), which Llama 3's
	// tokenizer.json gives as a Split pre-tokenizer before a ByteLevel one:
	//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	// The case-insensitive contractions fold as Oniguruma does: "'ſ" (long
	// s) matches like "'s".
	Llama3
)

// gpt2Regex and llama3Regex are the patterns as tokenizer.json writes them.
const (
	gpt2Regex   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	llama3Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// String names the pattern: "gpt2" or "llama3".
func (p Pattern) String() string {
	switch p {
	case GPT2:
		return "gpt2"
	case Llama3:
		return "llama3"
	}
	return fmt.Sprintf("Pattern(%d)", uint8(p))
}

// Regex is the regular expression the pattern implements, as Hugging Face's
// tokenizer.json spells it.
func (p Pattern) Regex() string {
	switch p {
	case GPT2:
		return gpt2Regex
	case Llama3:
		return llama3Regex
	}
	return ""
}

// Split cuts text into its pieces, in order; they share text's memory.
func (p Pattern) Split(text []byte) [][]byte {
	var pieces [][]byte
	for i := 0; i < len(text); {
		j := p.end(text, i)
		pieces = append(pieces, text[i:j])
		i = j
	}
	return pieces
}

// end returns where the piece that starts at text[i] ends (i < len(text)).
func (p Pattern) end(text []byte, i int) int {
	if p == Llama3 {
		return llama3End(text, i)
	}
	return gpt2End(text, i)
}

// class is what the patterns tell characters apart by.
type class uint8

const (
	other  class = iota // neither a letter, a number nor white space
	letter              // \p{L}
	number              // \p{N}
	space               // \s: Unicode's White_Space
)

// asciiClass is the class of each ASCII character.
var asciiClass = func() (t [utf8.RuneSelf]class) {
	for r := range t {
		t[r] = classOf(rune(r))
	}
	return t
}()

// classOf is the class of a character.
func classOf(r rune) class {
	switch {
	case unicode.IsLetter(r):
		return letter
	case unicode.IsNumber(r):
		return number
	case unicode.IsSpace(r): // White_Space, as Oniguruma's \s
		return space
	}
	return other
}

// classAt returns the class and width of the character at text[i]; a byte
// that does not start valid UTF-8 is one character of class other.
func classAt(text []byte, i int) (class, int) {
	if b := text[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, w := utf8.DecodeRune(text[i:])
	if r == utf8.RuneError && w == 1 {
		return other, 1
	}
	return classOf(r), w
}

// runEnd returns the end of the run of characters of class c that starts at
// text[i] (i itself if text[i] is not of class c).
func runEnd(text []byte, i int, c class) int {
	for i < len(text) {
		ci, w := classAt(text, i)
		if ci != c {
			break
		}
		i += w
	}
	return i
}

// spaceRun returns the end of the run of white space that starts at text[i]
// and where its last character starts.
func spaceRun(text []byte, i int) (end, last int) {
	last = i
	for i < len(text) {
		c, w := classAt(text, i)
		if c != space {
			break
		}
		last = i
		i += w
	}
	return i, last
}

// spaceTail is `\s+(?!\S)|\s+` at the start of a run of white space that
// ends at end and whose last character starts at last: the whole run when it
// ends the text, else the run less its last character (which the next piece
// takes) unless that is the only one.
func spaceTail(text []byte, start, end, last int) int {
	if end == len(text) || last == start {
		return end
	}
	return last
}

// gpt2End is GPT-2's pattern at text[i].
func gpt2End(text []byte, i int) int {
	n := len(text)
	b := text[i]
	if b == '\'' && i+1 < n { // 's|'t|'re|'ve|'m|'ll|'d
		switch text[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < n && text[i+2] == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < n && text[i+2] == 'l' {
				return i + 3
			}
		}
	}
	if b == ' ' && i+1 < n { // ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+` with the space
		if c, w := classAt(text, i+1); c != space {
			return runEnd(text, i+1+w, c)
		}
	}
	c, w := classAt(text, i)
	if c != space { // the same without it
		return runEnd(text, i+w, c)
	}
	end, last := spaceRun(text, i)
	return spaceTail(text, i, end, last)
}

// llama3End is Llama 3's pattern at text[i].
func llama3End(text []byte, i int) int {
	n := len(text)
	if text[i] == '\'' { // (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if e := foldedContraction(text, i+1); e > 0 {
			return e
		}
	}
	c, w := classAt(text, i)
	if c == letter { // [^\r\n\p{L}\p{N}]?\p{L}+ without its first character
		return runEnd(text, i+w, letter)
	}
	if c != number && text[i] != '\r' && text[i] != '\n' && i+w < n { // with it
		if c2, w2 := classAt(text, i+w); c2 == letter {
			return runEnd(text, i+w+w2, letter)
		}
	}
	if c == number { // \p{N}{1,3}
		j := i + w
		for k := 1; k < 3 && j < n; k++ {
			c2, w2 := classAt(text, j)
			if c2 != number {
				break
			}
			j += w2
		}
		return j
	}
	j := i // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	if text[i] == ' ' && i+1 < n {
		if c2, _ := classAt(text, i+1); c2 == other {
			j = i + 1
		}
	}
	if c2, _ := classAt(text, j); c2 == other {
		j = runEnd(text, j, other)
		for j < n && (text[j] == '\r' || text[j] == '\n') {
			j++
		}
		return j
	}
	// c is space: `\s*[\r\n]+` ends after the run's last \r or \n.
	end, last := spaceRun(text, i)
	for k := end - 1; k >= i; k-- {
		if text[k] == '\r' || text[k] == '\n' {
			return k + 1
		}
	}
	return spaceTail(text, i, end, last)
}

// foldedContraction matches s|t|re|ve|m|ll|d case-insensitively at text[i]
// and returns where the match ends, or 0.
func foldedContraction(text []byte, i int) int {
	r1, w1 := foldedAt(text, i)
	switch r1 {
	case 's', 't', 'm', 'd':
		return i + w1
	case 'r', 'v', 'l':
		want := 'e'
		if r1 == 'l' {
			want = 'l'
		}
		if r2, w2 := foldedAt(text, i+w1); r2 == want {
			return i + w1 + w2
		}
	}
	return 0
}

// foldedAt returns the lower-case ASCII letter that the character at text[i]
// case-folds to (as "S" and "ſ" fold to "s"), or -1 if it folds to none, and
// the character's width.
func foldedAt(text []byte, i int) (rune, int) {
	if i >= len(text) {
		return -1, 0
	}
	r, w := utf8.DecodeRune(text[i:])
	if r == utf8.RuneError && w <= 1 {
		return -1, 1
	}
	for f := r; ; {
		if f < utf8.RuneSelf && 'a' <= f && f <= 'z' {
			return f, w
		}
		if f = unicode.SimpleFold(f); f == r {
			return -1, w
		}
	}
}
