package bpe_test

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
)

// gorootSrc loads goroot:src (about 90 MB of Go source) once.
var gorootSrc = sync.OnceValues(func() ([]byte, error) {
	c, err := data.LoadCorpus("goroot:src")
	if err != nil {
		return nil, err
	}
	train, _, err := data.Split(c.Bytes, 0.1)
	return train, err
})

func loadGoroot(b *testing.B) []byte {
	text, err := gorootSrc()
	if err != nil {
		b.Skipf("goroot:src: %v", err)
	}
	return text
}

// Training a BPE of 4096 tokens on the training split of goroot:src; the
// target is under 2 minutes on 2 cores. Run with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkTrainGoroot -benchtime 1x ./data/bpe
func BenchmarkTrainGoroot(b *testing.B) {
	text := loadGoroot(b)
	b.SetBytes(int64(len(text)))
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
	for b.Loop() {
		tok, err := bpe.Train(text, 4096, bpe.TrainOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if tok.VocabSize() != 4096 {
			b.Fatalf("%d tokens", tok.VocabSize())
		}
	}
}

// Encoding with a BPE of 4096 tokens trained on goroot:src; the target is
// at least 20 MB/s on 2 cores. The tokenizer is trained once (a minute) or
// read from $BPE_BENCH_TOKENIZER when that names a tokenizer.json.
//
//	go test -run '^$' -bench BenchmarkEncodeGoroot ./data/bpe
func BenchmarkEncodeGoroot(b *testing.B) {
	text := loadGoroot(b)
	var tok *bpe.Tokenizer
	var err error
	if path := os.Getenv("BPE_BENCH_TOKENIZER"); path != "" {
		tok, err = bpe.Load(path)
	} else {
		tok, err = bpe.Train(text, 4096, bpe.TrainOptions{})
	}
	if err != nil {
		b.Fatal(err)
	}
	text = text[:32<<20]
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tok.Encode(text)
	}
}

// Encoding Opticks with a BPE of 4096 tokens trained on it: a small
// corpus, no setup to speak of.
func BenchmarkEncodeOpticks(b *testing.B) {
	text, err := data.DefaultCorpus()
	if err != nil {
		b.Fatal(err)
	}
	tok, err := bpe.Train(text, 4096, bpe.TrainOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(text)
	}
}
