//go:build amd64 && !purego

package bf16

import (
	"testing"

	"github.com/alibi-go/alibi/layers/internal/simd"
)

// pathFor takes the instructions where they exist, their AVX-512F
// emulation on AVX-512 without them, the AVX2 kernel on AVX2 (or AVX-512
// with neither), and portable Go only without AVX2.
func TestPathFor(t *testing.T) {
	for _, c := range []struct {
		best     simd.Path
		bf16, vl bool
		want     kpath
	}{
		{simd.AVX512, true, true, native},
		{simd.AVX512, false, true, emulated},
		{simd.AVX512, false, false, avx2},
		{simd.AVX2, false, false, avx2},
		{simd.Portable, false, false, portable},
	} {
		if got := pathFor(c.best, c.bf16, c.vl); got != c.want {
			t.Errorf("pathFor(%v, bf16 %v, vl %v) = %v, want %v", c.best, c.bf16, c.vl, got, c.want)
		}
	}
}

// ALIBI_SIMD=avx2 makes a CPU with AVX-512 run the AVX2 path, and
// ALIBI_SIMD=portable the portable one.
func TestALIBISIMDChoosesPath(t *testing.T) {
	if !simd.AVX2.Supported() {
		t.Skip("no AVX2 on this machine or build")
	}
	for _, c := range []struct {
		env  string
		want kpath
	}{{"avx2", avx2}, {"portable", portable}} {
		t.Setenv("ALIBI_SIMD", c.env)
		if got := choosePath(); got != c.want {
			t.Errorf("ALIBI_SIMD=%s: path %v, want %v", c.env, got, c.want)
		}
	}
}

// The products go to AMX's tiles unless ALIBI_SIMD names a path without
// them; a value that names no path (a typo too) changes nothing, as for
// the float32 kernels.
func TestAMXAllowed(t *testing.T) {
	for env, want := range map[string]bool{"": true, "amx": true, "AVX512": true, "avx-512": true, "avx512": false, "avx2": false, "portable": false} {
		if got := amxAllowed(env); got != want {
			t.Errorf("amxAllowed(%q) = %v, want %v", env, got, want)
		}
	}
}
