package queries

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// SideInputRows is the number of rows of the reference's side input file
// (SideInputGenerator --num 10000).
const SideInputRows = 10_000

// Q13Result is a row of q13: a bid enriched from the side input.
type Q13Result struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime Time   `json:"dateTime"`
	Value    string `json:"value"`
}

// WriteSideInput writes q13's lookup file to path as the reference's
// SideInputGenerator does: rows "i,i" for i in [0, rows).
func WriteSideInput(path string, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b []byte
	for i := 0; i < rows; i++ {
		b = strconv.AppendInt(b[:0], int64(i), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lookupTable is q13's side input: key to value, with the keys of
// [0, SideInputRows) in a slice.
type lookupTable struct {
	dense []NullString
	other map[int64]string
}

func (t *lookupTable) get(k int64) (string, bool) {
	if uint64(k) < uint64(len(t.dense)) {
		v := t.dense[k]
		return v.S, v.Valid
	}
	v, ok := t.other[k]
	return v, ok
}

// readLookup reads a CSV file of key,value rows. If a key repeats, its first
// row is kept (keys are unique in the reference's file).
func readLookup(path string) (*lookupTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("q13 side input: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = 2
	r.ReuseRecord = true
	t := &lookupTable{dense: make([]NullString, SideInputRows), other: map[int64]string{}}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("q13 side input %s: %w", path, err)
		}
		k, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("q13 side input %s:%d: key %q is not a BIGINT", path, line, rec[0])
		}
		if uint64(k) < uint64(len(t.dense)) {
			if !t.dense[k].Valid {
				t.dense[k] = NullString{S: rec[1], Valid: true}
			}
		} else if _, dup := t.other[k]; !dup {
			t.other[k] = rec[1]
		}
	}
}

// q13Join is the lookup join of one subtask.
type q13Join struct {
	path  string
	table *lookupTable
}

func (j *q13Join) Open(*eddy.ProcessContext[Q13Result]) error {
	t, err := readLookup(j.path)
	j.table = t
	return err
}

func (j *q13Join) ProcessElement(ctx *eddy.ProcessContext[Q13Result], b nexmark.Bid) error {
	if v, ok := j.table.get(b.Auction % SideInputRows); ok {
		ctx.Emit(Q13Result{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: Time(b.DateTime), Value: v})
	}
	return nil
}

// Q13 joins bids to a bounded side input read from the CSV file at
// sideInput (rows key,value; see WriteSideInput):
//
//	SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
//	FROM (SELECT *, PROCTIME() as p_time FROM bid) B
//	JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
//	ON mod(B.auction, 10000) = S.key;
//
// Each subtask reads the whole file into memory when it opens; bids whose
// key is missing are dropped (an inner join).
func Q13(env *eddy.Environment, cfg nexmark.Config, sideInput string) *eddy.Stream[Q13Result] {
	return eddy.Process(bidSource(env, cfg), func() eddy.ProcessFunction[nexmark.Bid, Q13Result] {
		return &q13Join{path: sideInput}
	}).Name("q13")
}

func buildQ13(env *eddy.Environment, cfg nexmark.Config, o Options) (*Output, error) {
	if o.SideInput == "" {
		return nil, errors.New("queries: q13 needs Options.SideInput, the lookup file (see WriteSideInput)")
	}
	return attach(Q13(env, cfg, o.SideInput), o)
}
