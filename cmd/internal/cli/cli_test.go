package cli

import "testing"

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"1024", 1024}, {"2K", 2048}, {"512M", 512 << 20}, {"2G", 2 << 30}, {"2GB", 2 << 30}, {"2GiB", 2 << 30},
		{"1.5g", 3 << 29}, {" 8G ", 8 << 30}, {"1T", 1 << 40},
		{"", 0}, {"lots", 0}, {"-1G", 0}, {"0", 0}, {"G", 0}, {"NaNM", 0}, {"1e30G", 0},
	} {
		got, err := ParseBytes(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("ParseBytes(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
