package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/eddystream/eddy"
)

// Progress on a terminal: long work (benchmarks, jobs, CDC snapshots,
// savepoints) shows a status line on standard error, redrawn four times a
// second, and nothing at all when standard error is not a terminal.
//
// Standard error is then a termLine: every write to it (log lines, messages)
// first erases the status line and draws it again after the write, once the
// cursor is back at the start of a line, so that the status line never
// garbles what is written around it. While a job's status shows and standard
// output is a terminal too, what the job prints there (print sinks, query
// results) passes through the same termLine.

// progressEvery is how often status lines are redrawn.
const progressEvery = 250 * time.Millisecond

// isTerminal reports whether w is a terminal (a character device, or a
// termLine).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ Terminal() bool }); ok {
		return t.Terminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// liveTerminal reports whether f is a terminal that can show a status line.
func liveTerminal(f *os.File) bool { return isTerminal(f) && isTTY(f.Fd()) }

// termLine is a terminal showing a status line below what is written to it.
type termLine struct {
	mu sync.Mutex
	f  *os.File
	// status is the line to show, "" for none; drawn reports that it is on
	// the screen, at the cursor's line.
	status string
	drawn  bool
	// midLine reports that the last write did not end a line: the status
	// waits for the line's end.
	midLine bool
}

// newTermLine returns the termLine of the terminal f.
func newTermLine(f *os.File) *termLine { return &termLine{f: f} }

// wrapStderr makes the command's standard error a termLine when it is a
// terminal that can show status lines.
func wrapStderr(setErr func(io.Writer), stderr io.Writer) {
	if f, ok := stderr.(*os.File); ok && liveTerminal(f) {
		setErr(newTermLine(f))
	}
}

// Terminal reports that the termLine is a terminal (isTerminal).
func (t *termLine) Terminal() bool { return true }

// Write writes p below the status line's place, and draws the status again
// after it once a line is complete.
func (t *termLine) Write(p []byte) (int, error) { return t.writeTo(t.f, p) }

func (t *termLine) writeTo(w io.Writer, p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.erase()
	n, err := w.Write(p)
	if len(p) > 0 {
		t.midLine = p[len(p)-1] != '\n'
	}
	t.draw()
	return n, err
}

// erase removes the status line from the screen.
func (t *termLine) erase() {
	if t.drawn {
		io.WriteString(t.f, "\r\033[K")
		t.drawn = false
	}
}

// draw shows the status line, cut to the terminal's width, unless the
// cursor is in the middle of a line.
func (t *termLine) draw() {
	if t.status == "" || t.midLine {
		return
	}
	s := t.status
	if _, cols, ok := ttySize(t.f.Fd()); ok && utf8.RuneCountInString(s) >= cols {
		s = string([]rune(s)[:max(cols-1, 0)])
	}
	io.WriteString(t.f, "\r\033[K"+s)
	t.drawn = true
}

// setStatus shows s as the status line ("" removes it).
func (t *termLine) setStatus(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == t.status && t.drawn {
		return
	}
	t.status = s
	if s == "" || t.midLine {
		t.erase()
		return
	}
	t.draw()
}

// captureStdout, when standard output is a terminal, sends what is
// written to os.Stdout through the termLine until restore is called (which
// waits for all of it to be written).
func (t *termLine) captureStdout() (restore func()) {
	out := os.Stdout
	if !liveTerminal(out) {
		return func() {}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	os.Stdout = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				t.writeTo(out, buf[:n])
			}
			if err != nil {
				r.Close()
				return
			}
		}
	}()
	return func() {
		os.Stdout = out
		w.Close()
		<-done
	}
}

