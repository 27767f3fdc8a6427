package queries

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// Q10Result is a row of q10: a bid with its partition.
type Q10Result struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime Time   `json:"dateTime"`
	Extra    string `json:"extra"`
	// Dt is DATE_FORMAT(dateTime, 'yyyy-MM-dd') in UTC.
	Dt string `json:"dt"`
	// Hm is DATE_FORMAT(dateTime, 'HH:mm') in UTC.
	Hm string `json:"hm"`
}

// q10Rows computes the partition of every bid; each subtask caches its
// current day's name.
type q10Rows struct{ days dayNames }

func (r *q10Rows) ProcessElement(ctx *eddy.ProcessContext[Q10Result], b nexmark.Bid) error {
	ctx.Emit(Q10Result{
		Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: Time(b.DateTime), Extra: b.Extra,
		Dt: r.days.get(dayOf(b.DateTime)), Hm: hhmmNames[minuteOfDay(b.DateTime)],
	})
	return nil
}

// Q10 returns the rows of q10, the bids with their partition (write them
// with WriteQ10Files):
//
//	INSERT INTO nexmark_q10 -- PARTITIONED BY (dt, hm), 'format' = 'csv'
//	SELECT auction, bidder, price, dateTime, extra,
//	  DATE_FORMAT(dateTime, 'yyyy-MM-dd'), DATE_FORMAT(dateTime, 'HH:mm')
//	FROM bid;
func Q10(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q10Result] {
	return eddy.Process(bidSource(env, cfg), func() eddy.ProcessFunction[nexmark.Bid, Q10Result] {
		return &q10Rows{}
	}).Name("q10")
}

// Q10PartitionDir returns the directory, relative to the output directory,
// of the partition (dt, hm): "dt=<dt>/hm=<hm>" with the ':' of hm escaped
// as %3A, as Flink's filesystem sink (like Hive) escapes partition values.
func Q10PartitionDir(dt, hm string) string {
	return "dt=" + dt + "/hm=" + strings.ReplaceAll(hm, ":", "%3A")
}

// Q10FileName is the name of the part file source subtask subtask writes in
// each partition directory.
func Q10FileName(subtask int) string { return "part-" + strconv.Itoa(subtask) + ".csv" }

// maxOpenQ10Files bounds the files a q10 writer subtask keeps open.
const maxOpenQ10Files = 16

type q10Partition struct{ dt, hm string }

// q10Writer writes the rows of one subtask into its part files.
type q10Writer struct {
	dir     string
	subtask int
	open    map[q10Partition]*q10File
	created map[q10Partition]bool
	last    q10Partition
	lastF   *q10File
	line    []byte
	days    dayNames
}

type q10File struct {
	f *os.File
	w *bufio.Writer
}

func (w *q10Writer) Open(ctx *eddy.ProcessContext[struct{}]) error {
	w.subtask = ctx.Subtask()
	w.open = map[q10Partition]*q10File{}
	w.created = map[q10Partition]bool{}
	return nil
}

func (w *q10Writer) file(p q10Partition) (*q10File, error) {
	if w.lastF != nil && p == w.last {
		return w.lastF, nil
	}
	f, ok := w.open[p]
	if !ok {
		if len(w.open) >= maxOpenQ10Files {
			if err := w.closeAll(); err != nil {
				return nil, err
			}
		}
		dir := filepath.Join(w.dir, filepath.FromSlash(Q10PartitionDir(p.dt, p.hm)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("q10: %w", err)
		}
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if w.created[p] {
			flags = os.O_WRONLY | os.O_APPEND
		}
		osf, err := os.OpenFile(filepath.Join(dir, Q10FileName(w.subtask)), flags, 0o644)
		if err != nil {
			return nil, fmt.Errorf("q10: %w", err)
		}
		w.created[p] = true
		f = &q10File{f: osf, w: bufio.NewWriterSize(osf, 64<<10)}
		w.open[p] = f
	}
	w.last, w.lastF = p, f
	return f, nil
}

func (w *q10Writer) ProcessElement(_ *eddy.ProcessContext[struct{}], r Q10Result) error {
	f, err := w.file(q10Partition{r.Dt, r.Hm})
	if err != nil {
		return err
	}
	w.line = appendQ10CSV(w.line[:0], &r, &w.days)
	if _, err := f.w.Write(w.line); err != nil {
		return fmt.Errorf("q10: %w", err)
	}
	return nil
}

func (w *q10Writer) closeAll() error {
	var errs []error
	for p, f := range w.open {
		if err := f.w.Flush(); err != nil {
			errs = append(errs, err)
		}
		if err := f.f.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(w.open, p)
	}
	w.lastF = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("q10: %w", err)
	}
	return nil
}

func (w *q10Writer) Close() error { return w.closeAll() }

// appendQ10CSV appends r as a CSV line of the columns auction, bidder,
// price, dateTime (in SQL's "yyyy-MM-dd HH:mm:ss.SSS", UTC) and extra.
func appendQ10CSV(dst []byte, r *Q10Result, days *dayNames) []byte {
	dst = strconv.AppendInt(dst, r.Auction, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, r.Bidder, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, r.Price, 10)
	dst = append(dst, ',')
	ms := int64(r.DateTime)
	day := dayOf(ms)
	dst = append(dst, days.get(day)...)
	rem := ms - day*msPerDay
	h, m, s, milli := rem/msPerHour, rem/msPerMinute%60, rem/1000%60, rem%1000
	dst = append(dst, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.', byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), ',')
	dst = appendCSVField(dst, r.Extra)
	return append(dst, '\n')
}

// appendCSVField appends s, quoted if it holds a comma, quote or line break.
func appendCSVField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

// WriteQ10Files writes q10's rows as CSV files under dir: source subtask i
// writes the rows of partition (dt, hm) to
// dir/Q10PartitionDir(dt, hm)/Q10FileName(i), as Flink's filesystem sink
// writes a part file per subtask and partition. Files are flushed and
// closed when the job ends. The returned stream is empty; attach a sink to
// it (Discard) so that the writer runs.
func WriteQ10Files(s *eddy.Stream[Q10Result], dir string) *eddy.Stream[struct{}] {
	return eddy.Process(s, func() eddy.ProcessFunction[Q10Result, struct{}] {
		return &q10Writer{dir: dir}
	}).Name("q10 files")
}

func buildQ10(env *eddy.Environment, cfg nexmark.Config, o Options) (*Output, error) {
	if o.Dir == "" {
		return nil, errors.New("queries: q10 needs Options.Dir, the directory to write its files under")
	}
	rows := Q10(env, cfg)
	eddy.Discard(WriteQ10Files(rows, o.Dir))
	if o.Sink == Blackhole {
		return &Output{}, nil
	}
	return attach(rows, o)
}
