package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
)

// progressGraph is a job of a source vertex feeding a map chained to a
// sink.
var progressGraph = &eddy.JobGraph{
	Vertices: []eddy.JobVertex{
		{ID: 0, Operators: []eddy.JobOperator{{ID: 1, Name: "Source: orders"}}},
		{ID: 1, Operators: []eddy.JobOperator{{ID: 2, Name: "map"}, {ID: 3, Name: "Sink: postgres"}}},
	},
	Edges: []eddy.JobEdge{{Source: 0, Target: 1}},
}

// cdcMetrics are the metrics of progressGraph at parallelism 2, with the
// source emitting in records and the sink receiving out (split over the
// subtasks), the enumerator reporting enum and each reader reader.
func cdcMetrics(in, out int64, enum, reader map[string]any) []eddy.OperatorMetrics {
	return []eddy.OperatorMetrics{
		{OperatorID: 1, Subtask: 0, RecordsOut: in / 2, Status: reader, EnumeratorStatus: enum},
		{OperatorID: 1, Subtask: 1, RecordsOut: in - in/2, Status: reader},
		{OperatorID: 2, Subtask: 0, RecordsIn: in / 2, RecordsOut: out / 2},
		{OperatorID: 2, Subtask: 1, RecordsIn: in - in/2, RecordsOut: out - out/2},
		{OperatorID: 3, Subtask: 0, RecordsIn: out / 2},
		{OperatorID: 3, Subtask: 1, RecordsIn: out - out/2},
	}
}

// enumStatus is an enumerator's report (cdc.Chunks.AddStatus) in phase,
// with each table's chunks read of all and its rows.
func enumStatus(phase string, tables map[string][3]int) map[string]any {
	per := map[string]any{}
	total, done, chunks, read, rows := 0, 0, 0, 0, int64(0)
	for name, t := range tables {
		per[name] = map[string]any{"chunks": t[0], "chunksDone": t[1], "records": int64(t[2])}
		total++
		if t[1] >= t[0] {
			done++
		}
		chunks += t[0]
		read += t[1]
		rows += int64(t[2])
	}
	return map[string]any{"startup": "initial", "phase": phase, "snapshotTablesTotal": total, "snapshotTablesDone": done,
		"snapshotChunksTotal": chunks, "snapshotChunksDone": read, "snapshotRecords": rows, "snapshotTables": per}
}

