package osutil

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// AvailableMemory estimates how many more bytes this process can allocate
// before the system runs short: the kernel's MemAvailable, or less when a
// cgroup (a container's) memory limit leaves less room. It returns 0 when it
// cannot tell (no /proc/meminfo).
func AvailableMemory() int64 {
	avail := meminfoAvailable()
	if limit, used, ok := cgroupMemory(); ok && (avail == 0 || limit-used < avail) {
		avail = max(0, limit-used)
	}
	return avail
}

// meminfoAvailable reads MemAvailable from /proc/meminfo, in bytes.
func meminfoAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// cgroupMemory reads the cgroup v2 memory limit and usage of this process's
// group, if it has a limit.
func cgroupMemory() (limit, used int64, ok bool) {
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile("/sys/fs/cgroup/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	limit, ok = read("memory.max") // "max" (no limit) does not parse
	if !ok {
		return 0, 0, false
	}
	used, ok = read("memory.current")
	return limit, used, ok
}

// FormatBytes writes a byte count for people: 512 MB, 1.3 GB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GB"
	case n >= 1<<20:
		return strconv.FormatInt((n+1<<19)>>20, 10) + " MB"
	}
	return strconv.FormatInt((n+1<<9)>>10, 10) + " KB"
}
