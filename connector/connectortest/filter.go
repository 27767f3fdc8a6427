package connectortest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// FilterCase describes to RunFilter a table source that accepts filters
// (connector.FilterableSource).
type FilterCase struct {
	// Open returns the table's source as connector.OpenTableSource makes
	// it, over the same input every time (the suite reads it several
	// times). It must implement connector.FilterableSource.
	Open func(t testing.TB) connector.Source[connector.TableRecord]
	// RowType is the type of the source's rows (connector.Table.RowType()).
	RowType *types.RowType
	// Filters are the sets of predicates the suite offers, each set in one
	// call of ApplyFilters, as the planner offers the conjuncts of one
	// WHERE clause.
	Filters [][]connector.Predicate
	// Accept, if set, holds for each set of Filters the indexes the source
	// must accept (nil or empty: none), so that a source that stops
	// accepting a predicate fails its test.
	Accept [][]int
	// Projections are field paths (as connector.ProjectableSource takes
	// them) that the suite projects every filtered source with, in both
	// orders, where the source projects.
	Projections [][][]int
	// Checkpoints also runs RunSource's suite (checkpoints, restores, kill
	// and resume, rescale) on every filtered source that emits at least two
	// rows, against the filtered reference.
	Checkpoints bool
	// Parallelism is the parallelism of every read; 0 means 2. A source
	// whose rows depend on the parallelism (a generator whose parts run on
	// timelines of their own) is compared at one parallelism throughout.
	Parallelism int
}

