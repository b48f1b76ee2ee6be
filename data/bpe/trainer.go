package bpe

// trainer holds the distinct pieces of a training text as token sequences,
// with how often each occurs, and the count of every adjacent pair over
// them, kept up to date as pairs merge.
type trainer struct {
	words []trainWord
	index map[uint64]int32 // pair -> its entry in pairs
	pairs []pairStat
	heap  countHeap
	stamp []int32 // per word: the last step that merged in it
	step  int32
}

// trainWord is a distinct piece: its tokens and how often it occurs.
type trainWord struct {
	sym   []uint32
	count int64
}

// pairStat is a pair's count over the text and the words it may occur in
// (a word may be listed more than once, or no longer hold the pair).
type pairStat struct {
	key       uint64
	count     int64
	words     []int32
	increased int32 // the last step that raised count
}

// newTrainer sets up the words (each byte its own token) and counts pairs.
func newTrainer(pieces map[string]int64) *trainer {
	n := 0
	for p := range pieces {
		n += len(p)
	}
	backing := make([]uint32, 0, n)
	tr := &trainer{index: make(map[uint64]int32), words: make([]trainWord, 0, len(pieces))}
	for p, c := range pieces {
		start := len(backing)
		for i := 0; i < len(p); i++ {
			backing = append(backing, uint32(p[i]))
		}
		tr.words = append(tr.words, trainWord{sym: backing[start:len(backing):len(backing)], count: c})
	}
	tr.stamp = make([]int32, len(tr.words))
	for w, word := range tr.words {
		for k := 0; k+1 < len(word.sym); k++ {
			tr.add(pairKey(word.sym[k], word.sym[k+1]), word.count, int32(w))
		}
	}
	tr.heap = make(countHeap, 0, len(tr.pairs))
	for _, st := range tr.pairs {
		tr.heap = append(tr.heap, countEntry{count: st.count, key: st.key})
	}
	tr.heap.init()
	return tr
}

// add changes a pair's count by delta; a rise lists word w under the pair.
func (tr *trainer) add(key uint64, delta int64, w int32) {
	i, ok := tr.index[key]
	if !ok {
		i = int32(len(tr.pairs))
		tr.index[key] = i
		tr.pairs = append(tr.pairs, pairStat{key: key, increased: -1})
	}
	st := &tr.pairs[i]
	st.count += delta
	if delta > 0 {
		st.words = append(st.words, w)
		st.increased = tr.step
	}
}

// best returns the pair to merge next: the most frequent, then the smallest
// left id, then the smallest right id; ok is false when no pair is left.
func (tr *trainer) best() (left, right uint32, ok bool) {
	for len(tr.heap) > 0 {
		top := tr.heap.pop()
		i, found := tr.index[top.key]
		if !found {
			continue
		}
		c := tr.pairs[i].count
		switch {
		case c <= 0 || top.count < c: // gone, or a fresher entry holds its count
			continue
		case top.count > c: // its count fell since: back in at the new count
			tr.heap.push(countEntry{count: c, key: top.key})
			continue
		}
		return uint32(top.key >> 32), uint32(top.key), true
	}
	return 0, 0, false
}

// merge replaces every occurrence of (left, right) in the words, left to
// right, by id and updates the pair counts: for each occurrence the pair
// itself, the pair with the token before and the pair with the token after
// lose one count per occurrence of the word, and the new pairs with the
// merged token gain them.
func (tr *trainer) merge(left, right, id uint32) {
	tr.step++
	key := pairKey(left, right)
	i, ok := tr.index[key]
	if !ok {
		return
	}
	words := tr.pairs[i].words
	var raised []uint64
	for _, w := range words {
		if tr.stamp[w] == tr.step {
			continue
		}
		tr.stamp[w] = tr.step
		word := &tr.words[w]
		s, c := word.sym, word.count
		j := 0
		for k := 0; k < len(s); {
			if k+1 < len(s) && s[k] == left && s[k+1] == right {
				tr.add(key, -c, w)
				if j > 0 {
					tr.add(pairKey(s[j-1], left), -c, w)
					raised = tr.raise(raised, pairKey(s[j-1], id), c, w)
				}
				if k+2 < len(s) {
					tr.add(pairKey(right, s[k+2]), -c, w)
					raised = tr.raise(raised, pairKey(id, s[k+2]), c, w)
				}
				s[j] = id
				j++
				k += 2
				continue
			}
			s[j] = s[k]
			j++
			k++
		}
		word.sym = s[:j]
	}
	// The merged pair is gone from every word: drop it (it comes back only
	// if a later merge makes one of its tokens again).
	delete(tr.index, key)
	tr.pairs[i] = pairStat{key: key, increased: -1}
	for _, k := range raised {
		if j, ok := tr.index[k]; ok && tr.pairs[j].count > 0 {
			tr.heap.push(countEntry{count: tr.pairs[j].count, key: k})
		}
	}
}

// raise adds c to a pair's count for word w and notes the pair, once per
// step, in raised.
func (tr *trainer) raise(raised []uint64, key uint64, c int64, w int32) []uint64 {
	i, ok := tr.index[key]
	if !ok || tr.pairs[i].increased != tr.step {
		raised = append(raised, key)
	}
	tr.add(key, c, w)
	return raised
}

// countEntry is a pair in the heap with the count it had when pushed.
type countEntry struct {
	count int64
	key   uint64
}

// countHeap is a binary heap with the largest count on top, then the
// smallest key (left id, then right id).
type countHeap []countEntry

func (a countEntry) before(b countEntry) bool {
	return a.count > b.count || (a.count == b.count && a.key < b.key)
}

func (h countHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *countHeap) push(e countEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *countHeap) pop() countEntry {
	s := *h
	top := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return top
}

func (h countHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
