package eval

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/model"
)

// RecallOptions select an evaluation of a retrieval task (data.Recall).
type RecallOptions struct {
	// Task is data.TaskMQAR or data.TaskMultiKey.
	Task string
	// Lengths are the episodes' lengths in tokens (each at least the
	// task's shortest, data.Recall MinLength).
	Lengths []int
	// Episodes per length (default 20).
	Episodes int
	// Seed makes the episodes: a length's episodes depend only on the seed,
	// the task, the length and the filler.
	Seed uint64
	// Tokenizer is the model's (nil: the byte tokenizer).
	Tokenizer data.Tokenizer
	// Progress, when not nil, is told after each episode how many tokens
	// have been run, out of how many.
	Progress func(done, total int)
}

// RecallPoint is the score at one length.
type RecallPoint struct {
	Length   int `json:"length"`
	Episodes int `json:"episodes"`
	// Queries counts the answers asked (MQAR asks several per episode);
	// Correct those whose every token is the model's greedy choice given
	// the tokens before it, so that greedy decoding from the query on
	// writes the value exactly; Accuracy is Correct / Queries.
	Queries  int     `json:"queries"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// PastL is the accuracy of the answers whose value stands at a
	// distance >= the training length (-1: none), PastLQueries how many.
	PastL        float64 `json:"accuracy_past_L"`
	PastLQueries int     `json:"queries_past_L"`
	WallSeconds  float64 `json:"wall_seconds"`
}

// RecallBucket pools the answers of every length whose distance is in
// [From, To]: from a power of two to the next, less one.
type RecallBucket struct {
	From     int     `json:"from"`
	To       int     `json:"to"`
	Queries  int     `json:"queries"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
}

// RecallResult is one run's score on a task.
type RecallResult struct {
	Run      string `json:"run"`
	Pos      string `json:"pos"`
	Task     string `json:"task"`
	TrainLen int    `json:"train_len"`
	Seed     uint64 `json:"seed"`
	// Points are by length, ByDistance by distance (log2 buckets) over
	// every length.
	Points     []RecallPoint  `json:"points"`
	ByDistance []RecallBucket `json:"by_distance"`
	// ShortAccuracy is the accuracy pooled over the lengths up to the
	// training length; EffectiveContext the longest length whose accuracy
	// is at least half of it (0 when it is 0 or no length is up to L).
	ShortAccuracy    float64 `json:"short_accuracy"`
	EffectiveContext int     `json:"effective_context"`
	WallSeconds      float64 `json:"wall_seconds"`
}

// answerPredictor returns, for each episode of a batch (each of the same
// length), the model's greedy choice at every position: out[b][i] is the
// most probable token after tokens[b][:i+1].
type answerPredictor func(tokens [][]uint32) ([][]uint32, error)

// Recall scores m on a retrieval task: for each length, o.Episodes
// episodes cut from filler (the ids of a text in the model's tokens, for
// training runs the run's own training split), each run through the model
// once; an answer is right when the model's most probable token at each of
// its positions, given the true tokens before it, is the answer's, which
// is when greedy decoding from there writes the value exactly.
func Recall(m *model.Model, filler []uint32, o RecallOptions) (RecallResult, error) {
	if o.Tokenizer == nil {
		o.Tokenizer = data.ByteTokenizer{}
	}
	if err := checkTokens(m, filler, o.Tokenizer); err != nil {
		return RecallResult{}, err
	}
	graphs := map[[2]int]*model.Graph{}
	defer func() {
		for _, g := range graphs {
			g.Close()
		}
	}()
	vocab := m.Config.Vocab
	predict := func(tokens [][]uint32) ([][]uint32, error) {
		n := len(tokens[0])
		g, ok := graphs[[2]int{len(tokens), n}]
		if !ok {
			var err error
			if g, err = m.NewGraph(len(tokens), n, false); err != nil {
				return nil, err
			}
			graphs[[2]int{len(tokens), n}] = g
		}
		ids := make([]int, 0, len(tokens)*n)
		for _, t := range tokens {
			for _, id := range t {
				ids = append(ids, int(id))
			}
		}
		if err := g.Execute(ids, nil); err != nil {
			return nil, err
		}
		logits := g.LogitsData()
		out := make([][]uint32, len(tokens))
		for b := range tokens {
			out[b] = make([]uint32, n)
			for i := range n {
				row := logits[(b*n+i)*vocab:][:vocab]
				out[b][i] = uint32(argmax(row))
			}
		}
		return out, nil
	}
	return scoreRecall(predict, m.Config.Label(), m.Config.TrainLen, filler, o)
}

