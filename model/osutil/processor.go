package osutil

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Processor names this machine's processor for the reports that carry
// speed figures: /proc/cpuinfo's model name with its family and model
// numbers (which tell AMD's Zen generations apart where the name is only
// "AMD EPYC"), and the number of CPUs Go may use, such as "AMD EPYC
// (family 25, model 17), 2 CPUs". Without /proc/cpuinfo it is the
// architecture and the CPU count.
func Processor() string {
	cpus := runtime.GOMAXPROCS(0)
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return fmt.Sprintf("%s, %d CPUs", runtime.GOARCH, cpus)
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if len(fields) > 0 {
				break // the end of the first processor's block
			}
			continue
		}
		k = strings.TrimSpace(k)
		if _, seen := fields[k]; !seen {
			fields[k] = strings.TrimSpace(v)
		}
	}
	name := fields["model name"]
	if name == "" {
		name = runtime.GOARCH
	}
	if f, m := fields["cpu family"], fields["model"]; f != "" && m != "" {
		name += fmt.Sprintf(" (family %s, model %s)", f, m)
	}
	return fmt.Sprintf("%s, %d CPUs", name, cpus)
}
