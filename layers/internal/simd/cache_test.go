//go:build amd64 && !purego

package simd

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// L1DataWays agrees with what Linux reads from the same CPUID leaves, where
// Linux has it.
func TestL1DataWaysMatchesLinux(t *testing.T) {
	for i := 0; i < 8; i++ {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/"
		level, err1 := os.ReadFile(dir + "level")
		typ, err2 := os.ReadFile(dir + "type")
		ways, err3 := os.ReadFile(dir + "ways_of_associativity")
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		if strings.TrimSpace(string(level)) != "1" || strings.TrimSpace(string(typ)) != "Data" {
			continue
		}
		want, err := strconv.Atoi(strings.TrimSpace(string(ways)))
		if err != nil || want == 0 {
			continue
		}
		if got := L1DataWays(); got != want {
			t.Fatalf("L1DataWays() = %d, Linux reports %d ways", got, want)
		}
		t.Logf("L1 data cache: %d ways (Linux %d)", L1DataWays(), want)
		return
	}
	t.Skip("no level-1 data cache description in /sys")
}