func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// recallBatchTokens bounds the tokens of one forward pass.
const recallBatchTokens = 8192

// scoreRecall runs the episodes through predict and scores them.
func scoreRecall(predict answerPredictor, pos string, trainLen int, filler []uint32, o RecallOptions) (RecallResult, error) {
	if o.Episodes == 0 {
		o.Episodes = 20
	}
	if o.Tokenizer == nil {
		o.Tokenizer = data.ByteTokenizer{}
	}
	if o.Episodes < 1 || len(o.Lengths) == 0 {
		return RecallResult{}, fmt.Errorf("recall: %d episodes at %d lengths", o.Episodes, len(o.Lengths))
	}
	res := RecallResult{Pos: pos, Task: o.Task, TrainLen: trainLen, Seed: o.Seed}
	start := time.Now()
	total, done := 0, 0
	for _, l := range o.Lengths {
		total += l * o.Episodes
	}
	buckets := map[int]*RecallBucket{}
	for _, length := range o.Lengths {
		gen, err := data.NewRecall(o.Task, filler, o.Tokenizer, o.Seed^uint64(length)*0x9e3779b97f4a7c15)
		if err != nil {
			return RecallResult{}, err
		}
		t0 := time.Now()
		p := RecallPoint{Length: length, Episodes: o.Episodes, PastL: -1}
		pastCorrect := 0
		eps := make([]data.RecallEpisode, o.Episodes)
		for k := range eps {
			if eps[k], err = gen.Episode(length); err != nil {
				return RecallResult{}, err
			}
		}
		per := max(1, recallBatchTokens/length)
		for b0 := 0; b0 < len(eps); b0 += per {
			batch := eps[b0:min(len(eps), b0+per)]
			tokens := make([][]uint32, len(batch))
			for i, e := range batch {
				tokens[i] = e.Tokens
			}
			pred, err := predict(tokens)
			if err != nil {
				return RecallResult{}, fmt.Errorf("recall at length %d: %w", length, err)
			}
			for i, e := range batch {
				for _, a := range e.Answers {
					ok := true
					for t := a.Start; t < a.End; t++ {
						ok = ok && pred[i][t-1] == e.Tokens[t]
					}
					p.Queries++
					lo := 1 << (bits.Len(uint(a.Distance)) - 1)
					bk := buckets[lo]
					if bk == nil {
						bk = &RecallBucket{From: lo, To: 2*lo - 1}
						buckets[lo] = bk
					}
					bk.Queries++
					if a.Distance >= trainLen {
						p.PastLQueries++
					}
					if ok {
						p.Correct++
						bk.Correct++
						if a.Distance >= trainLen {
							pastCorrect++
						}
					}
				}
				done += length
				if o.Progress != nil {
					o.Progress(done, total)
				}
			}
		}
		p.Accuracy = float64(p.Correct) / float64(p.Queries)
		if p.PastLQueries > 0 {
			p.PastL = float64(pastCorrect) / float64(p.PastLQueries)
		}
		p.WallSeconds = time.Since(t0).Seconds()
		res.Points = append(res.Points, p)
	}
	for _, b := range buckets {
		b.Accuracy = float64(b.Correct) / float64(b.Queries)
		res.ByDistance = append(res.ByDistance, *b)
	}
	slices.SortFunc(res.ByDistance, func(a, b RecallBucket) int { return a.From - b.From })
	res.ShortAccuracy, res.EffectiveContext = recallContext(res.Points, trainLen)
	res.WallSeconds = time.Since(start).Seconds()
	return res, nil
}

