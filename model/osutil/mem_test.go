package osutil

import (
	"os"
	"testing"
)

func TestAvailableMemory(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if a := AvailableMemory(); a <= 0 {
		t.Fatalf("AvailableMemory() = %d on a machine with /proc/meminfo", a)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{512 << 10, "512 KB"}, {600 << 20, "600 MB"}, {1536 << 20, "1.5 GB"}, {8 << 30, "8.0 GB"}} {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
