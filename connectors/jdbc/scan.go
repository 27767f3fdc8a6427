package jdbc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// The scan: a bounded read of the table, split into ranges of
// 'scan.partition.column' (or one split of the whole table), each split a
// query read by one reader. Exactly once over failures: a split read to
// its end is finished and never read again; a split in progress resumes
// after the last row it emitted. For that every split is read in order: of
// the declared PRIMARY KEY, so that it resumes with a query for the keys
// after the last one emitted; without one, of all the columns read, so
// that it resumes by skipping as many rows as it emitted (which holds as
// long as the table does not change, which a bounded scan assumes).

// Source is the scan and lookup source of a jdbc table.
type Source struct {
	cfg   *readConfig
	table *connector.Table
	d     dialect
	// cols are the columns emitted (indexes in table.Schema), in order.
	cols []int
	// filters are accepted predicates, on table.Schema's columns.
	filters []connector.Predicate
	// part is the partition column's index, -1 if none; lo and hi the
	// bounds in its domain (partDomain).
	part   int
	lo, hi int64
}

// NewTableSource returns the source of the table t with the validated
// options of the "jdbc" connector.
func NewTableSource(t *connector.Table, o connector.Options) (*Source, error) {
	if len(t.Metadata) > 0 {
		return nil, connector.UnknownMetadata("jdbc", t.Metadata[0])
	}
	cfg, err := newReadConfig(o)
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: cfg, table: t, d: dialect{mysql: cfg.url.dialect == "mysql"}, part: -1}
	for i := 0; i < t.Schema.Len(); i++ {
		s.cols = append(s.cols, i)
	}
	if cfg.partColumn != "" {
		if err := s.partition(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// partition checks the partition options and sets the bounds.
func (s *Source) partition() error {
	c := s.cfg
	s.part = s.table.Column(c.partColumn)
	if s.part < 0 {
		return &connector.OptionError{Connector: "jdbc", Key: "scan.partition.column",
			Problem: fmt.Sprintf("= '%s' is not a declared column of the table (it has %s); name a declared numeric, DATE or TIMESTAMP column", c.partColumn, strings.Join(s.table.Schema.Names(), ", "))}
	}
	t := s.table.Schema.FieldType(s.part)
	if !t.IsNumeric() && t.Kind() != types.KindDate && !t.IsTimestamp() {
		return &connector.OptionError{Connector: "jdbc", Key: "scan.partition.column",
			Problem: fmt.Sprintf("= '%s' is a %s column; the scan is split on a numeric, DATE or TIMESTAMP column", c.partColumn, t)}
	}
	var err error
	if s.lo, err = partBound(t, c.lower); err != nil {
		return &connector.OptionError{Connector: "jdbc", Key: "scan.partition.lower-bound", Problem: err.Error()}
	}
	if s.hi, err = partBound(t, c.upper); err != nil {
		return &connector.OptionError{Connector: "jdbc", Key: "scan.partition.upper-bound", Problem: err.Error()}
	}
	if s.lo > s.hi {
		return &connector.OptionError{Connector: "jdbc", Key: "scan.partition.lower-bound",
			Problem: fmt.Sprintf("= '%s' is above 'scan.partition.upper-bound' = '%s'; the lower bound must not be larger than the upper bound", c.lower, c.upper)}
	}
	return nil
}

// partBound parses a bound of a partition column of type t into the
// column's domain: the integer of a numeric column, the days of a DATE,
// the microseconds of a TIMESTAMP since the epoch.
func partBound(t types.Type, v string) (int64, error) {
	n, nerr := strconv.ParseInt(v, 10, 64)
	switch {
	case t.IsNumeric():
		if nerr != nil {
			return 0, fmt.Errorf("= '%s' is not an integer; the bounds of a numeric partition column are integers", v)
		}
		return n, nil
	case t.Kind() == types.KindDate:
		if nerr == nil {
			return floorDiv(n, types.MillisPerDay), nil
		}
		d, err := types.ParseDate(v)
		if err != nil {
			return 0, fmt.Errorf("= '%s' is not a date ('2024-01-31') or milliseconds since the epoch", v)
		}
		return int64(d), nil
	}
	if nerr == nil {
		return n * 1000, nil
	}
	ts, err := types.ParseTimestamp(v, 6)
	if err != nil {
		return 0, fmt.Errorf("= '%s' is not a timestamp ('2024-01-31 12:00:00') or milliseconds since the epoch", v)
	}
	return ts.Millis*1000 + int64(ts.NanoOfMilli)/1000, nil
}

// partValue returns a value of the partition column's domain as a
// statement parameter.
func (s *Source) partValue(n int64) any {
	t := s.table.Schema.FieldType(s.part)
	var v types.Value
	switch {
	case t.IsNumeric():
		return n
	case t.Kind() == types.KindDate:
		v = types.Date(n)
	default:
		ms := floorDiv(n, 1000)
		v = types.Timestamp{Millis: ms, NanoOfMilli: int32(n-ms*1000) * 1000}
		t = types.TimestampType(6)
		if s.table.Schema.FieldType(s.part).Kind() == types.KindTimestampLTZ {
			t = types.TimestampLTZType(6)
		}
	}
	return paramOf(t, v, s.d.mysql)
}

// paramOf returns a value of type t as a statement parameter, as the sink
// writes it.
func paramOf(t types.Type, v types.Value, mysql bool) any {
	rt := types.MustRowType(types.F("v", t.Nullable()))
	r, err := types.BuildRow(rt, types.NewArena(64), v)
	if err != nil {
		return v
	}
	return goValue(rt, r, 0, mysql)
}

// ChangelogMode says that the scan emits insertions only.
func (s *Source) ChangelogMode() changelog.Mode { return changelog.InsertOnly }

// split is the state of a split: its range and how far it was read.
type split struct {
	// Index is the split's number; Ranged says it holds the rows whose
	// partition column is in [Lo, Hi] (the last split) or [Lo, Hi+1).
	Index  int   `json:"i"`
	Ranged bool  `json:"ranged,omitempty"`
	Lo     int64 `json:"lo,omitempty"`
	Hi     int64 `json:"hi,omitempty"`
	Last   bool  `json:"last,omitempty"`
	// Key is the primary key of the last row emitted (a row of the key
	// columns), for a table with one; Emitted the number of rows emitted.
	Key     []byte `json:"key,omitempty"`
	Emitted int64  `json:"emitted,omitempty"`
}

func (sp *split) id() string { return "split-" + strconv.Itoa(sp.Index) }

// splits divides the partition range into the splits of the scan, as even
// as can be: the first ones one value larger.
func (s *Source) splits() []*split {
	if s.part < 0 {
		return []*split{{Index: 0}}
	}
	span := uint64(s.hi-s.lo) + 1 // 0 if the range is all of int64
	n := uint64(s.cfg.partNum)
	if span != 0 && span < n {
		n = span
	}
	var size, extra uint64
	if span == 0 {
		size = math.MaxUint64/n + 1
	} else {
		size, extra = span/n, span%n
	}
	out := make([]*split, 0, n)
	lo := s.lo
	for i := uint64(0); i < n; i++ {
		sz := size
		if i < extra {
			sz++
		}
		hi := int64(uint64(lo) + sz - 1)
		last := i == n-1
		if last {
			hi = s.hi
		}
		out = append(out, &split{Index: int(i), Ranged: true, Lo: lo, Hi: hi, Last: last})
		lo = hi + 1
	}
	return out
}

// NewEnumerator checks the table (it exists, and its columns read as
// declared) on a fresh start and deals the splits to the readers.
func (s *Source) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		if err := s.check(); err != nil {
			return nil, err
		}
		var out []connector.Split
		for _, sp := range s.splits() {
			b, _ := json.Marshal(sp)
			out = append(out, connector.Split{ID: sp.id(), State: b})
		}
		return out, nil
	})
}