// RunFilter checks a filterable source, each set of predicates of c.Filters
// as a subtest of t: the source ApplyFilters returns, read in full, must
// emit exactly the rows of the unfiltered source for which every accepted
// predicate holds (connector.Predicate.Holds), as a multiset. The accepted
// indexes must be valid, increasing and, if c.Accept says so, the expected
// ones. The suite also reads, where the sources implement them, the
// filtered source's TransientRows (copying each row as it comes), the
// filtered source with a sink that lets its reader reuse its records'
// memory (connector.ReusesRecords), the
// filtered source projected with each of c.Projections, and the source
// projected first and filtered after (whose predicates still refer to the
// table's rows), each against the reference filtered and projected alike.
// A set the source accepts none of must give (nil, nil). Where the
// unfiltered or a filtered source implements connector.NotNullSource, the
// suite checks its claims on the rows it read (see RunNotNull).
func RunFilter(t *testing.T, c FilterCase) {
	t.Helper()
	if c.Open == nil || c.RowType == nil {
		t.Fatal("connectortest: FilterCase needs Open and RowType")
	}
	p := c.Parallelism
	if p == 0 {
		p = 2
	}
	src := c.Open(t)
	if _, ok := src.(connector.FilterableSource); !ok {
		t.Fatalf("connectortest: the source is a %T, which does not implement connector.FilterableSource", src)
	}
	ref := readTable(t, "unfiltered", src, p, readPlain)
	if len(ref) == 0 {
		t.Fatal("connectortest: the unfiltered source emitted no rows; the check needs an input")
	}
	checkNotNull(t, "the unfiltered source", src, c.RowType, ref)
	for i, preds := range c.Filters {
		t.Run(fmt.Sprintf("filter %d %v", i, preds), func(t *testing.T) {
			fs := c.Open(t).(connector.FilterableSource)
			filtered, accepted := fs.ApplyFilters(preds)
			checkAccepted(t, preds, accepted)
			if c.Accept != nil && i < len(c.Accept) && !slices.Equal(accepted, c.Accept[i]) && len(accepted)+len(c.Accept[i]) > 0 {
				t.Errorf("the source accepted the predicates %v; the case wants %v", accepted, c.Accept[i])
			}
			if len(accepted) == 0 {
				if filtered != nil {
					t.Errorf("the source accepted no predicate but returned a source; want (nil, nil)")
				}
				return
			}
			if filtered == nil {
				t.Fatalf("the source accepted %v but returned a nil source", accepted)
			}
			var keep []connector.Predicate
			for _, k := range accepted {
				keep = append(keep, preds[k])
			}
			want := filterRows(t, c.RowType, ref, keep)
			wantKeys := keysOf(c.RowType, want)
			got := readTable(t, "filtered", filtered, p, readPlain)
			checkNotNull(t, "the filtered source", filtered, c.RowType, got)
			compareKeys(t, "the filtered source", keysOf(c.RowType, got), wantKeys)
			got = readTable(t, "filtered, records reused", filtered, p, readReused)
			compareKeys(t, "the filtered source with its records reused (connector.ReusesRecords)", keysOf(c.RowType, got), wantKeys)
			if ts, ok := filtered.(connector.TransientRowSource); ok {
				got := readTable(t, "filtered, transient rows", ts.TransientRows(), p, readTransient)
				compareKeys(t, "the filtered source's TransientRows", keysOf(c.RowType, got), wantKeys)
			}
			for _, paths := range c.Projections {
				prt, err := pathsType(c.RowType, paths)
				if err != nil {
					t.Fatalf("connectortest: FilterCase.Projections: %v", err)
				}
				wantP := projectKeys(t, c.RowType, want, paths)
				if ps, ok := filtered.(connector.ProjectableSource); ok {
					if narrow, ok := ps.ProjectFields(paths); ok {
						got := readTable(t, "filtered, then projected", narrow, p, readPlain)
						compareKeys(t, fmt.Sprintf("the filtered source projected to %v", paths), keysOf(prt, got), wantP)
					}
				}
				ps, ok := c.Open(t).(connector.ProjectableSource)
				if !ok {
					continue
				}
				narrow, ok := ps.ProjectFields(paths)
				if !ok {
					continue
				}
				pf, ok := narrow.(connector.FilterableSource)
				if !ok {
					continue
				}
				both, acc := pf.ApplyFilters(preds)
				checkAccepted(t, preds, acc)
				if len(acc) == 0 {
					continue
				}
				var k2 []connector.Predicate
				for _, k := range acc {
					k2 = append(k2, preds[k])
				}
				got := readTable(t, "projected, then filtered", both, p, readPlain)
				compareKeys(t, fmt.Sprintf("the source projected to %v, then filtered", paths), keysOf(prt, got), projectKeys(t, c.RowType, filterRows(t, c.RowType, ref, k2), paths))
			}
			if c.Checkpoints && len(want) >= 2 {
				rt := c.RowType
				RunSource(t, SourceCase[connector.TableRecord]{
					Open: func(t testing.TB) (connector.Source[connector.TableRecord], func()) {
						s, _ := c.Open(t).(connector.FilterableSource).ApplyFilters(preds)
						return s, nil
					},
					Want: want,
					Key:  func(r connector.TableRecord) string { return recordKey(rt, r) },
				})
			}
		})
	}
}

// checkAccepted checks that accepted holds valid indexes of preds in
// increasing order.
func checkAccepted(t *testing.T, preds []connector.Predicate, accepted []int) {
	t.Helper()
	for j, k := range accepted {
		if k < 0 || k >= len(preds) {
			t.Fatalf("ApplyFilters accepted predicate %d of %d", k, len(preds))
		}
		if j > 0 && k <= accepted[j-1] {
			t.Fatalf("ApplyFilters returned the accepted indexes %v; want them increasing, each once", accepted)
		}
	}
}

// readMode says how readTable takes the rows of a source.
type readMode int

const (
	// readPlain keeps the rows as they come.
	readPlain readMode = iota
	// readTransient copies each row as it comes, in the source (for
	// TransientRows).
	readTransient
	// readReused writes the rows to a sink that keeps nothing of them
	// (connector.NonRetainingWriter) and copies them, so that the source's
	// reader may reuse its records' memory (connector.ReusesRecords).
	readReused
)

