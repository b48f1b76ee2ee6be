//go:build linux

package hugepage

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseMarksMemory checks with the kernel's own account
// (/proc/self/smaps) that every mapping under the advised range carries the
// huge-page advice (VmFlags "hg").
func TestAdviseMarksMemory(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	s := make([]float64, 5<<20/8)
	n := Advise(s)
	if n == 0 {
		t.Fatal("Advise of 5 MiB did nothing on a kernel with transparent huge pages")
	}
	lo, hi := pages(uintptr(unsafe.Pointer(&s[0])), uintptr(8*len(s)))
	maps := smapsFlags(t)
	covered := uintptr(0)
	for _, m := range maps {
		a, b := max(m.lo, lo), min(m.hi, hi)
		if a >= b {
			continue
		}
		covered += b - a
		if !strings.Contains(" "+m.flags+" ", " hg ") {
			t.Errorf("mapping [%#x, %#x) under the advised range has VmFlags %q, want hg", m.lo, m.hi, m.flags)
		}
	}
	if covered != hi-lo {
		t.Errorf("mappings cover %d of the %d advised bytes", covered, hi-lo)
	}
}

type mapping struct {
	lo, hi uintptr
	flags  string
}

// smapsFlags reads each mapping's range and VmFlags from /proc/self/smaps.
func smapsFlags(t *testing.T) []mapping {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var maps []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(maps) > 0 {
			maps[len(maps)-1].flags = strings.TrimSpace(flags)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		r := strings.SplitN(fields[0], "-", 2)
		if len(r) != 2 {
			continue
		}
		a, errA := strconv.ParseUint(r[0], 16, 64)
		b, errB := strconv.ParseUint(r[1], 16, 64)
		if errA != nil || errB != nil {
			continue
		}
		maps = append(maps, mapping{lo: uintptr(a), hi: uintptr(b)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return maps
}