// check connects and checks that the table's columns read as declared.
func (s *Source) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.connectTimeout+time.Minute)
	defer cancel()
	conn, err := connectRead(ctx, s.cfg.config)
	if err != nil {
		return err
	}
	defer conn.close()
	cols, err := conn.columns(ctx)
	if err != nil {
		return err
	}
	all := make([]int, s.table.Schema.Len())
	for i := range all {
		all[i] = i
	}
	_, err = newDecoder(s.cfg.config, s.table, all, cols, nil)
	return err
}

// ProjectFields returns the source of the columns paths names (top-level
// columns only), which reads no others but those of the primary key it
// needs to order and resume splits.
func (s *Source) ProjectFields(paths [][]int) (connector.Source[connector.TableRecord], bool) {
	cols := make([]int, len(paths))
	for j, p := range paths {
		if len(p) != 1 || p[0] < 0 || p[0] >= len(s.cols) {
			return nil, false
		}
		cols[j] = s.cols[p[0]]
	}
	n := *s
	n.cols = cols
	return &n, true
}

// ApplyFilters accepts the comparisons the database evaluates exactly as
// eddy would: of integer columns with constants, and NULL tests of columns
// other than MySQL's temporal ones (whose zero dates read as NULL).
func (s *Source) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	var acc []int
	var keep []connector.Predicate
	for k, p := range preds {
		if len(p.Path) != 1 || p.Path[0] < 0 || p.Path[0] >= s.table.Schema.Len() {
			continue
		}
		t := s.table.Schema.FieldType(p.Path[0])
		ok := false
		switch p.Op {
		case connector.OpIsNull, connector.OpIsNotNull:
			ok = !(s.d.mysql && t.IsTemporal())
		default:
			ok = t.IsIntegral() && p.Value != nil
		}
		if ok {
			acc = append(acc, k)
			keep = append(keep, p)
		}
	}
	if len(acc) == 0 {
		return nil, nil
	}
	n := *s
	n.filters = append(append([]connector.Predicate(nil), s.filters...), keep...)
	return &n, acc
}

