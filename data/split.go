package data

import "fmt"

// Split divides tokens into a training part (the first tokens) and a
// validation part (the rest). The training part has
// int(float64(len(tokens)) * (1 - valFrac)) tokens, which matches Python's
// int(len(data) * 0.9) for valFrac 0.1.
//
// valFrac must be in [0, 1). With valFrac 0 the validation part is empty;
// otherwise it is an error for either part to be empty. The returned slices
// share memory with tokens; train has its capacity limited so that appending
// to it does not overwrite val.
func Split[T any](tokens []T, valFrac float64) (train, val []T, err error) {
	if !(valFrac >= 0 && valFrac < 1) {
		return nil, nil, fmt.Errorf("split: validation fraction %v is outside [0, 1)", valFrac)
	}
	n := len(tokens)
	if n == 0 {
		return nil, nil, fmt.Errorf("split: no tokens to split")
	}
	trainFrac := 1 - valFrac
	nTrain := int(float64(n) * trainFrac)
	if valFrac > 0 && (nTrain == 0 || nTrain == n) {
		return nil, nil, fmt.Errorf("split: %d tokens with validation fraction %v leave %d training and %d validation tokens; both must be non-empty",
			n, valFrac, nTrain, n-nTrain)
	}
	return tokens[:nTrain:nTrain], tokens[nTrain:], nil
}
