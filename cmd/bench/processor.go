package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
)

// Processor identifies the machine a row was measured on, from the first
// processor's block of /proc/cpuinfo. Two rows are of the same processor
// when their vendor, model name, family and model agree (Same).
type Processor struct {
	Vendor    string `json:"vendor"`
	ModelName string `json:"model_name"`
	Family    string `json:"family"`
	Model     string `json:"model"`
	// CPUs is the number of CPUs Go may use (GOMAXPROCS), and AVX512BF16
	// whether cpuinfo's flags show avx512_bf16 (a hypervisor may hide it).
	CPUs       int  `json:"cpus"`
	AVX512BF16 bool `json:"avx512_bf16"`
}

// Same reports whether p and q are the same processor: vendor, model name,
// family and model.
func (p Processor) Same(q Processor) bool {
	return p.Vendor == q.Vendor && p.ModelName == q.ModelName && p.Family == q.Family && p.Model == q.Model
}

// String names the processor as the speed page does, such as "AMD EPYC
// (AuthenticAMD, family 25, model 17), 2 CPUs".
func (p Processor) String() string {
	var ids []string
	for _, s := range []struct{ label, v string }{{"", p.Vendor}, {"family ", p.Family}, {"model ", p.Model}} {
		if s.v != "" {
			ids = append(ids, s.label+s.v)
		}
	}
	name := p.ModelName
	if len(ids) > 0 {
		name += " (" + strings.Join(ids, ", ") + ")"
	}
	return fmt.Sprintf("%s, %d CPUs", name, p.CPUs)
}

// readProcessor reads this machine's processor from /proc/cpuinfo. Without
// it (another system) the model name is the architecture.
func readProcessor() Processor {
	p := Processor{ModelName: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		p = parseCPUInfo(string(b))
	}
	p.CPUs = runtime.GOMAXPROCS(0)
	return p
}

// parseCPUInfo reads the first processor's block of a /proc/cpuinfo text.
// A field it lacks stays empty; a missing model name becomes the
// architecture.
func parseCPUInfo(text string) Processor {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20) // the flags line is long
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if len(fields) > 0 {
				break // the blank line after the first processor
			}
			continue
		}
		if k = strings.TrimSpace(k); fields[k] == "" {
			fields[k] = strings.TrimSpace(v)
		}
	}
	p := Processor{Vendor: fields["vendor_id"], ModelName: fields["model name"], Family: fields["cpu family"], Model: fields["model"],
		AVX512BF16: slices.Contains(strings.Fields(fields["flags"]), "avx512_bf16")}
	if p.ModelName == "" {
		p.ModelName = runtime.GOARCH
	}
	return p
}
