package layers

import G "gorgonia.org/gorgonia"

// UseFastBLAS makes Gorgonia's own matrix operations (gorgonia.Mul on
// matrices and vectors, BatchedMatMul, and the tensor package's MatMul,
// MatVecMul and Outer) use the build's fast matrix multiply: in the default
// build, float32 products run on the package's AVX2/FMA kernel over every
// core and the rest stays with gonum; with -tags openblas, every routine
// goes to OpenBLAS. BLASName names the backend.
//
// It calls gorgonia.Use, which is process-global: it changes the BLAS of
// every Gorgonia graph in the process, including those of other packages.
// Call it once, before any graph runs, from a program's main (the commands
// of this module do) or a package's TestMain; a library should leave the
// choice to its program.
//
// Nothing in this package needs it: Linear, attention and the other custom
// ops call the fast kernels directly. Without it, Gorgonia stays on gonum's
// pure-Go BLAS, so graphs built from Gorgonia's own matrix operations (a
// reference model composed from gorgonia.Mul, say) multiply several times
// more slowly, and their float32 products may differ in the last bits from
// those computed with the fast BLAS.
func UseFastBLAS() { G.Use(fastBLAS()) }
