package redis

import (
	"bytes"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

func id(ms, seq uint64) entryID { return entryID{ms, seq} }

func TestParseID(t *testing.T) {
	for s, want := range map[string]entryID{"0-0": {}, "12-3": id(12, 3), "1700000000000": id(1700000000000, 0), "18446744073709551615-18446744073709551615": maxID} {
		got, err := parseID(s)
		if err != nil || got != want {
			t.Errorf("parseID(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "1-", "-1", "1-2-3", "1.5-0", "18446744073709551616-0"} {
		if _, err := parseID(s); err == nil {
			t.Errorf("parseID(%q) succeeded", s)
		}
	}
	if got := id(5, 0).prev(); got != id(4, math.MaxUint64) {
		t.Errorf("prev of 5-0 is %v", got)
	}
	if got := id(4, math.MaxUint64).next(); got != id(5, 0) {
		t.Errorf("next of 4-max is %v", got)
	}
	if (entryID{}).prev() != (entryID{}) || maxID.next() != maxID {
		t.Error("prev of 0-0 or next of the largest id moved")
	}
}

func TestRangeSet(t *testing.T) {
	r := func(a, b uint64) idRange { return idRange{id(a, 0), id(b, 0)} }
	s := rangeSet{r(1, 3), r(10, 12)}
	for _, c := range []struct {
		id   entryID
		want bool
	}{{id(0, 5), false}, {id(1, 0), true}, {id(2, 7), true}, {id(3, 0), true}, {id(3, 1), false}, {id(11, 0), true}, {id(13, 0), false}} {
		if got := s.contains(c.id); got != c.want {
			t.Errorf("%v contains %v: %v", s, c.id, got)
		}
	}
	// Overlapping, touching (3-0 then 3-1) and apart.
	u := s.union(rangeSet{idRange{id(3, 1), id(5, 0)}, r(11, 20), r(30, 31)})
	if want := (rangeSet{r(1, 5), r(10, 20), r(30, 31)}); !reflect.DeepEqual(u, want) {
		t.Errorf("union: %v, want %v", u, want)
	}
	if got := u.above(id(4, 0)); !reflect.DeepEqual(got, rangeSet{idRange{id(4, 1), id(5, 0)}, r(10, 20), r(30, 31)}) {
		t.Errorf("above 4-0: %v", got)
	}
	if got := u.above(id(20, 0)); !reflect.DeepEqual(got, rangeSet{r(30, 31)}) {
		t.Errorf("above 20-0: %v", got)
	}
	a := appendRange(nil, r(1, 2))
	a = appendRange(a, idRange{id(2, 1), id(4, 0)})
	a = appendRange(a, r(6, 7))
	a = appendRange(a, r(0, 1))
	if want := (rangeSet{r(0, 4), r(6, 7)}); !reflect.DeepEqual(a, want) {
		t.Errorf("appendRange: %v, want %v", a, want)
	}
}

func TestStateEncodings(t *testing.T) {
	p := plainState{stream: "s", pos: id(5, 6), bounded: true, end: id(9, 0)}
	if got, err := decodePlain(p.encode()); err != nil || got != p {
		t.Errorf("plain state: %+v, %v", got, err)
	}
	g := groupState{stream: "s", flags: flagFresh | flagReadPending, floor: id(3, 0), ranges: rangeSet{{id(4, 0), id(5, 0)}}}
	if got, err := decodeGroup(g.encode()); err != nil || !reflect.DeepEqual(got, g) {
		t.Errorf("group state: %+v, %v", got, err)
	}
	e := enumState{stream: "s", group: "g", floor: id(1, 1), skip: rangeSet{{id(2, 0), id(2, 9)}}, consumers: []string{"eddy-0", "eddy-1"}}
	if got, err := decodeEnum(e.encode()); err != nil || !reflect.DeepEqual(got, e) {
		t.Errorf("enumerator state: %+v, %v", got, err)
	}
	ev := goEvent{floor: id(7, 0), skip: rangeSet{{id(8, 0), id(9, 0)}}, autoAck: true}
	if kind, got, err := decodeEvent(ev.encode()); err != nil || kind != eventGo || !reflect.DeepEqual(got, ev) {
		t.Errorf("go event: %c %+v, %v", kind, got, err)
	}
	if kind, got, err := decodeEvent(encodeFloor(id(7, 1))); err != nil || kind != eventFloor || got.floor != id(7, 1) {
		t.Errorf("floor event: %c %+v, %v", kind, got, err)
	}
	for _, b := range [][]byte{nil, {1}, {2, kindPlain}, p.encode()[:4], append(p.encode(), 0)} {
		if _, err := decodePlain(b); err == nil {
			t.Errorf("decodePlain(%v) succeeded", b)
		}
	}
	if _, err := decodeGroup(p.encode()); err == nil {
		t.Error("a plain state decoded as a group state")
	}
}

// TestReaderFloor prunes a reader's consumed ranges and skip set when a
// floor comes, and keeps what lies above it.
func TestReaderFloor(t *testing.T) {
	r := &reader[string]{cfg: &config{group: "g"}, group: true}
	sp := &readSplit{id: "eddy-0", group: groupState{ranges: rangeSet{{id(1, 0), id(2, 0)}, {id(5, 0), id(6, 0)}}}}
	r.splits = []*readSplit{sp}
	if err := r.HandleEvent(goEvent{floor: id(0, 5), skip: rangeSet{{id(3, 0), id(4, 0)}, {id(8, 0), id(9, 0)}}}.encode()); err != nil {
		t.Fatal(err)
	}
	if !r.ready || len(sp.group.ranges) != 0 || sp.group.floor != id(0, 5) {
		t.Fatalf("after go: ready %v, ranges %v, floor %v; want ready, none, 0-5", r.ready, sp.group.ranges, sp.group.floor)
	}
	sp.group.ranges = rangeSet{{id(5, 0), id(6, 0)}, {id(10, 0), id(11, 0)}}
	if err := r.HandleEvent(encodeFloor(id(5, 3))); err != nil {
		t.Fatal(err)
	}
	if want := (rangeSet{{id(5, 4), id(6, 0)}, {id(10, 0), id(11, 0)}}); !reflect.DeepEqual(sp.group.ranges, want) || sp.group.floor != id(5, 3) {
		t.Errorf("ranges %v floor %v, want %v and 5-3", sp.group.ranges, sp.group.floor, want)
	}
	if want := (rangeSet{{id(8, 0), id(9, 0)}}); !reflect.DeepEqual(r.skip, want) {
		t.Errorf("skip %v, want %v", r.skip, want)
	}
	// A lower floor changes nothing.
	if err := r.HandleEvent(encodeFloor(id(1, 0))); err != nil || sp.group.floor != id(5, 3) {
		t.Errorf("a lower floor moved the split's floor to %v (%v)", sp.group.floor, err)
	}
}

type logCtx struct{ log *slog.Logger }

func (logCtx) SinkName() string      { return "redis out" }
func (logCtx) Subtask() int          { return 0 }
func (logCtx) Parallelism() int      { return 1 }
func (logCtx) ProcessingTime() int64 { return 0 }
func (c logCtx) Log() *slog.Logger   { return c.log }

// TestWarnsWithoutCheckpoints stages records in the exactly-once committer
// with no checkpoint's barrier passing: once checkpointWarning has passed
// it warns, naming 'sink.delivery-guarantee' and the two ways out; a
// barrier starts the wait again.
func TestWarnsWithoutCheckpoints(t *testing.T) {
	var logs bytes.Buffer
	clock := time.Unix(1000, 0)
	c := &committer[string]{cfg: &config{name: "out", stream: "OUT"}, ctx: logCtx{slog.New(slog.NewTextHandler(&logs, nil))}, now: func() time.Time { return clock }, since: clock}
	c.warnIfNoCheckpoint(10)
	clock = clock.Add(checkpointWarning / 2)
	c.warnIfNoCheckpoint(300)
	if logs.Len() != 0 {
		t.Fatalf("warned before %s without a checkpoint: %s", checkpointWarning, logs.String())
	}
	clock = clock.Add(checkpointWarning)
	c.warnIfNoCheckpoint(513)
	c.warnIfNoCheckpoint(600)
	got := logs.String()
	for _, want := range []string{"sink.delivery-guarantee", "enable checkpointing", "at-least-once", "513 records"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the warning %q does not say %q", got, want)
		}
	}
	if n := strings.Count(got, "level=WARN"); n != 1 {
		t.Fatalf("warned %d times, want once: %s", n, got)
	}
	logs.Reset()
	if err := c.PreCommit(&redisTx{}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(checkpointWarning / 2)
	c.warnIfNoCheckpoint(700)
	if logs.Len() != 0 {
		t.Fatalf("warned though a checkpoint passed %s ago: %s", checkpointWarning/2, logs.String())
	}
}

var _ connector.CheckpointListener = (*reader[string])(nil)
var _ connector.ReaderEventHandler = (*reader[string])(nil)
