package connectortest

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// NotNullCase describes to RunNotNull a table source that reports fields
// never NULL (connector.NotNullSource).
type NotNullCase struct {
	// Open returns the source under test, over the same input every time.
	// It must implement connector.NotNullSource.
	Open func(t testing.TB) connector.Source[connector.TableRecord]
	// RowType is the type of the source's rows (connector.Table.RowType()).
	RowType *types.RowType
	// NotNull, if set, are paths the source must report never NULL, so
	// that a source that stops making a claim fails its test.
	NotNull [][]int
	// Parallelism is the parallelism of the read; 0 means 2.
	Parallelism int
}

// RunNotNull reads the source of c in full and checks every claim it
// makes: no row holds NULL at a path, of a column or of a field of a
// nested ROW at any depth, that NotNull reports never NULL. The source
// must emit at least one row, and make the claims of c.NotNull.
// RunFilter runs the same check on the unfiltered and every filtered
// source that implements connector.NotNullSource.
func RunNotNull(t *testing.T, c NotNullCase) {
	t.Helper()
	if c.Open == nil || c.RowType == nil {
		t.Fatal("connectortest: NotNullCase needs Open and RowType")
	}
	p := c.Parallelism
	if p == 0 {
		p = 2
	}
	src := c.Open(t)
	ns, ok := src.(connector.NotNullSource)
	if !ok {
		t.Fatalf("connectortest: the source is a %T, which does not implement connector.NotNullSource", src)
	}
	for _, path := range c.NotNull {
		if !ns.NotNull(path) {
			t.Errorf("the source does not report the field at %v never NULL; the case wants it to", path)
		}
	}
	rows := readTable(t, "not null", src, p, readPlain)
	if len(rows) == 0 {
		t.Fatal("connectortest: the source emitted no rows; the check needs an input")
	}
	checkNotNull(t, "the source", src, c.RowType, rows)
}

// checkNotNull checks that rows, all that src emits, hold no NULL at a path
// of rt that src reports never NULL, if src implements
// connector.NotNullSource.
func checkNotNull(t *testing.T, what string, src connector.Source[connector.TableRecord], rt *types.RowType, rows []connector.TableRecord) {
	t.Helper()
	ns, ok := src.(connector.NotNullSource)
	if !ok {
		return
	}
	for _, path := range fieldPaths(rt, nil) {
		if !ns.NotNull(path) {
			continue
		}
		for _, r := range rows {
			v, err := connector.PathValue(rt, r.Row, path)
			if err != nil {
				t.Fatalf("connectortest: %v", err)
			}
			if v == nil {
				t.Errorf("%s reports the field at %v never NULL (connector.NotNullSource), but emitted a row where it is NULL: %v", what, path, types.RowValues(rt, r.Row))
				break
			}
		}
	}
}

// fieldPaths returns the paths of the fields of rt, each column's and then
// those of the fields of its ROW value, at every depth, each after prefix.
func fieldPaths(rt *types.RowType, prefix []int) [][]int {
	var out [][]int
	for i := 0; i < rt.Len(); i++ {
		p := append(append([]int{}, prefix...), i)
		out = append(out, p)
		if ft := rt.FieldType(i); ft.Kind() == types.KindRow {
			out = append(out, fieldPaths(ft.Row(), p)...)
		}
	}
	return out
}
