package main

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/eddystream/eddy/sql/types"
)

// The boxed tables the SQL client prints, in the form of Flink's SQL
// client:
//
//	+----+------+
//	| op |    k |
//	+----+------+
//	| +I |    1 |
//	+----+------+

// maxCellWidth is the widest a column of a result grows; longer values are
// cut and end in "...".
const maxCellWidth = 40

// nullText is how results show NULL.
const nullText = "<NULL>"

// textTable is the layout of a boxed table: its columns' headers, widths
// and alignment.
type textTable struct {
	header []string
	width  []int
	right  []bool
}

// newTextTable returns the layout of a table with the given headers, each
// as wide as its header and at least min[i] (if min is not nil).
func newTextTable(header []string, right []bool, min []int) *textTable {
	t := &textTable{header: header, width: make([]int, len(header)), right: right}
	if t.right == nil {
		t.right = make([]bool, len(header))
	}
	for i, h := range header {
		t.width[i] = utf8.RuneCountInString(h)
		if min != nil && min[i] > t.width[i] {
			t.width[i] = min[i]
		}
		t.width[i] = clampWidth(t.width[i])
	}
	return t
}

func clampWidth(w int) int { return max(1, min(w, maxCellWidth)) }

// fit widens the columns to fit rows, up to maxCellWidth.
func (t *textTable) fit(rows [][]string) {
	for _, r := range rows {
		for i, c := range r {
			if w := clampWidth(utf8.RuneCountInString(c)); w > t.width[i] {
				t.width[i] = w
			}
		}
	}
}

// border returns the line between the header and the rows.
func (t *textTable) border() string {
	var b strings.Builder
	b.WriteByte('+')
	for _, w := range t.width {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	return b.String()
}

// line returns a row of cells, each cut to its column's width.
func (t *textTable) line(cells []string) string {
	var b strings.Builder
	b.WriteByte('|')
	for i, c := range cells {
		c = cut(c, t.width[i])
		pad := strings.Repeat(" ", t.width[i]-utf8.RuneCountInString(c))
		b.WriteByte(' ')
		if t.right[i] {
			b.WriteString(pad)
			b.WriteString(c)
		} else {
			b.WriteString(c)
			b.WriteString(pad)
		}
		b.WriteString(" |")
	}
	return b.String()
}

// cut shortens s to w runes, ending it in "..." when it was longer.
func cut(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	if w <= 3 {
		return string(r[:w])
	}
	return string(r[:w-3]) + "..."
}

// head returns the border, header and border lines that open the table.
func (t *textTable) head() []string {
	return []string{t.border(), t.line(t.header), t.border()}
}

// render returns the lines of the whole table with rows.
func (t *textTable) render(rows [][]string) []string {
	lines := t.head()
	for _, r := range rows {
		lines = append(lines, t.line(r))
	}
	return append(lines, t.border())
}

// resultLayout returns the layout of a query's result: one column per
// field (after an "op" column for a changelog), numbers aligned right and
// each column as wide as its type's values usually are, so that rows
// printed as they arrive line up.
func resultLayout(rt *types.RowType, op bool) *textTable {
	var header []string
	var right []bool
	var widths []int
	if op {
		header, right, widths = append(header, "op"), append(right, false), append(widths, 2)
	}
	for i, name := range rt.Names() {
		ft := rt.FieldType(i)
		header = append(header, name)
		right = append(right, ft.IsNumeric())
		widths = append(widths, typeWidth(ft))
	}
	return newTextTable(header, right, widths)
}

// typeWidth is the width of a column of type t: that of its widest values
// for numbers and times, 6 for NULL, and 20 for the others.
func typeWidth(t types.Type) int {
	w := 20
	switch t.Kind() {
	case types.KindBoolean:
		w = 5
	case types.KindTinyInt:
		w = 4
	case types.KindSmallInt:
		w = 6
	case types.KindInt:
		w = 11
	case types.KindBigInt:
		w = 20
	case types.KindDecimal:
		w = t.Precision() + 2
	case types.KindDate:
		w = 10
	case types.KindTime:
		w = 8
		if p := t.Precision(); p > 0 {
			w += p + 1
		}
	case types.KindTimestamp, types.KindTimestampLTZ:
		w = 19
		if p := t.Precision(); p > 0 {
			w += p + 1
		}
	case types.KindChar, types.KindVarChar:
		if n := t.Length(); n > 0 && n < w {
			w = n
		}
	}
	if t.IsNullable() {
		w = max(w, len(nullText))
	}
	return w
}

// cellTexts returns the fields of row (of type rt) as the client shows
// them: as CAST(x AS STRING) gives them, NULL as <NULL>.
func cellTexts(rt *types.RowType, row types.Row) []string {
	out := make([]string, rt.Len())
	var buf []byte
	for i := range out {
		if row.IsNull(i) {
			out[i] = nullText
			continue
		}
		buf = types.AppendText(buf[:0], rt, row, i, nil)
		out[i] = string(buf)
	}
	return out
}

// plural returns "1 row" or "n rows".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}
