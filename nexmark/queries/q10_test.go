package queries

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// TestQ10 checks the files q10 writes: every bid is written once, to the
// file of its partition and its source subtask, with its columns.
func TestQ10(t *testing.T) {
	forParallelism(t, func(t *testing.T, p int, cfg nexmark.Config, d *data) {
		dir := t.TempDir()
		env := eddy.NewEnvironment(eddy.WithParallelism(p))
		rows := Q10(env, cfg)
		eddy.Discard(WriteQ10Files(rows, dir))
		c := eddy.Collect(rows)
		if err := env.Execute(context.Background(), "q10"); err != nil {
			t.Fatal(err)
		}
		// The rows: every bid with its partition.
		var want []Q10Result
		for _, b := range d.bids {
			ts := time.UnixMilli(b.DateTime).UTC()
			want = append(want, Q10Result{b.Auction, b.Bidder, b.Price, Time(b.DateTime), b.Extra, ts.Format("2006-01-02"), ts.Format("15:04")})
		}
		sameMultiset(t, c.Values(), want)

		// The files: each line is a bid of its directory's partition.
		type line struct {
			auction, bidder, price int64
			dateTime, extra        string
			dt, hm                 string
		}
		var wantLines []line
		for _, r := range want {
			wantLines = append(wantLines, line{r.Auction, r.Bidder, r.Price,
				r.DateTime.Time().Format("2006-01-02 15:04:05.000"), r.Extra, r.Dt, r.Hm})
		}
		var gotLines []line
		partitions := map[string]bool{}
		err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			parts := strings.Split(filepath.ToSlash(rel), "/")
			if len(parts) != 3 || !strings.HasPrefix(parts[0], "dt=") || !strings.HasPrefix(parts[1], "hm=") {
				t.Fatalf("unexpected file %s", rel)
			}
			sub, ok := strings.CutPrefix(parts[2], "part-")
			if n, err := strconv.Atoi(strings.TrimSuffix(sub, ".csv")); !ok || err != nil || n < 0 || n >= p {
				t.Errorf("file %s is not the part of a subtask of %d", rel, p)
			}
			dt := strings.TrimPrefix(parts[0], "dt=")
			hm := strings.ReplaceAll(strings.TrimPrefix(parts[1], "hm="), "%3A", ":")
			partitions[dt+" "+hm] = true
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			recs, err := csv.NewReader(f).ReadAll()
			if err != nil {
				return err
			}
			for _, r := range recs {
				a, _ := strconv.ParseInt(r[0], 10, 64)
				b, _ := strconv.ParseInt(r[1], 10, 64)
				pr, _ := strconv.ParseInt(r[2], 10, 64)
				gotLines = append(gotLines, line{a, b, pr, r[3], r[4], dt, hm})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sameMultiset(t, gotLines, wantLines)
		if len(partitions) < 2 {
			t.Errorf("only %d partitions; the test data should span several minutes", len(partitions))
		}
	})
}

func TestQ10CSVQuoting(t *testing.T) {
	var days dayNames
	r := Q10Result{Auction: 1, Bidder: 2, Price: 3, DateTime: Time(nexmark.DefaultBaseTime + 3_723_004), Extra: `a,"b"`}
	got := string(appendQ10CSV(nil, &r, &days))
	want := "1,2,3,2026-01-01 01:02:03.004,\"a,\"\"b\"\"\"\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
