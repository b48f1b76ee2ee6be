package bpe

// trie finds added tokens in text: at each position, the longest content
// that starts there; the leftmost match wins, and matching resumes after it
// (Hugging Face's leftmost-longest rule).
type trie struct {
	next  map[byte]*trie
	id    uint32
	final bool
}

// newTrie builds a trie of the contents of tokens; nil when there are none.
func newTrie(tokens []AddedToken) *trie {
	if len(tokens) == 0 {
		return nil
	}
	root := &trie{}
	for _, a := range tokens {
		n := root
		for i := 0; i < len(a.Content); i++ {
			c := a.Content[i]
			if n.next == nil {
				n.next = map[byte]*trie{}
			}
			if n.next[c] == nil {
				n.next[c] = &trie{}
			}
			n = n.next[c]
		}
		n.id, n.final = a.ID, true
	}
	return root
}

// longest returns the id and length of the longest content that starts at
// text[i], or length 0.
func (tr *trie) longest(text []byte, i int) (id uint32, n int) {
	node := tr
	for j := i; j < len(text); j++ {
		node = node.next[text[j]]
		if node == nil {
			break
		}
		if node.final {
			id, n = node.id, j+1-i
		}
	}
	return id, n
}

// span is a part of the text: an added token (added true, its id) or text
// for the pattern and the merges. The pattern may look ahead up to limit
// (the end of the text between added tokens): a piece that ends a chunk of
// that text depends on what follows it (` + "`\\s+(?!\\S)`" + `).
type span struct {
	start, end, limit int
	added             bool
	id                uint32
}

// splitAdded cuts text[start:end] at the added tokens of tr, appending the
// spans to out.
func splitAdded(tr *trie, text []byte, start, end int, out []span) []span {
	if tr == nil {
		return append(out, span{start: start, end: end, limit: end})
	}
	from := start
	for i := start; i < end; {
		if tr.next[text[i]] == nil {
			i++
			continue
		}
		id, n := tr.longest(text[:end], i)
		if n == 0 {
			i++
			continue
		}
		if i > from {
			out = append(out, span{start: from, end: i, limit: i})
		}
		out = append(out, span{start: i, end: i + n, added: true, id: id})
		i += n
		from = i
	}
	if end > from {
		out = append(out, span{start: from, end: end, limit: end})
	}
	return out
}

// spans cuts text at the added tokens: first those that are not
// normalized, then, in the text between them, the normalized ones.
func (t *Tokenizer) spans(text []byte) []span {
	first := splitAdded(t.addedFirst, text, 0, len(text), nil)
	if t.addedThen == nil {
		return first
	}
	var out []span
	for _, s := range first {
		if s.added {
			out = append(out, s)
			continue
		}
		out = splitAdded(t.addedThen, text, s.start, s.end, out)
	}
	return out
}
