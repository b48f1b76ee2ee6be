package data

import "fmt"

// VocabSize is the number of distinct token ids produced by [Encode]: one per
// byte value.
const VocabSize = 256

// Encode maps each byte of text to a token id equal to the byte's value.
// The result always has len(text) elements in the range 0..VocabSize-1.
func Encode(text []byte) []int {
	ids := make([]int, len(text))
	for i, b := range text {
		ids[i] = int(b)
	}
	return ids
}

// Decode maps token ids back to bytes. It is the inverse of [Encode] and
// returns an error naming the first id outside 0..VocabSize-1 and its index.
func Decode(ids []int) ([]byte, error) {
	out := make([]byte, len(ids))
	for i, id := range ids {
		if id < 0 || id >= VocabSize {
			return nil, fmt.Errorf("decode: token %d at index %d is outside 0..%d", id, i, VocabSize-1)
		}
		out[i] = byte(id)
	}
	return out, nil
}
