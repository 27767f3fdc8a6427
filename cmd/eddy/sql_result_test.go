package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/changelog"
)

// change is a change of a test's changelog, written "+I a 1".
func change(t *testing.T, s string) (changelog.Kind, []string) {
	t.Helper()
	f := strings.Fields(s)
	kinds := map[string]changelog.Kind{"+I": changelog.Insert, "-U": changelog.UpdateBefore, "+U": changelog.UpdateAfter, "-D": changelog.Delete}
	k, ok := kinds[f[0]]
	if !ok {
		t.Fatalf("bad change %q", s)
	}
	return k, f[1:]
}

func tableText(rt *resultTable) string {
	var rows []string
	for _, r := range rt.Rows(0) {
		rows = append(rows, strings.Join(r, " "))
	}
	return strings.Join(rows, "|")
}

func TestResultTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []string
		max     int
		want    string
		// unmatched and dropped counts.
		unmatched, dropped int64
	}{
		{name: "inserts keep their order", changes: []string{"+I b 1", "+I a 1", "+I c 1"}, want: "b 1|a 1|c 1"},
		{name: "an update keeps the row's place",
			changes: []string{"+I a 1", "+I b 1", "-U a 1", "+U a 2", "+I c 1", "-U b 1", "+U b 2"},
			want:    "a 2|b 2|c 1"},
		{name: "a deletion takes one of equal rows",
			changes: []string{"+I a 1", "+I a 1", "+I b 1", "-D a 1"},
			want:    "a 1|b 1"},
		{name: "a delete then an insert appends",
			changes: []string{"+I a 1", "+I b 1", "-D a 1", "+I a 2"},
			want:    "b 1|a 2"},
		{name: "a +U without -U is appended (an upsert stream's first row)",
			changes: []string{"+I a 1", "+U b 1"},
			want:    "a 1|b 1"},
		{name: "a retraction of an unknown row changes nothing",
			changes: []string{"+I a 1", "-D z 9", "-U y 8", "+U y 9"},
			want:    "a 1|y 9", unmatched: 2},
		{name: "all rows retracted",
			changes: []string{"+I a 1", "-U a 1", "+U a 2", "-D a 2"},
			want:    ""},
		{name: "max rows drops the oldest",
			changes: []string{"+I a 1", "+I b 1", "+I c 1", "-U b 1", "+U b 2", "+I d 1"},
			max:     3, want: "b 2|c 1|d 1", dropped: 1},
		{name: "max rows drops an updated row by its slot",
			changes: []string{"+I x 1", "+I a 1", "-U x 1", "+U a 1", "+I b 1"},
			max:     2, want: "a 1|b 1", dropped: 1},
		{name: "max rows skips the rows taken back",
			changes: []string{"+I a 1", "+I b 1", "-D a 1", "+I c 1", "+I d 1"},
			max:     2, want: "c 1|d 1", dropped: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newResultTable(tc.max)
			for _, c := range tc.changes {
				rt.Apply(change(t, c))
			}
			if got := tableText(rt); got != tc.want {
				t.Errorf("table %q, want %q", got, tc.want)
			}
			if rt.Len() != len(rt.Rows(0)) {
				t.Errorf("Len %d, Rows has %d", rt.Len(), len(rt.Rows(0)))
			}
			if rt.Unmatched != tc.unmatched || rt.Dropped != tc.dropped {
				t.Errorf("unmatched %d, dropped %d; want %d, %d", rt.Unmatched, rt.Dropped, tc.unmatched, tc.dropped)
			}
			if rt.Changes != int64(len(tc.changes)) {
				t.Errorf("Changes %d, want %d", rt.Changes, len(tc.changes))
			}
		})
	}
}

// TestResultTableRandom applies random well-formed changelogs, long enough
// for compaction to run many times, and compares the table with the
// multiset of rows the changes leave, and each updated row's place with
// that of its -U.
func TestResultTableRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		rt := newResultTable(0)
		var live [][]string // the rows in order, as a reference
		for i := 0; i < 2000; i++ {
			row := []string{fmt.Sprint("k", rng.IntN(30)), fmt.Sprint(rng.IntN(3))}
			switch {
			case len(live) == 0 || rng.IntN(3) == 0:
				rt.Apply(changelog.Insert, row)
				live = append(live, row)
			case rng.IntN(2) == 0:
				j := rng.IntN(len(live))
				rt.Apply(changelog.Delete, live[j])
				// The table takes back the latest of equal rows: the
				// reference does too.
				j = lastEqual(live, live[j])
				live = slices.Delete(live, j, j+1)
			default:
				j := lastEqual(live, live[rng.IntN(len(live))])
				rt.Apply(changelog.UpdateBefore, live[j])
				rt.Apply(changelog.UpdateAfter, row)
				live[j] = row
			}
			if i%97 == 0 || i == 1999 {
				var want, got []string
				for _, r := range live {
					want = append(want, strings.Join(r, " "))
				}
				for _, r := range rt.Rows(0) {
					got = append(got, strings.Join(r, " "))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("round %d, change %d: table\n%q\nwant\n%q", round, i, got, want)
				}
			}
		}
		if rt.Unmatched != 0 {
			t.Fatalf("round %d: %d unmatched retractions of rows the table holds", round, rt.Unmatched)
		}
	}
}

func lastEqual(rows [][]string, row []string) int {
	for j := len(rows) - 1; j >= 0; j-- {
		if slices.Equal(rows[j], row) {
			return j
		}
	}
	return -1
}

func TestResultTableLimit(t *testing.T) {
	rt := newResultTable(0)
	for i := 0; i < 10; i++ {
		rt.Apply(changelog.Insert, []string{fmt.Sprint(i)})
	}
	if got := rt.Rows(3); len(got) != 3 || got[0][0] != "0" || got[2][0] != "2" {
		t.Errorf("Rows(3) = %q, want the first three rows", got)
	}
}
