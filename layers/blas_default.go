//go:build !openblas

package layers

// BLASName names the matrix-multiply backend in use.
func BLASName() string { return "gonum (pure Go)" }