// recallContext returns the accuracy pooled over the lengths up to trainLen
// and the longest length whose accuracy is at least half of it.
func recallContext(points []RecallPoint, trainLen int) (short float64, length int) {
	correct, queries := 0, 0
	for _, p := range points {
		if p.Length <= trainLen {
			correct, queries = correct+p.Correct, queries+p.Queries
		}
	}
	if queries == 0 || correct == 0 {
		return 0, 0
	}
	short = float64(correct) / float64(queries)
	for _, p := range points {
		if p.Accuracy >= short/2 {
			length = max(length, p.Length)
		}
	}
	return short, length
}

// RecallReport is the results of several runs on the retrieval tasks.
type RecallReport struct {
	Runs []RecallResult `json:"runs"`
}

// Markdown writes, per task, a table of accuracy by length (a column per
// run) with the effective context, and one by distance.
func (r RecallReport) Markdown(w io.Writer) error {
	var b strings.Builder
	var tasks []string
	for _, run := range r.Runs {
		if !slices.Contains(tasks, run.Task) {
			tasks = append(tasks, run.Task)
		}
	}
	for _, task := range tasks {
		var runs []RecallResult
		for _, run := range r.Runs {
			if run.Task == task {
				runs = append(runs, run)
			}
		}
		fmt.Fprintf(&b, "%s: accuracy (exact match of the answer) by episode length in tokens; in brackets, of the answers whose value stands L or more tokens back\n\n", task)
		b.WriteString("| length |")
		for _, run := range runs {
			fmt.Fprintf(&b, " %s |", recallName(run))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(runs)) + "\n")
		var lengths []int
		for _, run := range runs {
			for _, p := range run.Points {
				if !slices.Contains(lengths, p.Length) {
					lengths = append(lengths, p.Length)
				}
			}
		}
		slices.Sort(lengths)
		for _, l := range lengths {
			fmt.Fprintf(&b, "| %d |", l)
			for _, run := range runs {
				i := slices.IndexFunc(run.Points, func(p RecallPoint) bool { return p.Length == l })
				switch {
				case i < 0:
					b.WriteString(" – |")
				case run.Points[i].PastL >= 0:
					fmt.Fprintf(&b, " %.2f (%.2f) |", run.Points[i].Accuracy, run.Points[i].PastL)
				default:
					fmt.Fprintf(&b, " %.2f |", run.Points[i].Accuracy)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("| effective context |")
		for _, run := range runs {
			fmt.Fprintf(&b, " %d |", run.EffectiveContext)
		}
		b.WriteString("\n\n")
		fmt.Fprintf(&b, "%s: accuracy by the distance from the value's mention to its answer, over every length\n\n| distance |", task)
		for _, run := range runs {
			fmt.Fprintf(&b, " %s |", recallName(run))
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(runs)) + "\n")
		var los []int
		for _, run := range runs {
			for _, bk := range run.ByDistance {
				if !slices.Contains(los, bk.From) {
					los = append(los, bk.From)
				}
			}
		}
		slices.Sort(los)
		for _, lo := range los {
			fmt.Fprintf(&b, "| %d–%d |", lo, 2*lo-1)
			for _, run := range runs {
				i := slices.IndexFunc(run.ByDistance, func(bk RecallBucket) bool { return bk.From == lo })
				if i < 0 {
					b.WriteString(" – |")
				} else {
					fmt.Fprintf(&b, " %.2f (%d) |", run.ByDistance[i].Accuracy, run.ByDistance[i].Queries)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func recallName(r RecallResult) string {
	if r.Run == "" {
		return r.Pos
	}
	return r.Run
}
