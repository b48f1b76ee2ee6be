package layers

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/alibi-go/alibi/layers/internal/bf16"
	"github.com/alibi-go/alibi/layers/internal/simd"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A BF16 linear layer computes its forward product and both backward
// products as bf16.Gemm does, bit for bit, with the bias and the bias's
// gradient in float32; and it stays close to the FP32 layer.
func TestLinearBF16(t *testing.T) {
	const n, in, out = 37, 70, 45
	rng := rand.New(rand.NewPCG(3, 4))
	vals := func(k int) []float32 {
		s := make([]float32, k)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	x, w, b, r := vals(n*in), vals(in*out), vals(out), vals(n*out)
	run := func(p Precision) (y, dx, dw, db []float32) {
		g := G.NewGraph()
		xn := G.NewTensor(g, G.Float32, 2, G.WithShape(n, in), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(n, in), tensor.WithBacking(append([]float32(nil), x...)))))
		wn := G.NewTensor(g, G.Float32, 2, G.WithShape(in, out), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(in, out), tensor.WithBacking(append([]float32(nil), w...)))))
		bn := G.NewTensor(g, G.Float32, 1, G.WithShape(out), G.WithName("b"), G.WithValue(tensor.New(tensor.WithShape(out), tensor.WithBacking(append([]float32(nil), b...)))))
		rn := G.NewTensor(g, G.Float32, 2, G.WithShape(n, out), G.WithName("r"), G.WithValue(tensor.New(tensor.WithShape(n, out), tensor.WithBacking(r))))
		yn, err := LinearIn(p, xn, wn, bn)
		if err != nil {
			t.Fatal(err)
		}
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(yn, rn)))) // d loss / d y = r
		if _, err := G.Grad(loss, xn, wn, bn); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		grad := func(nd *G.Node) []float32 {
			gv, err := nd.Grad()
			if err != nil {
				t.Fatal(err)
			}
			return gv.Data().([]float32)
		}
		return yn.Value().Data().([]float32), grad(xn), grad(wn), grad(bn)
	}
	y, dx, dw, db := run(BF16)

	wantY := make([]float32, n*out)
	for i := range n {
		copy(wantY[i*out:], b)
	}
	bf16.Gemm(false, false, n, out, in, 1, x, in, w, out, 1, wantY, out, 1)
	wantDX := make([]float32, n*in)
	bf16.Gemm(false, true, n, in, out, 1, r, out, w, out, 0, wantDX, in, 1)
	wantDW := make([]float32, in*out)
	bf16.Gemm(true, false, in, out, n, 1, x, in, r, out, 0, wantDW, out, 1)
	for _, c := range []struct {
		name      string
		got, want []float32
	}{{"y", y, wantY}, {"dx", dx, wantDX}, {"dW", dw, wantDW}} {
		for i := range c.want {
			if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
				t.Fatalf("%s[%d] = %v, bf16.Gemm gives %v", c.name, i, c.got[i], c.want[i])
			}
		}
	}

	y32, dx32, dw32, db32 := run(FP32)
	for i := range db {
		if db[i] != db32[i] {
			t.Fatalf("db[%d] = %v in bf16, %v in fp32: the bias gradient is a float32 sum either way", i, db[i], db32[i])
		}
	}
	for _, c := range []struct {
		name     string
		got, f32 []float32
	}{{"y", y, y32}, {"dx", dx, dx32}, {"dW", dw, dw32}} {
		var num, den float64
		for i := range c.got {
			d := float64(c.got[i] - c.f32[i])
			num += d * d
			den += float64(c.f32[i]) * float64(c.f32[i])
		}
		// Each term carries about 2^-8 of relative rounding from each factor.
		if rel := math.Sqrt(num / den); rel > 0.01 || rel == 0 {
			t.Errorf("%s: relative RMS difference from fp32 %.2g, want in (0, 0.01]", c.name, rel)
		}
	}
}

func TestParsePrecision(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Precision
		err  bool
	}{{"", FP32, false}, {"fp32", FP32, false}, {"bf16", BF16, false}, {"fp16", FP32, true}, {"BF16", FP32, true}} {
		got, err := ParsePrecision(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParsePrecision(%q) = %v, %v", c.in, got, err)
		}
	}
}

// BF16Path is the fastest path the CPU and build have (AMX's tiles where
// the CPU and kernel grant them and ALIBI_SIMD names no path; the
// instructions, or with them the emulated kernel if it measured faster; else the
// AVX-512F emulation, else the AVX2 one, else Go; ALIBI_SIMD=avx2 or
// portable taken into account), BF16Notice speaks when the products do not
// run on the instructions, and Kernels names the path beside the float32
// one.
func TestBF16Path(t *testing.T) {
	want := "portable"
	switch {
	case simd.BF16() && bf16.HasAMX() && os.Getenv("ALIBI_SIMD") != "avx512":
		want = "amx"
	case simd.BF16():
		want = "avx512_bf16"
		if BF16Path() == "avx512f, avx512_bf16 conversions" {
			want = BF16Path()
		}
	case simd.BF16Emulated():
		want = "avx512f"
	case simd.Best() >= simd.AVX2:
		want = "avx2"
	}
	if got := BF16Path(); got != want {
		t.Errorf("BF16Path() = %q on a CPU whose best is %q", got, want)
	}
	if notice := BF16Notice(); (want == "avx512_bf16" || want == "amx") != (notice == "") {
		t.Errorf("BF16Path %q with notice %q", want, notice)
	}
	if got, want := Kernels(BF16), simd.Best().String()+", bf16 on "+want; got != want {
		t.Errorf("Kernels(BF16) = %q, want %q", got, want)
	}
	if got, want := Kernels(FP32), simd.Best().String(); got != want {
		t.Errorf("Kernels(FP32) = %q, want %q", got, want)
	}
}
