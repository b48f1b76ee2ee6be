package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
)

// measuredByBench is the measured_by of the rows cmd/bench writes.
const measuredByBench = "cmd/bench"

// Row is one processor's speed figures, one entry of speed.json.
type Row struct {
	Processor Processor `json:"processor"`
	// Kernels is the instruction-set path of the float32 kernels
	// (layers.Kernels: avx512, avx2 or portable), and BF16Kernels that of
	// a bf16 model, which says whether the products ran on AMX's tiles or
	// AVX512_BF16.
	Kernels     string `json:"kernels"`
	BF16Kernels string `json:"bf16_kernels,omitempty"`
	// Date is the day of the measurement, UTC (2006-01-02).
	Date string `json:"date"`
	// MeasuredBy is "cmd/bench", or how a row from before it was measured.
	MeasuredBy string `json:"measured_by"`
	GoVersion  string `json:"go_version,omitempty"`
	// Rounds is the number of rounds whose medians the figures are, and
	// PeakSeconds the length of each round's FMA peak measurement.
	Rounds      int     `json:"rounds,omitempty"`
	PeakSeconds float64 `json:"peak_seconds,omitempty"`
	// PeakGFLOPs is the median FMA peak of the rounds, on as many
	// goroutines as the kernels use (Processor.CPUs).
	PeakGFLOPs float64 `json:"peak_gflops"`
	// AMXPeakGFLOPs is the median AMX tile peak of the rounds
	// (layers.AMXPeak; 0 where bf16 products do not run on the tiles).
	AMXPeakGFLOPs float64 `json:"amx_peak_gflops,omitempty"`
	Tiny          Step    `json:"tiny"`
	Small         Step    `json:"small"`
	// TinyBF16 is the tiny step in bf16 (--tiny-bf16-config) in the same
	// rounds (nil in rows from before it was measured).
	TinyBF16 *Step `json:"tiny_bf16,omitempty"`
	// TorchFP32 and TorchBF16 are the side-by-side ratios to PyTorch (nil:
	// not measured).
	TorchFP32 *Versus `json:"torch_fp32,omitempty"`
	TorchBF16 *Versus `json:"torch_bf16,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// Step is a config's training step in the rounds: medians over the rounds.
type Step struct {
	Config string `json:"config,omitempty"` // the config's name (tiny, small)
	// StepsPerRound is the number of steps timed in each round.
	StepsPerRound int `json:"steps_per_round,omitempty"`
	// PercentOfPeak is the median of the rounds' GFLOP/s over their peak,
	// in percent, and for a bf16 step PercentOfAMXPeak the same over the
	// rounds' AMX peak (0: none).
	PercentOfPeak    float64 `json:"percent_of_peak"`
	PercentOfAMXPeak float64 `json:"percent_of_amx_peak,omitempty"`
	// GFLOPs is the median GFLOP/s and TokensPerSecond the same in tokens a
	// second (0: not recorded).
	GFLOPs          float64 `json:"gflops,omitempty"`
	TokensPerSecond float64 `json:"tokens_per_second,omitempty"`
}

// Versus is a side-by-side comparison with PyTorch: the two trainings
// alternating, Rounds times Steps steps each.
type Versus struct {
	// Ratio is the median over the rounds of this project's training
	// tokens/s over PyTorch's.
	Ratio float64 `json:"ratio"`
	// Config is the project's config (PyTorch trains the same model).
	Config string `json:"config,omitempty"`
	Rounds int    `json:"rounds,omitempty"`
	Steps  int    `json:"steps,omitempty"`
	// Project and Torch are each round's tokens/s, and Ratios each round's
	// ratio.
	Project []float64 `json:"project_tokens_per_second,omitempty"`
	Torch   []float64 `json:"torch_tokens_per_second,omitempty"`
	Ratios  []float64 `json:"ratios,omitempty"`
	// TorchVersion, Threads and BLASCore are what the PyTorch script
	// reported: its version, its threads and the OpenBLAS kernels it ran.
	TorchVersion string `json:"torch,omitempty"`
	Threads      int    `json:"threads,omitempty"`
	BLASCore     string `json:"blas_core,omitempty"`
}

// speedFile is the layout of speed.json.
type speedFile struct {
	Rows []Row `json:"rows"`
}

// readRows reads the rows of a speed.json; a file that does not exist has
// none.
func readRows(path string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f speedFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Rows, nil
}

// encodeRows is the text of a speed.json holding rows.
func encodeRows(rows []Row) ([]byte, error) {
	b, err := json.MarshalIndent(speedFile{Rows: rows}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// mergeRow returns rows with row in place of the row of the same processor
// (or added), ordered by vendor, model name, family and model.
func mergeRow(rows []Row, row Row) []Row {
	out := []Row{row}
	for _, r := range rows {
		if !r.Processor.Same(row.Processor) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return processorLess(out[i].Processor, out[j].Processor) })
	return out
}

// processorLess orders processors by vendor, model name, then family and
// model as numbers.
func processorLess(p, q Processor) bool {
	if p.Vendor != q.Vendor {
		return p.Vendor < q.Vendor
	}
	if p.ModelName != q.ModelName {
		return p.ModelName < q.ModelName
	}
	if p.Family != q.Family {
		return numberLess(p.Family, q.Family)
	}
	return numberLess(p.Model, q.Model)
}

// numberLess compares two decimal numbers as numbers, and anything else as
// text.
func numberLess(a, b string) bool {
	x, errX := strconv.Atoi(a)
	y, errY := strconv.Atoi(b)
	if errX == nil && errY == nil {
		return x < y
	}
	return a < b
}
