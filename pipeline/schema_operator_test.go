package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql/types"
	"github.com/eddystream/eddy/state"
)

// heapValue is the state of one sink table as the heap backend keeps it:
// the value Update was given itself, not an encoding of it.
type heapValue struct {
	v  sinkTable
	ok bool
}

func (h *heapValue) Value() (sinkTable, bool) { return h.v, h.ok }
func (h *heapValue) Update(v sinkTable)       { h.v, h.ok = v, true }
func (h *heapValue) Clear()                   { h.v, h.ok = sinkTable{}, false }

// TestSchemaStateSnapshot takes a checkpoint of the schema operator's
// state as the heap backend does, freezing the stored value at the
// barrier and encoding it later, after the operator has handled a schema
// change that followed the barrier: the checkpoint holds the state at the
// barrier. Restored from it, the operator handles the schema changes and
// the rows after the barrier again, as a source restored from the
// checkpoint sends them.
func TestSchemaStateSnapshot(t *testing.T) {
	def, events, err := parseCase(`pipeline:
  schema.change.behavior: evolve
---
schema db.a ROW<id INT NOT NULL, name STRING, amount DECIMAL(8, 2) NOT NULL> key=id
+I db.a 1, x, 1.50
schema db.a ROW<id INT NOT NULL, name STRING, total DECIMAL(8, 2) NOT NULL> key=id rename=amount:total
+I db.a 2, y, 2.50
schema db.a ROW<id INT NOT NULL, name STRING, total DECIMAL(8, 2) NOT NULL, note STRING> key=id
+I db.a 3, z, 3.50, three
`)
	if err != nil {
		t.Fatal(err)
	}
	_, checkpoint := checkpointAt(t, def, events, 2)
	restored, _, err := schemaCodec.Decode(checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	out, err := processAll(newOperator(def, &heapValue{v: restored, ok: true}), events[2:])
	if err != nil {
		t.Fatalf("restored from the barrier: %v", err)
	}
	want := []string{
		"ALTER TABLE db.a RENAME COLUMN amount TO total",
		"+I db.a[2, y, 2.50]",
		"ALTER TABLE db.a ADD COLUMN note STRING",
		"+I db.a[3, z, 3.50, three]",
	}
	if got := strings.Join(out, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("restored from the barrier, the sink got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestSchemaStateSnapshotDrop checks, as TestSchemaStateSnapshot does,
// that a dropped source table leaves the state frozen at an earlier
// barrier as it was; under lenient the sink table and its state stay.
func TestSchemaStateSnapshotDrop(t *testing.T) {
	def, events, err := parseCase(`pipeline:
  schema.change.behavior: lenient
---
schema db.a ROW<id INT NOT NULL, v STRING> key=id
+I db.a 1, x
drop db.a
`)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := checkpointAt(t, def, events, 2)
	if now, ok := st.Value(); !ok || len(now.Sources) != 0 {
		t.Errorf("after the drop the state is %+v (%v), want the sink table without sources", now, ok)
	}
}

// checkpointAt runs an operator of def over events, with a checkpoint
// barrier after the first n: it freezes the stored state there, as the heap
// backend does, and encodes it once the operator has handled the other
// events, checking that the encoding is the state at the barrier. It
// returns the operator's state and the checkpoint.
func checkpointAt(t *testing.T, def *Definition, events []Event, n int) (*heapValue, []byte) {
	t.Helper()
	st := &heapValue{}
	o := newOperator(def, st)
	if _, err := processAll(o, events[:n]); err != nil {
		t.Fatal(err)
	}
	frozen, _ := st.Value()
	atBarrier := schemaCodec.Append(nil, frozen)
	if _, err := processAll(o, events[n:]); err != nil {
		t.Fatal(err)
	}
	checkpoint := schemaCodec.Append(nil, frozen)
	if !bytes.Equal(checkpoint, atBarrier) {
		t.Errorf("the state frozen at the barrier changed after it:\n%s\nat the barrier:\n%s", checkpoint, atBarrier)
	}
	return st, checkpoint
}

// schemaCodec is the codec of the schema operator's state.
var schemaCodec = state.JSONCodec[sinkTable]()

// newOperator returns a schema operator of a definition, opened on st.
func newOperator(def *Definition, st state.Value[sinkTable]) *schemaOperator {
	return &schemaOperator{behavior: def.Behavior, applies: def.SchemaChanges, tables: st, arena: types.NewArena(0), cache: map[string]*cachedTable{}}
}

// processAll has o handle events, each routed to its own table, and
// returns what the sink gets, as FormatEvent writes it.
func processAll(o *schemaOperator, events []Event) ([]string, error) {
	var out []string
	for _, e := range events {
		err := o.process(e.Table.String(), routed{Source: e.Table, Event: e}, func(e Event) { out = append(out, FormatEvent(e)) })
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
