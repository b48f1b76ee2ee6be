package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Two processors' blocks of a /proc/cpuinfo: the first one is read.
const cpuinfoXeon = `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 207
model name	: Intel(R) Xeon(R) Processor
flags		: fpu vme avx2 avx512f avx512_bf16 avx512vl

processor	: 1
vendor_id	: GenuineIntel
cpu family	: 6
model		: 208
model name	: Another
flags		: fpu
`

func TestParseCPUInfo(t *testing.T) {
	got := parseCPUInfo(cpuinfoXeon)
	want := Processor{Vendor: "GenuineIntel", ModelName: "Intel(R) Xeon(R) Processor", Family: "6", Model: "207", AVX512BF16: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// avx512_bf16 must be a whole flag, not part of one.
	zen1 := parseCPUInfo("vendor_id : AuthenticAMD\ncpu family : 23\nmodel : 1\nmodel name : AMD EPYC\nflags : avx2 avx512_bf16x fma\n")
	if zen1.AVX512BF16 || zen1.Family != "23" || zen1.Model != "1" || zen1.ModelName != "AMD EPYC" {
		t.Errorf("got %+v", zen1)
	}
	got.CPUs = 2
	if s := got.String(); s != "Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 207), 2 CPUs" {
		t.Errorf("String: %q", s)
	}
}

// row is a row of processor p with a tiny step's fraction of peak.
func row(vendor, name, family, model string, tinyPercent float64) Row {
	return Row{Processor: Processor{Vendor: vendor, ModelName: name, Family: family, Model: model, CPUs: 2},
		Kernels: "avx512", Date: "2026-11-27", MeasuredBy: "test", PeakGFLOPs: 100, Tiny: Step{PercentOfPeak: tinyPercent}}
}

// A new row replaces the row of the same processor (vendor, model name,
// family, model) and keeps every other, ordered by vendor, name, then
// family and model as numbers.
func TestMergeRow(t *testing.T) {
	zen4 := row("AuthenticAMD", "AMD EPYC", "25", "17", 62)
	zen1 := row("AuthenticAMD", "AMD EPYC", "23", "1", 64.9)
	xeon := row("GenuineIntel", "Intel(R) Xeon(R) Processor", "6", "207", 63.5)
	rows := []Row{xeon, zen4}

	newZen4 := row("AuthenticAMD", "AMD EPYC", "25", "17", 65)
	newZen4.Processor.CPUs = 4 // the CPU count is not part of the identity
	got := mergeRow(rows, newZen4)
	if want := []Row{newZen4, xeon}; !reflect.DeepEqual(got, want) {
		t.Errorf("replacing Zen 4:\n got %+v\nwant %+v", got, want)
	}
	got = mergeRow(rows, zen1)
	if want := []Row{zen1, zen4, xeon}; !reflect.DeepEqual(got, want) {
		t.Errorf("adding Zen 1 (family 23 before 25):\n got %+v\nwant %+v", got, want)
	}
	other := row("AuthenticAMD", "AMD EPYC 9654", "25", "17", 70) // another name: another processor
	if got := mergeRow(rows, other); len(got) != 3 {
		t.Errorf("a processor of another name replaced a row: %+v", got)
	}
	// family 6 before 25 numerically, where text would put "25" first.
	intel := row("X", "Y", "6", "1", 1)
	if got := mergeRow([]Row{row("X", "Y", "25", "1", 1)}, intel); got[0].Processor.Family != "6" {
		t.Errorf("order: %+v", got)
	}
}

// speed.json round trips, and a field it does not know is an error.
func TestRowsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "speed.json")
	r := row("AuthenticAMD", "AMD EPYC", "25", "17", 62)
	r.TorchFP32 = &Versus{Ratio: 1.84, Project: []float64{27136}, Torch: []float64{14725}, Ratios: []float64{1.843}}
	b, err := encodeRows([]Row{r})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readRows(path)
	if err != nil || !reflect.DeepEqual(got, []Row{r}) {
		t.Errorf("got %+v, %v; want %+v", got, err, r)
	}
	if rows, err := readRows(filepath.Join(t.TempDir(), "none.json")); err != nil || rows != nil {
		t.Errorf("a file that does not exist: %v, %v; want no rows", rows, err)
	}
	if err := os.WriteFile(path, []byte(`{"rows": [{"peak_gflop": 1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRows(path); err == nil || !strings.Contains(err.Error(), "peak_gflop") {
		t.Errorf("an unknown field: %v", err)
	}
}

func TestCount(t *testing.T) {
	for x, want := range map[float64]string{0: "–", 7: "7", 999.4: "999", 999.5: "1,000", 9618: "9,618", 40430.4: "40,430", 1234567: "1,234,567"} {
		if got := count(x); got != want {
			t.Errorf("count(%v) = %q, want %q", x, got, want)
		}
	}
}

// The table is regenerated between the markers, the rest of the page left
// byte for byte; a page without its markers is an error.
func TestReplaceTable(t *testing.T) {
	r := row("AuthenticAMD", "AMD EPYC", "23", "1", 64.9)
	r.PeakGFLOPs, r.Tiny.TokensPerSecond, r.Small.PercentOfPeak = 79.7, 9618, 72.4
	r.TorchFP32 = &Versus{Ratio: 1.49}
	r.BF16Kernels, r.Note = "avx2, bf16 on portable", "AVX2 only"
	x := row("GenuineIntel", "Intel Xeon", "6", "143", 40.5)
	x.PeakGFLOPs, x.AMXPeakGFLOPs, x.Tiny.TokensPerSecond = 270, 4012.5, 38000
	x.TinyBF16 = &Step{TokensPerSecond: 56012.4, PercentOfAMXPeak: 7.254}
	page := "# Speed\n\nbefore\n" + tableStart + "\nold table\n" + tableEnd + "\nafter\n"
	got, err := replaceTable(page, []Row{r, x})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Speed\n\nbefore\n" + tableStart + "\n" +
		"| processor | kernels | FMA peak, GFLOP/s | tiny step, % of peak | tiny, tokens/s | small step, % of peak | small, tokens/s | tiny bf16, tokens/s | AMX peak, GFLOP/s (tiny bf16, % of it) | vs PyTorch fp32 | vs PyTorch bf16 autocast | date (UTC) | measured by |\n" +
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
		"| AMD EPYC (AuthenticAMD, family 23, model 1), 2 CPUs (note 1) | avx2, bf16 on portable | 79.7 | 64.9% | 9,618 | 72.4% | – | – | – | 1.49x | not measured | 2026-11-27 | test |\n" +
		"| Intel Xeon (GenuineIntel, family 6, model 143), 2 CPUs | avx512 | 270.0 | 40.5% | 38,000 | 0% | – | 56,012 | 4012.5 (7.25%) | not measured | not measured | 2026-11-27 | test |\n" +
		"\n1. AMD EPYC (AuthenticAMD, family 23, model 1), 2 CPUs: AVX2 only\n" +
		tableEnd + "\nafter\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	again, err := replaceTable(got, []Row{r, x})
	if err != nil || again != got {
		t.Errorf("regenerating the same table changed the page: %v", err)
	}
	for _, bad := range []string{"no markers", tableStart + "\n", tableEnd + "\n" + tableStart + "\n"} {
		if _, err := replaceTable(bad, nil); err == nil {
			t.Errorf("page %q: no error", bad)
		}
	}
}
