package projection

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/types"
)

func projectionInput(t *testing.T) (*types.RowType, types.Row) {
	t.Helper()
	rt := types.MustRowType(types.F("id", types.BigInt().NotNull()), types.F("name", types.String()), types.F("price", types.DecimalType(10, 2)))
	w := types.NewRowWriter(rt, types.NewArena(0))
	w.SetInt64(0, 7)
	w.SetString(1, "widget")
	if err := w.SetDecimal(2, types.MustParseDecimal("12.50")); err != nil {
		t.Fatal(err)
	}
	return rt, w.Finish()
}

// TestProjection compiles a transform's projection and filter and applies
// them: computed columns, '*', a column replaced by a computed one of the
// same name, and a filter that drops rows.
func TestProjection(t *testing.T) {
	rt, row := projectionInput(t)
	for _, c := range []struct {
		projection, filter string
		want               string // the row type, then the row; "" when filtered out
	}{
		{"", "", "ROW<`id` BIGINT NOT NULL, `name` STRING, `price` DECIMAL(10, 2)> +I[7, widget, 12.50]"},
		{"*, UPPER(name) AS name", "", "ROW<`id` BIGINT NOT NULL, `name` STRING, `price` DECIMAL(10, 2)> +I[7, WIDGET, 12.50]"},
		{"id, price * 2 AS double_price", "id > 5", "ROW<`id` BIGINT NOT NULL, `double_price` DECIMAL(21, 2)> +I[7, 25.00]"},
		{"id", "id > 7", ""},
		{"id", "name IS NULL", ""},
	} {
		p, err := Compile(rt, c.projection, c.filter)
		if err != nil {
			t.Fatalf("%q %q: %v", c.projection, c.filter, err)
		}
		out, keep, err := p.Apply(row)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if keep {
			got = p.Type().String() + " " + types.FormatChange(0, p.Type(), out)
		}
		if got != c.want {
			t.Errorf("%q %q:\n got %s\nwant %s", c.projection, c.filter, got, c.want)
		}
	}
}

// TestProjectionErrors: unknown columns, a filter that is no condition, an
// unnamed expression and bad syntax give errors that say what is wrong.
func TestProjectionErrors(t *testing.T) {
	rt, _ := projectionInput(t)
	for _, c := range []struct{ projection, filter, want string }{
		{"id, nope", "", "unknown column nope; the table has id, name, price"},
		{"id", "id + 1", "not a condition"},
		{"id + 1", "", "name the expression"},
		{"id,", "", "transform"},
	} {
		_, err := Compile(rt, c.projection, c.filter)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: got %v, want an error containing %q", c.projection, c.filter, err, c.want)
		}
	}
}
