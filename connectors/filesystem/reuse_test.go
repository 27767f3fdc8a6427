package filesystem

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/formats"
)

// TestPartFileSinkKeepsNoRecords checks that the writers of the sink,
// made by the registry or not, say they keep nothing of the records given
// to Write (connector.NonRetainingWriter): a source chained to the sink
// may then write its records into reused memory.
func TestPartFileSinkKeepsNoRecords(t *testing.T) {
	type rec struct{ N int }
	dir := t.TempDir()
	registered, err := connector.OpenSink[rec](connector.Default, "filesystem", map[string]string{"path": "file://" + dir, "format": "json"})
	if err != nil {
		t.Fatal(err)
	}
	for name, sink := range map[string]connector.Sink[rec]{
		"NewSink":  NewSink(SinkOptions{Dir: dir, Suffix: ".jsonl"}, formats.JSONEncoder[rec]),
		"registry": registered,
	} {
		ts, ok := sink.(connector.TransactionalSink[rec])
		if !ok {
			t.Fatalf("%s: the sink is not transactional", name)
		}
		w, err := ts.NewTransactionalWriter(testWriterContext{})
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := w.(connector.NonRetainingWriter); !ok || !r.RetainsNoRecords() {
			t.Errorf("%s: the writer does not say it keeps nothing of its records", name)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
