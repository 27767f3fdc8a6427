package main

import "testing"

func TestGCSettings(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, c := range []struct {
		name       string
		vars       map[string]string
		physical   int64
		percent    int
		limit      int64
		setPercent bool
	}{
		{"neither set", nil, 8 << 30, jobGCPercent, 6 << 30, true},
		{"memory unknown", nil, 0, jobGCPercent, 0, true},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "2GiB"}, 8 << 30, jobGCPercent, 0, true},
		{"GOGC set", map[string]string{"GOGC": "100"}, 8 << 30, 0, 0, false},
		{"GOGC off", map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, 8 << 30, 0, 0, false},
	} {
		percent, limit, set := gcSettings(env(c.vars), c.physical)
		if percent != c.percent || limit != c.limit || set != c.setPercent {
			t.Errorf("%s: gcSettings = (%d, %d, %v), want (%d, %d, %v)", c.name, percent, limit, set, c.percent, c.limit, c.setPercent)
		}
	}
}
