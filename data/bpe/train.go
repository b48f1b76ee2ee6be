package bpe

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// MinVocab is the smallest vocabulary: one token per byte value.
const MinVocab = 256

// MaxVocab is the largest vocabulary Train makes.
const MaxVocab = 1 << 20

// TrainOptions are Train's settings beyond the text and the size.
type TrainOptions struct {
	// Pattern splits the text into pieces; merges never cross two. The
	// zero value means GPT2.
	Pattern Pattern
	// Progress, if not nil, is told how far training is: stage "pieces"
	// counts bytes of text split and counted, stage "merges" merges made
	// out of those asked for.
	Progress func(stage string, done, total int64)
}

// Train learns a byte-level BPE of vocabSize tokens from text (give it the
// training split only). Ids 0-255 are the bytes; each merge after them makes
// the next id. At each step the adjacent pair of tokens that occurs most
// often in the text's pieces is merged (occurrences counted over every
// adjacent pair, overlapping ones included, as Hugging Face's trainer counts
// them); among pairs of equal count, the one whose left token has the
// smallest id wins, then the one whose right token has. A merge whose result
// has the bytes of an existing token reuses that token's id, so the
// vocabulary may take more merges than tokens. Training stops early, with
// fewer tokens, when no adjacent pair is left. The result is the same for the
// same text, size and pattern on every machine.
func Train(text []byte, vocabSize int, opt TrainOptions) (*Tokenizer, error) {
	if vocabSize < MinVocab || vocabSize > MaxVocab {
		return nil, fmt.Errorf("bpe: vocabulary size %d is outside %d..%d", vocabSize, MinVocab, MaxVocab)
	}
	if opt.Pattern == 0 {
		opt.Pattern = GPT2
	}
	if opt.Pattern != GPT2 && opt.Pattern != Llama3 {
		return nil, fmt.Errorf("bpe: unknown pattern %v", opt.Pattern)
	}
	if len(text) == 0 {
		return nil, errors.New("bpe: no text to train on")
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string, int64, int64) {}
	}
	words := countPieces(text, opt.Pattern, progress)
	tr := newTrainer(words)
	tokens := make([][]byte, MinVocab, vocabSize)
	for b := range tokens {
		tokens[b] = []byte{byte(b)}
	}
	byBytes := make(map[string]uint32, vocabSize)
	for id, b := range tokens {
		byBytes[string(b)] = uint32(id)
	}
	var merges []Merge
	merged := make(map[uint64]bool)
	total := int64(vocabSize - MinVocab)
	for len(tokens) < vocabSize {
		left, right, ok := tr.best()
		if !ok {
			break
		}
		joined := string(tokens[left]) + string(tokens[right])
		id, exists := byBytes[joined]
		if !exists {
			id = uint32(len(tokens))
			tokens = append(tokens, []byte(joined))
			byBytes[joined] = id
		}
		key := pairKey(left, right)
		if !merged[key] { // a pair merged before is merged again in the words, without a second rule
			merged[key] = true
			merges = append(merges, Merge{Left: left, Right: right, Result: id})
		}
		tr.merge(left, right, id)
		progress("merges", int64(len(tokens)-MinVocab), total)
	}
	inModel := make([]bool, len(tokens))
	for i := range inModel {
		inModel[i] = true
	}
	return newTokenizer(opt.Pattern, tokens, inModel, merges, false, nil)
}

// countPieces splits text into pieces and counts each distinct one, in
// parallel over chunks cut where the pattern is sure to cut.
func countPieces(text []byte, p Pattern, progress func(string, int64, int64)) map[string]int64 {
	var chunks [][2]int
	for start := 0; start < len(text); {
		end := len(text)
		if len(text)-start > 2*chunkLen {
			if cut := safeCut(text, start+chunkLen); cut >= 0 {
				end = cut
			}
		}
		chunks = append(chunks, [2]int{start, end})
		start = end
	}
	workers := min(runtime.GOMAXPROCS(0), len(chunks))
	counts := make([]map[string]int64, workers)
	var mu sync.Mutex
	var done int64
	var next int
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		counts[w] = make(map[string]int64)
		wg.Add(1)
		go func(m map[string]int64) {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(chunks) {
					return
				}
				start, end := chunks[i][0], chunks[i][1]
				for a := start; a < end; { // the whole text in view: see span
					b := p.end(text, a)
					m[string(text[a:b])]++
					a = b
				}
				mu.Lock()
				done += int64(end - start)
				progress("pieces", done, int64(len(text)))
				mu.Unlock()
			}
		}(counts[w])
	}
	wg.Wait()
	all := counts[0]
	for _, m := range counts[1:] {
		for k, v := range m {
			all[k] += v
		}
	}
	return all
}