// plan is how a reader queries a split: the columns fetched (the emitted
// ones, then key columns not among them) and the order.
type plan struct {
	fetch []int
	// key are the positions in fetch of the primary key's columns; nil
	// without a primary key, when the order is of all fetched columns.
	key   []int
	keyRT *types.RowType
}

func (s *Source) plan() plan {
	p := plan{fetch: append([]int(nil), s.cols...)}
	pk := s.table.PrimaryKey
	if len(pk) == 0 {
		return p
	}
	var fs []types.Field
	for _, k := range pk {
		pos := -1
		for j, c := range p.fetch {
			if c == k {
				pos = j
				break
			}
		}
		if pos < 0 {
			pos = len(p.fetch)
			p.fetch = append(p.fetch, k)
		}
		p.key = append(p.key, pos)
		fs = append(fs, s.table.Schema.Field(k))
	}
	p.keyRT = types.MustRowType(fs...)
	return p
}

// query returns the query of a split and its parameters.
func (s *Source) query(p plan, sp *split, dbCols map[string]dbColumn) (string, []any, error) {
	d := s.d
	names := s.table.Schema.Names()
	sel := make([]string, len(p.fetch))
	for j, c := range p.fetch {
		sel[j] = d.quote(names[c])
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return d.param(len(args))
	}
	if sp.Ranged {
		col := d.quote(names[s.part])
		where = append(where, col+" >= "+arg(s.partValue(sp.Lo)))
		if sp.Last {
			where = append(where, col+" <= "+arg(s.partValue(sp.Hi)))
		} else {
			where = append(where, col+" < "+arg(s.partValue(sp.Hi+1)))
		}
	}
	for _, f := range s.filters {
		col := d.quote(names[f.Path[0]])
		switch f.Op {
		case connector.OpIsNull, connector.OpIsNotNull:
			where = append(where, col+" "+f.Op.String())
		default:
			n, _ := types.Int64Of(f.Value)
			where = append(where, col+" "+f.Op.String()+" "+arg(n))
		}
	}
	var order []string
	if p.key != nil {
		keyCols := make([]string, len(p.key))
		for j, pos := range p.key {
			keyCols[j] = sel[pos]
		}
		order = keyCols
		if sp.Key != nil {
			kr, err := types.RowFromBytes(p.keyRT, sp.Key)
			if err != nil {
				return "", nil, fmt.Errorf("jdbc: the position of split %d of %s in a checkpoint: %w", sp.Index, s.cfg.where(), err)
			}
			ph := make([]string, len(p.key))
			for j := range p.key {
				ph[j] = arg(goValue(p.keyRT, kr, j, d.mysql))
			}
			where = append(where, "("+strings.Join(keyCols, ", ")+") > ("+strings.Join(ph, ", ")+")")
		}
	} else {
		for j, c := range p.fetch {
			o := sel[j]
			if col, ok := dbCols[names[c]]; ok && !d.mysql && (col.dataType == "json" || col.dataType == "xml") {
				o += "::text" // json and xml have no order
			}
			order = append(order, o)
		}
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + d.quoteTable(s.cfg.table)
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + strings.Join(order, ", ")
	if p.key == nil && sp.Emitted > 0 {
		if d.mysql {
			q += " LIMIT 18446744073709551615"
		}
		q += " OFFSET " + strconv.FormatInt(sp.Emitted, 10)
	}
	return q, args, nil
}

// NewReader returns the reader of one subtask, with a connection of its
// own.
func (s *Source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return &scanReader{src: s, plan: s.plan()}, nil
}

// NewSource makes the scan and lookup source of a SQL table.
func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("jdbc reads SQL tables (changelog.Change[types.Row] records), not %v records", ctx.RecordType)
	}
	s, err := NewTableSource(ctx.Table, ctx.Options)
	if err != nil {
		return nil, err
	}
	return s, nil
}

var (
	_ connector.Source[connector.TableRecord] = (*Source)(nil)
	_ connector.LookupSource                  = (*Source)(nil)
	_ connector.ProjectableSource             = (*Source)(nil)
	_ connector.FilterableSource              = (*Source)(nil)
)
