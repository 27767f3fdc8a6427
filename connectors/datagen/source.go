package datagen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// families are the per-column options, by their suffix.
var families = []string{"kind", "min", "max", "max-past", "length", "var-len", "start", "end", "null-rate"}

// Source generates the rows of a table. It is divided into as many splits
// as the job's parallelism when it first starts: split k of P generates
// rows k, k+P, k+2P, ... of the table, and checkpoints how many it has.
type Source struct {
	rt    *types.RowType
	cols  []*column
	total int64 // rows in all, -1 for unbounded
	rate  int64
}

// NewTableSource returns the source of table t generated as options say
// (validated against the datagen spec).
func NewTableSource(t *connector.Table, o connector.Options) (*Source, error) {
	if len(t.Metadata) > 0 {
		return nil, connector.UnknownMetadata(spec.Name, t.Metadata[0])
	}
	for _, fam := range families {
		key := "fields.#." + fam
		for _, name := range o.Names(key) {
			if _, ok := t.Schema.Index(name); ok && t.Column(name) >= 0 {
				continue
			}
			return nil, &connector.OptionError{Connector: spec.Name, Key: "fields." + name + "." + fam, Problem: unknownColumn(t.Schema, name, fam)}
		}
	}
	s := &Source{rt: t.Schema, total: -1, rate: o.Int("rows-per-second")}
	if o.IsSet("number-of-rows") {
		s.total = o.Int("number-of-rows")
	}
	for _, f := range t.Schema.Fields() {
		c, err := newColumn(f.Name, f.Type, o)
		if err != nil {
			return nil, err
		}
		if c.seq && (s.total < 0 || c.count() < s.total) {
			s.total = c.count()
		}
		s.cols = append(s.cols, c)
	}
	return s, nil
}

// unknownColumn says that a per-column option names no column.
func unknownColumn(rt *types.RowType, name, fam string) string {
	names := rt.Names()
	msg := fmt.Sprintf("names no column %s of the table", types.QuoteIdentifier(name))
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return msg + fmt.Sprintf(" (did you mean 'fields.%s.%s'? column names match exactly)", n, fam)
		}
	}
	sort.Strings(names)
	return msg + "; its columns are " + strings.Join(names, ", ")
}

// ChangelogMode says that the source inserts rows only.
func (s *Source) ChangelogMode() changelog.Mode { return changelog.InsertOnly }

// split state: split number, split count, rows generated.
func encodeSplit(k, p, done int64) []byte {
	b := binary.AppendVarint(nil, k)
	b = binary.AppendVarint(b, p)
	return binary.AppendVarint(b, done)
}

func decodeSplit(b []byte) (k, p, done int64, err error) {
	var v [3]int64
	for i := range v {
		x, n := binary.Varint(b)
		if n <= 0 {
			return 0, 0, 0, errors.New("datagen: split state is corrupt")
		}
		v[i], b = x, b[n:]
	}
	return v[0], v[1], v[2], nil
}

// NewEnumerator makes a split per subtask on a fresh start.
func (s *Source) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		out := make([]connector.Split, p)
		for k := range out {
			out[k] = connector.Split{ID: fmt.Sprintf("datagen-%d-of-%d", k, p), State: encodeSplit(int64(k), int64(p), 0)}
		}
		return out, nil
	})
}

// NewReader returns the reader of one subtask.
func (s *Source) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	rate := float64(s.rate) / float64(ctx.Parallelism())
	return &reader{src: s, w: types.NewRowWriter(s.rt, types.NewArena(0)), rate: rate, start: time.Now()}, nil
}

type split struct {
	id          string
	k, p, done  int64
	out         connector.SplitOutput[connector.TableRecord]
	finished    bool
	rowsInSplit int64 // -1 unbounded
}

type reader struct {
	src     *Source
	w       *types.RowWriter
	splits  []*split
	next    int
	rate    float64
	start   time.Time
	emitted int64
}

func (r *reader) AddSplits(splits []connector.Split) error {
	for _, sp := range splits {
		k, p, done, err := decodeSplit(sp.State)
		if err != nil {
			return fmt.Errorf("%w (split %s)", err, sp.ID)
		}
		n := int64(-1)
		if r.src.total >= 0 {
			n = 0
			if r.src.total > k {
				n = (r.src.total - k + p - 1) / p
			}
		}
		r.splits = append(r.splits, &split{id: sp.ID, k: k, p: p, done: done, rowsInSplit: n})
	}
	return nil
}

func (r *reader) Read(out connector.Output[connector.TableRecord]) error {
	allowed := int64(time.Since(r.start).Seconds()*r.rate) + 1 - r.emitted
	if allowed <= 0 {
		wait := time.Duration(float64(time.Second) * float64(1-allowed) / r.rate)
		time.Sleep(min(wait, 5*time.Millisecond))
		return nil
	}
	now := time.Now()
	for n := min(int64(out.Room()), allowed); n > 0 && len(r.splits) > 0; n-- {
		if r.next >= len(r.splits) {
			r.next = 0
		}
		sp := r.splits[r.next]
		if sp.out == nil {
			sp.out = out.Split(sp.id)
		}
		if sp.rowsInSplit >= 0 && sp.done >= sp.rowsInSplit {
			sp.out.Finish()
			r.splits = append(r.splits[:r.next], r.splits[r.next+1:]...)
			n++
			continue
		}
		row := sp.k + sp.done*sp.p
		if err := r.row(row, now); err != nil {
			return err
		}
		sp.out.Emit(connector.TableRecord{Kind: changelog.Insert, Row: r.w.Finish()})
		sp.done++
		r.emitted++
		r.next++
	}
	return nil
}

// row writes row number n of the table.
func (r *reader) row(n int64, now time.Time) error {
	r.w.Reset()
	for i, c := range r.src.cols {
		if err := r.w.SetValue(i, c.value(n, i, now)); err != nil {
			return fmt.Errorf("datagen: column %s of row %d: %w", c.name, n, err)
		}
	}
	return nil
}

func (r *reader) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, 0, len(r.splits))
	for _, sp := range r.splits {
		out = append(out, connector.Split{ID: sp.id, State: encodeSplit(sp.k, sp.p, sp.done)})
	}
	return out, nil
}

func (r *reader) Close() error { return nil }