// startStatus shows, when w is a terminal, the status line render returns,
// redrawn four times a second, and the permanent lines it returns above it;
// stop removes the status line. When w is not a terminal it writes nothing
// and never calls render.
func startStatus(w io.Writer, render func(now time.Time) (status string, lines []string)) (stop func()) {
	t, ok := w.(*termLine)
	if !ok {
		f, isFile := w.(*os.File)
		if !isFile || !liveTerminal(f) {
			return func() {}
		}
		t = newTermLine(f)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				t.setStatus("")
				return
			case now := <-tick.C:
				s, lines := render(now)
				for _, l := range lines {
					t.Write([]byte(l + "\n"))
				}
				t.setStatus(s)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// startCountProgress shows, on a terminal w, label with the count of total
// done so far (count, from its value now), its percentage and the time
// since the start.
func startCountProgress(w io.Writer, label, unit string, total int64, count func() int64) (stop func()) {
	if total <= 0 || !isTerminal(w) {
		return func() {}
	}
	base, start := count(), time.Now()
	return startStatus(w, func(now time.Time) (string, []string) {
		return countLine(label, unit, count()-base, total, now.Sub(start)), nil
	})
}

// countLine is the status line of startCountProgress.
func countLine(label, unit string, n, total int64, elapsed time.Duration) string {
	return fmt.Sprintf("%s  %d / %d %s  %3.0f%%  %s", label, n, total, unit,
		100*float64(n)/float64(total), elapsed.Round(time.Second))
}

// spinner is the status line of a wait: label, a turning bar and the time
// waited.
func spinner(label string, elapsed time.Duration) string {
	bars := `|/-\`
	i := int(elapsed/progressEvery) % len(bars)
	return fmt.Sprintf("%s %c %s", label, bars[i], elapsed.Round(time.Second))
}

// startJobProgress shows, on a terminal w, the status line of the job
// named name running on the environment env returns (nil before it is
// built): jobProgress. While it shows, what the job prints on a terminal's
// standard output goes through the same line. It returns the function that
// stops it.
func startJobProgress(w io.Writer, name string, env func() *eddy.Environment) (stop func()) {
	t, ok := w.(*termLine)
	if !ok {
		return func() {}
	}
	restore := t.captureStdout()
	p := &jobProgress{name: name}
	var (
		last  *eddy.Environment
		graph *eddy.JobGraph
	)
	stopStatus := startStatus(t, func(now time.Time) (string, []string) {
		e := env()
		if e == nil {
			return name + "  starting", nil
		}
		st := e.JobStatus()
		ms := e.Metrics()
		if e != last || graph == nil {
			last, graph = e, nil
			if ms != nil {
				// The job runs (Metrics is nil before): its plan is made.
				graph, _ = e.JobGraph()
			}
		}
		return p.update(now, st, graph, ms, e.CheckpointStats())
	})
	return func() {
		stopStatus()
		restore()
	}
}

// jobProgress makes a job's status line from samples of its state,
// counters and checkpoints: see update.
type jobProgress struct {
	name string
	// hist holds the source and sink counts of the latest second.
	hist []countSample
	// tables follows the snapshot of each CDC table.
	tables map[string]*tableWatch
}

type countSample struct {
	at      time.Time
	in, out int64
}

// tableWatch is what jobProgress saw of a table's snapshot.
type tableWatch struct {
	// unstarted is the latest time none of its chunks was read (zero if
	// never seen so).
	unstarted time.Time
	// done reports that the table's snapshot is over (and announced).
	done bool
}

// update returns the status line of the job at now, and the lines to print
// above it for the CDC tables whose snapshot ended since the last update.
// The line shows the job's state, the records the sources emit and the sinks
// receive per second (over the latest second), the latest completed
// checkpoint and its age, and for CDC sources the snapshot's progress, then
// the lag of the change stream. graph may be nil before the job runs.
func (p *jobProgress) update(now time.Time, st eddy.JobStatus, graph *eddy.JobGraph, ms []eddy.OperatorMetrics, cks []eddy.CheckpointStats) (string, []string) {
	parts := []string{p.name, string(st.State)}
	if st.Restarts > 0 {
		parts = append(parts, fmt.Sprintf("%d restarts", st.Restarts))
	}
	if graph != nil && ms != nil {
		in, out := sourceSinkCounts(graph, ms)
		if n := len(p.hist); n > 0 && (in < p.hist[n-1].in || out < p.hist[n-1].out) {
			p.hist = nil // counters start again from zero after a restart
		}
		p.hist = append(p.hist, countSample{now, in, out})
		for len(p.hist) > 2 && !p.hist[1].at.After(now.Add(-time.Second)) {
			p.hist = p.hist[1:]
		}
		if first := p.hist[0]; len(p.hist) > 1 && now.After(first.at) {
			secs := now.Sub(first.at).Seconds()
			parts = append(parts, fmt.Sprintf("in %s/s  out %s/s",
				humanCount(float64(in-first.in)/secs), humanCount(float64(out-first.out)/secs)))
		}
	}
	for i := len(cks) - 1; i >= 0; i-- {
		if c := cks[i]; c.Failed == nil {
			age := now.Sub(c.Triggered.Add(c.Duration)).Round(time.Second)
			parts = append(parts, fmt.Sprintf("checkpoint %d (%s ago)", c.ID, max(age, 0)))
			break
		}
	}
	cdcPart, lines := p.cdc(now, ms)
	if cdcPart != "" {
		parts = append(parts, cdcPart)
	}
	return strings.Join(parts, "  "), lines
}

// sourceSinkCounts sums the records the job's sources emitted and its sinks
// received: the first operators of the vertices no exchange enters, and the
// last operators of those none leaves.
func sourceSinkCounts(g *eddy.JobGraph, ms []eddy.OperatorMetrics) (in, out int64) {
	entered, left := map[int]bool{}, map[int]bool{}
	for _, e := range g.Edges {
		entered[e.Target], left[e.Source] = true, true
	}
	sources, sinks := map[int]bool{}, map[int]bool{}
	for _, v := range g.Vertices {
		if len(v.Operators) == 0 {
			continue
		}
		if !entered[v.ID] {
			sources[v.Operators[0].ID] = true
		}
		if !left[v.ID] {
			sinks[v.Operators[len(v.Operators)-1].ID] = true
		}
	}
	for _, m := range ms {
		if sources[m.OperatorID] {
			in += m.RecordsOut
		}
		if sinks[m.OperatorID] {
			out += m.RecordsIn
		}
	}
	return in, out
}

// cdc returns the part of the status line about the CDC sources' snapshot
// (from their enumerators' reports: cdc.Chunks.AddStatus) or, once it is
// read, their lag (from their readers' reports), and the lines announcing
// the tables whose snapshot ended.
func (p *jobProgress) cdc(now time.Time, ms []eddy.OperatorMetrics) (string, []string) {
	var (
		sources                                int
		snapshotting, discovering, done        bool
		tables, tablesDone, chunks, chunksDone int
		lag                                    = int64(-1)
		lines                                  []string
	)
	cdcOps := map[int]bool{}
	for _, m := range ms {
		es := m.EnumeratorStatus
		if _, ok := es["snapshotTablesTotal"]; !ok {
			continue
		}
		cdcOps[m.OperatorID] = true
		sources++
		phase, _ := es["phase"].(string)
		switch phase {
		case "discovering":
			discovering = true
		case "snapshot":
			snapshotting = true
		case "done":
			done = true
		}
		tables += toInt(es["snapshotTablesTotal"])
		tablesDone += toInt(es["snapshotTablesDone"])
		chunks += toInt(es["snapshotChunksTotal"])
		chunksDone += toInt(es["snapshotChunksDone"])
		lines = append(lines, p.watchTables(now, es, phase)...)
	}
	if sources == 0 {
		return "", nil
	}
	for _, m := range ms {
		if v, ok := m.Status["lagMillis"]; ok && cdcOps[m.OperatorID] {
			lag = max(lag, int64(toInt(v)))
		}
	}
	switch {
	case discovering && !snapshotting:
		return "snapshot: discovering tables", lines
	case snapshotting || discovering:
		return fmt.Sprintf("snapshot %d/%d tables, %d/%d chunks", tablesDone, tables, chunksDone, chunks), lines
	case lag >= 0:
		return "streaming, lag " + humanLag(lag), lines
	case done:
		return "snapshot done", lines
	}
	return "streaming", lines
}

// watchTables notes the progress of the tables in an enumerator's report,
// and returns a line for each table whose snapshot it sees ending; tables
// seen first already read, once the snapshot is over (a job resumed), get
// none.
func (p *jobProgress) watchTables(now time.Time, es map[string]any, phase string) []string {
	per, _ := es["snapshotTables"].(map[string]any)
	if p.tables == nil {
		p.tables = map[string]*tableWatch{}
	}
	var lines []string
	names := make([]string, 0, len(per))
	for name := range per {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t, _ := per[name].(map[string]any)
		total, read, rows := toInt(t["chunks"]), toInt(t["chunksDone"]), toInt(t["records"])
		w := p.tables[name]
		first := w == nil
		if first {
			w = &tableWatch{}
			p.tables[name] = w
		}
		switch {
		case w.done:
		case read < total || total == 0:
			if read == 0 {
				w.unstarted = now
			}
		case first && phase != "snapshot":
			w.done = true
		default:
			w.done = true
			l := fmt.Sprintf("snapshot of %s done: %d rows", name, rows)
			if !w.unstarted.IsZero() {
				l += fmt.Sprintf(" in %s", now.Sub(w.unstarted).Round(100*time.Millisecond))
			}
			lines = append(lines, l)
		}
	}
	return lines
}

// toInt returns the integer of a status report's value (0 if it is none).
func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case int32:
		return int(n)
	case uint64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// humanCount writes a rate or count in at most three figures: 950, 1.2k,
// 123k, 4.5M.
func humanCount(v float64) string {
	switch {
	case v < 999.5:
		return fmt.Sprintf("%.0f", v)
	case v < 9_950:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v < 999_500:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v < 999_950_000:
		return fmt.Sprintf("%.1fM", v/1e6)
	}
	return fmt.Sprintf("%.1fG", v/1e9)
}

// humanLag writes a lag in milliseconds: 120 ms, 3.4s, 2m5s.
func humanLag(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
