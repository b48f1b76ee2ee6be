// Command bench measures this processor's row of the speed page
// (testdata/results/speed.md): the two-core FMA peak, the fraction of it
// that the tiny and small training steps reach, their tokens/s, the tiny
// step in bf16 and, where its products run on Intel AMX's tiles, the
// tiles' peak and the bf16 step's fraction of it, and with
// --torch the ratios of this project's training tokens/s to PyTorch's, in
// fp32 and against PyTorch's bf16 autocast. It prints the row, and with
// --write stores it in testdata/results/speed.json and regenerates the
// page's table.
//
// Usage:
//
//	go run ./cmd/bench [--torch] [--write | --out FILE.json] [--rounds N] [--note TEXT]
//
// Run it from the project's root with nothing else running: the figures
// are only as good as the machine is quiet. --help prints the flags.
//
// # What it measures
//
// It sets up the training step of each config (--tiny-config,
// --small-config, then --tiny-bf16-config): the model, one batch from the
// config's corpus and one untimed step, which allocates the graph's
// buffers. Then it runs --rounds rounds, each the FMA peak for --peak-time
// (fused multiply-adds on registers, on the float32 kernels' instruction
// set, one goroutine a CPU: what the cores can do at most right now),
// followed by --tiny-steps tiny steps, --small-steps small ones and
// --tiny-steps tiny bf16 ones (forward, backward, clipping and AdamW, as
// training runs them), then, where bf16 products run on AMX's tiles, the
// AMX peak for as long (TDPBF16PS on tiles held in registers, one
// goroutine a CPU; last, so that the tiles' clock does not weigh on the
// float32 steps). A
// round's GFLOP/s for a config is its steps' floating-point operations
// (the matrix products, model.Config's FLOPsPerToken) over their wall
// time, its fraction of peak that over the round's FMA peak, and for the
// bf16 step its fraction of the AMX peak that over the round's AMX peak.
// The row holds the medians over the rounds: of the peaks, and for each
// config of its fractions, GFLOP/s and tokens/s. This
// is what `go test ./train -run '^$' -bench TrainStepRounds -benchtime 5x`
// measures too; both call train.StepRounds.
//
// With --torch it first compares the training throughput side by side with
// PyTorch (before the rounds, so that a missing PyTorch stops it at once).
// For fp32, --torch-rounds rounds each run
//
//	/usr/bin/python3 testdata/torch/lm.py throughput --config configs/tiny.yaml --steps 150 --json OUT
//
// and then train the tiny config for as many steps in this process, as
// cmd/train does (the tokens/s of its summary, which leaves out the first 5
// steps, as the script does); a round's ratio is this project's tokens/s
// over PyTorch's, and the row holds their median. For bf16, PyTorch trains
// the same config with --precision bf16 (torch.autocast on the CPU) and
// this project trains --tiny-bf16-config (bfloat16 products on AMX's tiles
// or AVX512_BF16 where the CPU has them). PyTorch runs on the threads the script chooses
// (the CPUs the process may use) and multiplies with OpenBLAS, on the
// kernels OpenBLAS picks for the processor unless the environment variable
// OPENBLAS_CORETYPE names others (OpenBLAS may take a processor it does not
// know for an old one: force its best kernels then, such as
// OPENBLAS_CORETYPE=Cooperlake on an AVX-512 Intel Xeon). The row records
// PyTorch's version, threads and OpenBLAS core. testdata/torch/setup.sh
// installs PyTorch from Debian.
//
// # Flags
//
//	--rounds N
//		Rounds of peak, tiny steps and small steps; the row holds their
//		medians. Default 5, at least 1.
//	--peak-time D
//		How long each round measures the FMA peak. Default 2s.
//	--tiny-config FILE
//		The tiny step's config. Default configs/tiny.yaml. PyTorch trains
//		it too with --torch.
//	--tiny-steps N
//		Tiny steps a round. Default 40.
//	--small-config FILE
//		The small step's config. Default configs/small.yaml, whose corpus,
//		the Go source tree, is read once (about 90 MB).
//	--small-steps N
//		Small steps a round. Default 5.
//	--torch
//		Also train side by side with PyTorch, in fp32 and in bf16 autocast.
//	--torch-script FILE
//		The PyTorch script --torch runs. Default testdata/torch/lm.py.
//	--python FILE
//		The Python that runs it. Default /usr/bin/python3, the one
//		testdata/torch/setup.sh installs PyTorch for.
//	--torch-steps N
//		Training steps of each side in each side-by-side round. Default
//		150, at least 6: both sides leave the first 5 out of tokens/s.
//	--torch-rounds N
//		Side-by-side rounds for each precision. Default 5.
//	--tiny-bf16-config FILE
//		The bf16 step's config, and this project's against PyTorch's bf16
//		autocast. Default configs/tiny-bf16.yaml: the tiny config with
//		train.precision bf16.
//	--write
//		Store the row in testdata/results/speed.json, in place of the row
//		of the same processor (the same vendor, model name, family and
//		model) or added to the others, and regenerate the table of
//		testdata/results/speed.md from the whole file.
//	--out FILE.json
//		Store the row in this file instead (implies --write); the table
//		goes to the .md file of the same name, between its markers (a page
//		that does not exist yet is created with the table alone).
//	--note TEXT
//		A note stored with the row and shown under the table: what was
//		special about the machine or the run.
//
// # Output
//
// Standard output gets the row as a table: the processor, whether its
// cpuinfo shows avx512_bf16, the kernels that ran (avx512, avx2 or
// portable, and for bf16 whether the products ran on AMX's tiles, on
// AVX512_BF16, on its emulation on AVX-512F or AVX2, or in portable Go),
// the peak, each step's fraction of peak, GFLOP/s and tokens/s, the AMX
// peak and the bf16 step's fraction of it, the ratios to PyTorch and the
// date (UTC).
// Standard error gets the progress: each side-by-side round and each
// round of peak and steps as it ends.
//
// A row of speed.json holds: processor (vendor, model_name, family, model
// from /proc/cpuinfo; cpus, the CPUs Go may use; avx512_bf16, whether the
// flag is shown), kernels and bf16_kernels, date, measured_by ("cmd/bench";
// rows from before it name how they were measured), go_version, rounds,
// peak_seconds, peak_gflops, amx_peak_gflops (where the tiles ran), tiny,
// small and tiny_bf16 (config, steps_per_round, percent_of_peak,
// percent_of_amx_peak for the bf16 step on the tiles, gflops,
// tokens_per_second), torch_fp32 and torch_bf16
// (ratio; config, rounds, steps; each round's project and torch tokens/s
// and ratio; torch, threads, blas_core), and note. The figures are medians
// over the rounds. Before it measures, the command reads speed.json and
// checks that speed.md has its markers, so that a file it could not update
// stops it at once; each file is then replaced whole, never left half
// written.
//
// # Exit status
//
//	0    the row was measured (and stored), or --help was asked for
//	1    an error, in one line on standard error: a config or corpus that
//	     does not load, the PyTorch script missing or failing (the line
//	     says how to install PyTorch), a speed.json or speed.md that cannot
//	     be read or written
//	2    a malformed command line: an unknown flag, a bad value, a count
//	     below its minimum, --out not ending in .json
//
// # Examples
//
// A processor's row, stored (several minutes):
//
//	sudo bash testdata/torch/setup.sh
//	go run ./cmd/bench --torch --write
//
// A quick look without PyTorch, nothing stored:
//
//	go run ./cmd/bench --rounds 1
package main
