package eval

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
)

// copier predicts every token as the one after it in the episode, except
// at the answers: there it looks the asked key up in the prompt (the
// earlier place where the keyLen tokens before the answer stand) and
// copies the value that followed it, or, with other, the value of the
// mention after that one: another key's.
func copier(task string, other bool) answerPredictor {
	return func(tokens [][]uint32) ([][]uint32, error) {
		out := make([][]uint32, len(tokens))
		for b, t := range tokens {
			out[b] = make([]uint32, len(t))
			copy(out[b], t[1:])
			text := string(bytesOf(t))
			// The answers: after every "KEY=" of the queries (MQAR) or the
			// question's last "KEY is " (multi-key).
			var starts []int
			if task == data.TaskMQAR {
				ask := strings.Index(text, " ask:")
				for i := ask; i < len(text); i++ {
					if text[i] == '=' {
						starts = append(starts, i+1)
					}
				}
			} else {
				starts = []int{strings.LastIndex(text, " is ") + len(" is ")}
			}
			for _, s := range starts {
				// The asked key: 4 letters before "=" (MQAR) or before " is ".
				sep, n := "=", 4
				if task == data.TaskMultiKey {
					sep, n = " is ", 5
				}
				key := text[s-len(sep)-4 : s]
				at := strings.Index(text, key) + len(key) // the mention's value
				if other {                                // the value after another key's separator: the mention before, or after
					prev := strings.LastIndex(text[:at-len(key)], sep)
					if prev < 0 || (task == data.TaskMQAR && prev < strings.Index(text, "pairs:")) {
						prev = strings.Index(text[at:], sep) + at
					}
					at = prev + len(sep)
				}
				for k := range n {
					out[b][s-1+k] = uint32(text[at+k])
				}
			}
		}
		return out, nil
	}
}

func bytesOf(ids []uint32) []byte {
	b := make([]byte, len(ids))
	for i, id := range ids {
		b[i] = byte(id)
	}
	return b
}

// A model that copies the asked key's value from the prompt scores 1 at
// every length and distance; one that answers another key's value scores
// 0; the effective context is then the longest length, or 0.
func TestRecallScoresCopying(t *testing.T) {
	filler := data.ByteTokenizer{}.Encode(bytes.Repeat([]byte("light falls on a prism and parts into colours; the rays bend as they pass. "), 400))
	for _, task := range data.RecallTasks {
		o := RecallOptions{Task: task, Lengths: []int{128, 512, 2048}, Episodes: 6, Seed: 5}
		right, err := scoreRecall(copier(task, false), "test", 128, filler, o)
		if err != nil {
			t.Fatal(err)
		}
		wrong, err := scoreRecall(copier(task, true), "test", 128, filler, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range right.Points {
			if p.Accuracy != 1 || p.Queries < 6 || wrong.Points[i].Accuracy != 0 || wrong.Points[i].Queries != p.Queries {
				t.Fatalf("%s length %d: copying %d/%d, another key's value %d/%d", task, p.Length, p.Correct, p.Queries, wrong.Points[i].Correct, wrong.Points[i].Queries)
			}
		}
		if right.EffectiveContext != 2048 || wrong.EffectiveContext != 0 || !slices.ContainsFunc(right.ByDistance, func(b RecallBucket) bool { return b.From >= 128 && b.Accuracy == 1 }) {
			t.Fatalf("%s: effective context %d and %d, by distance %+v", task, right.EffectiveContext, wrong.EffectiveContext, right.ByDistance)
		}
		var md strings.Builder
		if err := (RecallReport{Runs: []RecallResult{right}}).Markdown(&md); err != nil || !strings.Contains(md.String(), "| 2048 | 1.00 (1.00) |") {
			t.Fatalf("%s: markdown %v\n%s", task, err, md.String())
		}
	}
}
