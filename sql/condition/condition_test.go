package condition_test

import (
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/condition"
	"github.com/eddystream/eddy/sql/types"
)

// TestCompile evaluates conditions over rows with SQL's
// three-valued logic, and checks the errors of bad ones.
func TestCompile(t *testing.T) {
	typ, err := types.ParseType("ROW<id BIGINT, region STRING, amount DECIMAL(10, 2), tags ARRAY<STRING>>")
	if err != nil {
		t.Fatal(err)
	}
	rt := typ.Row()
	row := func(vals ...any) types.Row {
		w := types.NewRowWriter(rt, types.NewArena(0))
		for i, v := range vals {
			if v == nil {
				continue
			}
			if err := w.SetValue(i, v); err != nil {
				t.Fatal(err)
			}
		}
		return w.Finish()
	}
	dec := func(s string) types.Decimal {
		d, err := types.ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	rows := []types.Row{
		row(int64(1), "eu", dec("150.00"), nil),
		row(int64(2), "us", dec("20.50"), nil),
		row(int64(3), nil, dec("999.99"), nil),
		row(int64(4), "EU", nil, nil),
	}
	for _, c := range []struct {
		where string
		want  string // the ids kept
	}{
		{"amount > 100", "1 3"},
		{"region = 'eu' OR amount < 50", "1 2"},
		{"NOT (region = 'eu')", "2 4"}, // NULL region: NOT NULL is NULL
		{"UPPER(region) = 'EU' AND id >= 1", "1 4"},
		{"region IS NULL OR amount IS NULL", "3 4"},
		{"region LIKE 'e%'", "1"},
		{"id IN (2, 4)", "2 4"},
		{"CAST(NULL AS BOOLEAN)", ""},
	} {
		cond, err := condition.Compile(rt, c.where)
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		var kept []string
		for i, r := range rows {
			ok, err := cond.Holds(r)
			if err != nil {
				t.Errorf("%s on row %d: %v", c.where, i, err)
			}
			if ok {
				kept = append(kept, []string{"1", "2", "3", "4"}[i])
			}
		}
		if got := strings.Join(kept, " "); got != c.want {
			t.Errorf("%s keeps ids %q, want %q", c.where, got, c.want)
		}
	}
	for _, c := range []struct{ where, want string }{
		{"amount >", "line 1"},
		{"amout > 1", "unknown column amout; the columns are id, region, amount, tags"},
		{"Region = 'eu'", "did you mean region?"},
		{"amount + 1", "not BOOLEAN"},
		{"", "the condition is empty"},
		{"id IN (SELECT 1)", "subquery"},
		{"COUNT(*) > 1", "COUNT"},
	} {
		_, err := condition.Compile(rt, c.where)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.where, err, c.want)
		}
	}
	// An error of evaluation names the expression.
	cond, err := condition.Compile(rt, "CAST(region AS INT) > 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cond.Holds(rows[0]); err == nil || !strings.Contains(err.Error(), "CAST") {
		t.Errorf("casting 'eu' to INT gave %v, want an error naming the CAST", err)
	}
}
