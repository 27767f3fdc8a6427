package cdc

import (
	"slices"
	"testing"
)

// TestChunksStatus: the status report follows the phase and the chunks
// handed out, read and not read, in all and per table.
func TestChunksStatus(t *testing.T) {
	ctx := newEnumCtx(1, false)
	s := NewChunks(ctx, Splits[*testChunk]{Codec: testCodec, Stream: streamSplit})
	status := func() map[string]any {
		m := map[string]any{}
		s.AddStatus(m, "wal")
		return m
	}
	if p := status()["phase"]; p != "discovering" {
		t.Fatalf("phase before the chunks are known = %v", p)
	}
	a, b := testChunks("db.a", 2), testChunks("db.b", 1)
	s.Start(slices.Concat(a, b))
	s.Request(0)
	s.Request(0)
	m := status()
	if m["phase"] != "snapshot" || m["snapshotChunksTotal"] != 3 || m["snapshotChunksInFlight"] != 2 || m["snapshotChunksDone"] != 0 || m["snapshotTablesTotal"] != 2 {
		t.Fatalf("status with two chunks handed out: %v", m)
	}
	if _, err := s.HandleEvent(0, done(a[0], 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HandleEvent(0, done(a[1], 6)); err != nil {
		t.Fatal(err)
	}
	m = status()
	ta := m["snapshotTables"].(map[string]any)["db.a"].(map[string]any)
	tb := m["snapshotTables"].(map[string]any)["db.b"].(map[string]any)
	if m["snapshotChunksDone"] != 2 || m["snapshotChunksInFlight"] != 0 || m["snapshotTablesDone"] != 1 || m["snapshotRecords"] != int64(10) ||
		ta["chunksDone"] != 2 || ta["chunks"] != 2 || tb["chunksDone"] != 0 || tb["chunks"] != 1 {
		t.Fatalf("status with one table read: %v", m)
	}
	s.Request(0)
	if _, err := s.HandleEvent(0, done(b[0], 1)); err != nil {
		t.Fatal(err)
	}
	s.Request(0)
	if m = status(); m["phase"] != "wal" || m["snapshotChunksDone"] != 3 || m["snapshotTablesDone"] != 2 {
		t.Fatalf("status after the snapshot: %v", m)
	}
}
