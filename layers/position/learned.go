package position

// Projector is implemented by the bias schemes whose parameters must stay in
// a domain (KerpleScheme, FireScheme). Their Schemes hand Project to
// the model as ParamSpec.Project, which the model calls on a layer's
// parameters after every optimizer step; it moves each parameter that left
// its domain back to the nearest point of it (a clamp), and leaves the
// others bit-identical.
type Projector interface {
	Project(params []float32)
}

// newDistanceTables returns the distance tables of a bias that depends on
// the head h < heads and the distance d only: tables[h][n-1-d] = T(f(h, d))
// for d < n (the layout of distanceBias). Every head gets a table, even one
// whose bias is zero, so that its entries receive a gradient.
func newDistanceTables[T float](heads, n int, f func(h, d int) float64) distanceBias[T] {
	tables := make([][]T, heads)
	for h := range tables {
		r := make([]T, n)
		for d := 0; d < n; d++ {
			r[n-1-d] = T(f(h, d))
		}
		tables[h] = r
	}
	return distanceBias[T]{tables: tables}
}

// float64s returns x converted to float64.
func float64s[T float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// storeAs writes src, converted, into out, of the same length.
func storeAs[T float](out []T, src []float64) {
	for i, v := range src {
		out[i] = T(v)
	}
}
