package bpe

import (
	"unicode/utf8"
)

// byteLevel is GPT-2's reversible mapping of bytes to printable characters,
// which the tokenizer.json format uses to write byte-level tokens as text:
// bytes 33-126, 161-172 and 174-255 stand for the character of the same code
// point; the other 68 bytes (0-32, 127-160 and 173), in increasing order,
// stand for U+0100, U+0101, ... So the space is "Ġ" (U+0120) and the newline
// "Ċ" (U+010A).
type byteLevel struct {
	char [256]rune     // the character that stands for a byte
	byte map[rune]byte // the byte a character stands for
	utf8 [256][]byte   // char[b] in UTF-8, for building token names
}

// newByteLevel builds the mapping.
func newByteLevel() *byteLevel {
	bl := &byteLevel{byte: make(map[rune]byte, 256)}
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)
		if printable {
			bl.char[b] = rune(b)
		} else {
			bl.char[b] = next
			next++
		}
		bl.byte[bl.char[b]] = byte(b)
		bl.utf8[b] = utf8.AppendRune(nil, bl.char[b])
	}
	return bl
}

// encode writes raw bytes as byte-level characters (a token's name in a
// tokenizer.json vocabulary).
func (bl *byteLevel) encode(raw []byte) string {
	out := make([]byte, 0, 2*len(raw))
	for _, b := range raw {
		out = append(out, bl.utf8[b]...)
	}
	return string(out)
}

// decode turns a token name of byte-level characters back into bytes. ok is
// false when a character of name is not one of the 256.
func (bl *byteLevel) decode(name string) (raw []byte, ok bool) {
	raw = make([]byte, 0, len(name))
	for _, r := range name {
		b, found := bl.byte[r]
		if !found {
			return nil, false
		}
		raw = append(raw, b)
	}
	return raw, true
}

// ByteLevelName writes raw bytes in GPT-2's byte-level spelling (each byte
// as the character that stands for it), the form in which tokenizer.json
// and GGUF vocabularies list byte-level tokens: " the" is "Ġthe".
func ByteLevelName(raw []byte) string { return bl.encode(raw) }
