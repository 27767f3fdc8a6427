package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// resultView shows the result of a query while its job runs. The client
// serializes the calls.
type resultView interface {
	// begin is called when the job is built, with the result's columns.
	begin(rt *types.RowType)
	// change is called for every change of the result, with its fields
	// as text.
	change(kind changelog.Kind, row []string)
	// end is called once the job has ended, with its state (jobFinished,
	// jobCanceled or jobFailed).
	end(status string)
}

// tableauView prints each change as a row of a table as it comes, with
// its kind in the "op" column: the tableau result mode, and the changelog
// mode when the output is not a terminal.
type tableauView struct {
	w io.Writer
	t *textTable
	n int64
}

func (v *tableauView) begin(rt *types.RowType) {
	v.t = resultLayout(rt, true)
	for _, l := range v.t.head() {
		fmt.Fprintln(v.w, l)
	}
}

func (v *tableauView) change(kind changelog.Kind, row []string) {
	v.n++
	fmt.Fprintln(v.w, v.t.line(append([]string{kind.String()}, row...)))
}

func (v *tableauView) end(status string) {
	if v.t == nil {
		return
	}
	fmt.Fprintln(v.w, v.t.border())
	fmt.Fprintf(v.w, "Received a total of %s%s\n", plural(v.n, "row"), endNote(status))
}

// endNote is what a view adds to its summary for a job that did not
// finish by itself.
func endNote(status string) string {
	switch status {
	case jobCanceled:
		return " (the query was stopped)"
	case jobFailed:
		return " (the query failed)"
	}
	return ""
}

// finalTableView materializes the result and prints the table once the
// query ends: the table mode when the output is not a terminal.
type finalTableView struct {
	w   io.Writer
	rt  *types.RowType
	tbl *resultTable
}

func (v *finalTableView) begin(rt *types.RowType) { v.rt = rt }

func (v *finalTableView) change(kind changelog.Kind, row []string) { v.tbl.Apply(kind, row) }

func (v *finalTableView) end(status string) {
	if v.rt == nil {
		return
	}
	t := resultLayout(v.rt, false)
	rows := v.tbl.Rows(0)
	t.fit(rows)
	for _, l := range t.render(rows) {
		fmt.Fprintln(v.w, l)
	}
	fmt.Fprintf(v.w, "%s in the result, from %s%s%s\n", plural(int64(v.tbl.Len()), "row"), plural(v.tbl.Changes, "change"), droppedNote(v.tbl), endNote(status))
}

func droppedNote(t *resultTable) string {
	if t.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("; the %s dropped to keep 'sql-client.execution.max-table-result.rows'", plural(t.Dropped, "oldest row"))
}

// changelogKeep is how many of the latest changes the live changelog view
// keeps.
const changelogKeep = 1000

// liveView redraws the result in place on the terminal at every tick: the
// materialized table (table mode) or the latest changes (changelog mode),
// as many rows as the terminal holds, under a status line.
type liveView struct {
	w         io.Writer
	fd        uintptr // the terminal, for its size
	changelog bool
	query     string
	started   time.Time

	rt     *types.RowType
	tbl    *resultTable
	log    [][]string // the latest changes, op first
	total  int64
	status string
	drawn  int // lines of the frame on screen
}

func (v *liveView) begin(rt *types.RowType) {
	v.rt = rt
	v.status = jobRunning
	fmt.Fprint(v.w, "\x1b[?25l") // hide the cursor while redrawing
	v.draw()
}

func (v *liveView) change(kind changelog.Kind, row []string) {
	v.total++
	if !v.changelog {
		v.tbl.Apply(kind, row)
		return
	}
	v.log = append(v.log, append([]string{kind.String()}, row...))
	if len(v.log) >= 2*changelogKeep {
		v.log = append([][]string(nil), v.log[len(v.log)-changelogKeep:]...)
	}
}

func (v *liveView) end(status string) {
	if v.rt == nil {
		return
	}
	v.status = status
	v.draw()
	fmt.Fprint(v.w, "\x1b[?25h")
}

// frame returns the lines of the view, for a terminal of rows by cols.
func (v *liveView) frame(rows int) []string {
	elapsed := time.Since(v.started).Truncate(100 * time.Millisecond)
	var status string
	if v.changelog {
		status = fmt.Sprintf("%s | %s | %s", v.status, plural(v.total, "change"), elapsed)
	} else {
		status = fmt.Sprintf("%s | %s from %s | %s", v.status, plural(int64(v.tbl.Len()), "row"), plural(v.total, "change"), elapsed)
	}
	if v.status == jobRunning {
		status += " | q or Ctrl-C stops the query"
	}
	lines := []string{v.query, status}
	room := max(1, rows-len(lines)-5) // the borders, the header, a note and the cursor's line
	var shown [][]string
	var more int
	if v.changelog {
		shown = v.log[max(0, len(v.log)-room):]
		more = int(v.total) - len(shown)
	} else {
		shown = v.tbl.Rows(room)
		more = v.tbl.Len() - len(shown)
	}
	t := resultLayout(v.rt, v.changelog)
	t.fit(shown)
	lines = append(lines, t.render(shown)...)
	switch {
	case more > 0 && v.changelog:
		lines = append(lines, fmt.Sprintf("(the latest %d changes)", len(shown)))
	case more > 0:
		lines = append(lines, fmt.Sprintf("(%d more rows)", more))
	}
	return lines
}

// draw replaces the frame on screen with the current one.
func (v *liveView) draw() {
	rows, cols, ok := ttySize(v.fd)
	if !ok {
		rows, cols = 24, 80
	}
	lines := v.frame(rows)
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	b.WriteString("\r\x1b[J")
	for _, l := range lines {
		// A line as wide as the terminal would wrap and shift the frame.
		if utf8.RuneCountInString(l) >= cols {
			l = string([]rune(l)[:cols-1])
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	io.WriteString(v.w, b.String())
	v.drawn = len(lines)
}