// readTable reads src in full at parallelism p and returns its records.
func readTable(t *testing.T, what string, src connector.Source[connector.TableRecord], p int, mode readMode) []connector.TableRecord {
	t.Helper()
	var mu sync.Mutex
	var out []connector.TableRecord
	var opts []eddy.Option
	if mode == readReused {
		// Small batches: a reader's rows span many reads, so that a row
		// kept past its read's end would be overwritten.
		opts = append(opts, eddy.WithBatchSize(7))
	}
	j := startJob(t, "filter conformance: "+what, p, opts, func(env *eddy.Environment) {
		var opts []eddy.SourceOption
		if mode == readTransient {
			opts = append(opts, eddy.TransformInSource(func() func(connector.TableRecord) (connector.TableRecord, bool) {
				return func(r connector.TableRecord) (connector.TableRecord, bool) {
					r.Row = r.Row.Clone()
					return r, true
				}
			}))
		}
		st := eddy.FromSource(env, "source under test", src, eddy.NoWatermarks[connector.TableRecord](), opts...)
		if mode == readReused {
			eddy.WriteTo[connector.TableRecord](st, "copying sink", copyingSink{mu: &mu, out: &out})
			return
		}
		eddy.SinkTo(st, func(r connector.TableRecord) error {
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
			return nil
		})
	})
	j.mustEnd(t)
	return out
}

// copyingSink collects copies of the rows it is given, keeping nothing of
// them (connector.NonRetainingWriter).
type copyingSink struct {
	mu  *sync.Mutex
	out *[]connector.TableRecord
}

func (s copyingSink) NewWriter(connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return s, nil
}

func (s copyingSink) Write(records []connector.TableRecord, _ []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		r.Row = r.Row.Clone()
		*s.out = append(*s.out, r)
	}
	return nil
}

func (copyingSink) Flush() error           { return nil }
func (copyingSink) Close() error           { return nil }
func (copyingSink) RetainsNoRecords() bool { return true }

// filterRows returns the records of rows for which every predicate holds.
func filterRows(t *testing.T, rt *types.RowType, rows []connector.TableRecord, preds []connector.Predicate) []connector.TableRecord {
	t.Helper()
	var out []connector.TableRecord
next:
	for _, r := range rows {
		for _, p := range preds {
			ok, err := p.Holds(rt, r.Row)
			if err != nil {
				t.Fatalf("connectortest: %v", err)
			}
			if !ok {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// pathsType returns the row type of a projection to paths.
func pathsType(rt *types.RowType, paths [][]int) (*types.RowType, error) {
	fs := make([]types.Field, len(paths))
	for k, p := range paths {
		ft, ok := connector.PathType(rt, p)
		if !ok {
			return nil, fmt.Errorf("path %v names no field of %s", p, rt)
		}
		fs[k] = types.F(fmt.Sprintf("f%d", k), ft)
	}
	return types.NewRowType(fs...)
}

// projectKeys returns the keys of the records of rows projected to paths.
func projectKeys(t *testing.T, rt *types.RowType, rows []connector.TableRecord, paths [][]int) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		vs := make([]types.Value, len(paths))
		for k, p := range paths {
			v, err := connector.PathValue(rt, r.Row, p)
			if err != nil {
				t.Fatalf("connectortest: %v", err)
			}
			vs[k] = v
		}
		out[i] = fmt.Sprintf("%v %v", r.Kind, vs)
	}
	return out
}

// recordKey renders a record of rows of type rt for comparing multisets.
func recordKey(rt *types.RowType, r connector.TableRecord) string {
	return fmt.Sprintf("%v %v", r.Kind, types.RowValues(rt, r.Row))
}

func keysOf(rt *types.RowType, rows []connector.TableRecord) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = recordKey(rt, r)
	}
	return out
}

// compareKeys compares two multisets of record keys.
func compareKeys(t *testing.T, what string, got, want []string) {
	t.Helper()
	if d := multisetDiff(got, want, func(s string) string { return s }); d != "" {
		t.Errorf("%s emitted other rows than the unfiltered source with the accepted predicates applied: %s", what, d)
	}
}