func TestProgressJobLine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	running := eddy.JobStatus{State: eddy.JobRunning, Started: t0}
	ck := func(id int64, completed time.Duration) eddy.CheckpointStats {
		return eddy.CheckpointStats{ID: id, Triggered: t0.Add(completed - 200*time.Millisecond), Duration: 200 * time.Millisecond}
	}
	type step struct {
		at      time.Duration
		status  eddy.JobStatus
		graph   *eddy.JobGraph
		metrics []eddy.OperatorMetrics
		cks     []eddy.CheckpointStats
		line    string
		lines   []string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{{
		name: "before the job runs",
		steps: []step{
			{status: eddy.JobStatus{State: eddy.JobCreated}, line: "job  CREATED"},
		},
	}, {
		name: "rates over the latest second, and the latest completed checkpoint",
		steps: []step{
			{at: 0, status: running, graph: progressGraph, metrics: cdcMetrics(0, 0, nil, nil), line: "job  RUNNING"},
			{at: 500 * time.Millisecond, status: running, graph: progressGraph, metrics: cdcMetrics(500, 250, nil, nil),
				line: "job  RUNNING  in 1.0k/s  out 500/s"},
			{at: time.Second, status: running, graph: progressGraph, metrics: cdcMetrics(3000, 2000, nil, nil),
				line: "job  RUNNING  in 3.0k/s  out 2.0k/s"},
			{at: 2 * time.Second, status: running, graph: progressGraph, metrics: cdcMetrics(2_003_000, 1_002_000, nil, nil),
				cks:  []eddy.CheckpointStats{ck(1, 1500*time.Millisecond), ck(2, 1800*time.Millisecond), {ID: 3, Failed: errors.New("aborted")}},
				line: "job  RUNNING  in 2.0M/s  out 1.0M/s  checkpoint 2 (0s ago)"},
			{at: 5 * time.Second, status: eddy.JobStatus{State: eddy.JobRestarting, Restarts: 1}, graph: progressGraph, metrics: cdcMetrics(10, 0, nil, nil),
				cks:  []eddy.CheckpointStats{ck(2, 1800*time.Millisecond)},
				line: "job  RESTARTING  1 restarts  checkpoint 2 (3s ago)"},
		},
	}, {
		name: "a CDC snapshot, then the stream",
		steps: []step{
			{at: 0, status: running, graph: progressGraph, metrics: cdcMetrics(0, 0, map[string]any{"phase": "discovering", "snapshotTablesTotal": 0}, nil),
				line: "job  RUNNING  snapshot: discovering tables"},
			{at: time.Second, status: running, graph: progressGraph,
				metrics: cdcMetrics(0, 0, enumStatus("snapshot", map[string][3]int{"shop.orders": {3, 0, 0}, "shop.items": {2, 0, 0}}), map[string]any{"snapshotChunksRead": 0}),
				line:    "job  RUNNING  in 0/s  out 0/s  snapshot 0/2 tables, 0/5 chunks"},
			{at: 3 * time.Second, status: running, graph: progressGraph,
				metrics: cdcMetrics(100, 100, enumStatus("snapshot", map[string][3]int{"shop.orders": {3, 3, 70}, "shop.items": {2, 1, 30}}), nil),
				line:    "job  RUNNING  in 50/s  out 50/s  snapshot 1/2 tables, 4/5 chunks",
				lines:   []string{"snapshot of shop.orders done: 70 rows in 2s"}},
			{at: 4 * time.Second, status: running, graph: progressGraph,
				metrics: cdcMetrics(140, 140, enumStatus("binlog", map[string][3]int{"shop.orders": {3, 3, 70}, "shop.items": {2, 2, 40}}), map[string]any{"phase": "binlog", "lagMillis": int64(120)}),
				line:    "job  RUNNING  in 40/s  out 40/s  streaming, lag 120 ms",
				lines:   []string{"snapshot of shop.items done: 40 rows in 3s"}},
			{at: 5 * time.Second, status: running, graph: progressGraph,
				metrics: cdcMetrics(140, 140, enumStatus("binlog", map[string][3]int{"shop.orders": {3, 3, 70}, "shop.items": {2, 2, 40}}), map[string]any{"phase": "binlog", "lagMillis": int64(65_400)}),
				line:    "job  RUNNING  in 0/s  out 0/s  streaming, lag 1m5s"},
		},
	}, {
		name: "a resumed job whose snapshot was read announces no table",
		steps: []step{
			{at: 0, status: running, graph: progressGraph,
				metrics: cdcMetrics(0, 0, enumStatus("stream", map[string][3]int{"public.orders": {1, 1, 9}}), map[string]any{"phase": "stream", "lagMillis": 2500}),
				line:    "job  RUNNING  streaming, lag 2.5s"},
		},
	}, {
		name: "a table read before the first look is announced without its time",
		steps: []step{
			{at: 0, status: running, graph: progressGraph,
				metrics: cdcMetrics(0, 0, enumStatus("snapshot", map[string][3]int{"db.a": {1, 1, 5}, "db.b": {4, 1, 9}}), nil),
				line:    "job  RUNNING  snapshot 1/2 tables, 2/5 chunks",
				lines:   []string{"snapshot of db.a done: 5 rows"}},
			{at: time.Second, status: running, graph: progressGraph,
				metrics: cdcMetrics(0, 0, enumStatus("done", map[string][3]int{"db.a": {1, 1, 5}, "db.b": {4, 4, 20}}), nil),
				line:    "job  RUNNING  in 0/s  out 0/s  snapshot done",
				lines:   []string{"snapshot of db.b done: 20 rows"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &jobProgress{name: "job"}
			for i, s := range tc.steps {
				line, lines := p.update(t0.Add(s.at), s.status, s.graph, s.metrics, s.cks)
				if line != s.line || strings.Join(lines, "\n") != strings.Join(s.lines, "\n") {
					t.Errorf("step %d: got line %q and lines %q, want %q and %q", i, line, lines, s.line, s.lines)
				}
			}
		})
	}
}

func TestProgressCountAndSpinnerLines(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{countLine("q5", "events", 250, 1000, 1400*time.Millisecond), "q5  250 / 1000 events   25%  1s"},
		{spinner("waiting", 0), "waiting | 0s"},
		{spinner("waiting", 250*time.Millisecond), "waiting / 0s"},
		{spinner("waiting", 2750*time.Millisecond), `waiting \ 3s`},
		{humanLag(999), "999 ms"},
		{humanCount(999_999), "1.0M"},
		{humanCount(999.4), "999"},
		{humanCount(12_345), "12k"},
		{humanCount(9_949), "9.9k"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestProgressNotTerminal checks that status lines write nothing, and do not
// even compute their text, on a writer that is not a terminal.
func TestProgressNotTerminal(t *testing.T) {
	var buf bytes.Buffer
	called := false
	startStatus(&buf, func(time.Time) (string, []string) {
		called = true
		return "status", []string{"line"}
	})()
	startCountProgress(&buf, "q0", "events", 100, func() int64 {
		called = true
		return 0
	})()
	startJobProgress(&buf, "job", func() *eddy.Environment {
		called = true
		return nil
	})()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wrapStderr(func(w io.Writer) { t.Errorf("a file that is not a terminal was wrapped in %T", w) }, f)
	startStatus(f, func(time.Time) (string, []string) {
		called = true
		return "status", nil
	})()
	if called || buf.Len() > 0 {
		t.Errorf("wrote %q (render called: %v) to a writer that is not a terminal", buf.String(), called)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
		t.Errorf("wrote %d bytes (%v) to a file that is not a terminal", fi.Size(), err)
	}
}

// TestProgressTermLine checks that the status line is erased before what is
// written to the terminal and drawn again after each complete line.
func TestProgressTermLine(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "tty"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tl := newTermLine(f)
	if !isTerminal(tl) {
		t.Error("a termLine is not a terminal to isTerminal (the text log format)")
	}
	tl.Write([]byte("before\n"))
	tl.setStatus("S1")
	tl.Write([]byte("log line\n"))
	tl.Write([]byte("partial"))
	tl.setStatus("S2")
	tl.Write([]byte(" line\n"))
	tl.setStatus("")
	tl.Write([]byte("after\n"))
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	const clr = "\r\033[K"
	want := "before\n" + clr + "S1" + clr + "log line\n" + clr + "S1" + clr + "partial" + " line\n" + clr + "S2" + clr + "after\n"
	if string(got) != want {
		t.Errorf("the terminal got\n%q\nwant\n%q", got, want)
	}
}
