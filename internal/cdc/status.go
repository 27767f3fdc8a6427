package cdc

// AddStatus adds the snapshot's progress to an enumerator's status report
// (connector.StatusReporter): the phase ("discovering", "snapshot", then
// stream, the name of the stream split's phase, or "done" after a
// snapshot-only startup), the numbers of tables and chunks in all, read and,
// for chunks, handed out and not read yet, the rows read, and per table its
// chunks read of all.
func (s *Chunks[C]) AddStatus(m map[string]any, stream string) {
	switch {
	case !s.started:
		m["phase"] = "discovering"
	case s.streamAssigned || (s.total == 0 && s.splits.Stream != nil):
		m["phase"] = stream
	case len(s.finished) >= s.total && s.splits.Stream == nil:
		m["phase"] = "done"
	default:
		m["phase"] = "snapshot"
	}
	tables := s.progress.tables()
	perTable := make(map[string]any, len(tables))
	done, rows := 0, int64(0)
	for _, t := range tables {
		if t.Done() {
			done++
		}
		rows += t.Rows
		perTable[t.Table] = map[string]any{"chunks": t.Chunks, "chunksDone": t.Read, "records": t.Rows}
	}
	m["snapshotTablesTotal"] = len(tables)
	m["snapshotTablesDone"] = done
	m["snapshotChunksTotal"] = s.total
	m["snapshotChunksDone"] = len(s.finished)
	m["snapshotChunksInFlight"] = max(s.total-len(s.remaining)-len(s.finished), 0)
	m["snapshotRecords"] = rows
	m["snapshotTables"] = perTable
}
