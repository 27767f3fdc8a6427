package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	icebergo "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Snapshot summary properties eddy sets on its commits.
const (
	// summaryJobID is the id of the eddy job that committed the snapshot.
	summaryJobID = "eddy.job-id"
	// summaryCheckpointID is the id of the checkpoint whose files the
	// snapshot commits.
	summaryCheckpointID = "eddy.checkpoint-id"
)

// commitFiles commits data and delete files to tbl in one snapshot (a row
// delta: the deletes apply to rows of earlier snapshots, and position
// deletes also to rows of the data files of the same snapshot) with the
// snapshot summary properties summary (summaryJobID, summaryCheckpointID,
// ...). It returns the table as committed. Zero fileMetas (Path "", what
// a writer that got no rows returns) are skipped; with no files it commits
// nothing and returns tbl.
func commitFiles(ctx context.Context, tbl *table.Table, data, deletes []fileMeta, summary map[string]string) (*table.Table, error) {
	data, deletes = withoutEmpty(data), withoutEmpty(deletes)
	if len(data) == 0 && len(deletes) == 0 {
		return tbl, nil
	}
	name := strings.Join(tbl.Identifier(), ".")
	spec := tbl.Spec()
	dataFiles := make([]icebergo.DataFile, 0, len(data))
	for i := range data {
		if data[i].Content != contentData {
			return nil, fmt.Errorf("iceberg table %s: committing %s as a data file, but it holds %s", name, data[i].Path, data[i].Content)
		}
		df, err := data[i].dataFile(spec)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: %w", name, err)
		}
		dataFiles = append(dataFiles, df)
	}
	deleteFiles := make([]icebergo.DataFile, 0, len(deletes))
	for i := range deletes {
		if deletes[i].Content == contentData {
			return nil, fmt.Errorf("iceberg table %s: committing the data file %s as a delete file", name, deletes[i].Path)
		}
		if deletes[i].Content == contentPositionDeletes && tbl.Metadata().Version() >= 3 {
			return nil, fmt.Errorf("iceberg table %s has format version %d, whose position deletes are deletion vectors, which eddy does not write yet: use a table of format version 2", name, tbl.Metadata().Version())
		}
		df, err := deletes[i].dataFile(spec)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: %w", name, err)
		}
		deleteFiles = append(deleteFiles, df)
	}
	props := icebergo.Properties{}
	for k, v := range summary {
		props[k] = v
	}

	tx := tbl.NewTransaction()
	rd := tx.NewRowDelta(props)
	rd.AddRows(dataFiles...)
	rd.AddDeletes(deleteFiles...)
	if err := rd.Commit(ctx); err != nil {
		return nil, fmt.Errorf("iceberg table %s: staging %d data and %d delete files: %w", name, len(dataFiles), len(deleteFiles), err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: committing %d data and %d delete files: %w", name, len(dataFiles), len(deleteFiles), err)
	}
	return committed, nil
}

// withoutEmpty returns ms without its zero fileMetas (Path "").
func withoutEmpty(ms []fileMeta) []fileMeta {
	out := ms[:0:0]
	for _, m := range ms {
		if m.Path != "" {
			out = append(out, m)
		}
	}
	return out
}

// committedCheckpoint returns the highest checkpoint id (summaryCheckpointID)
// among the snapshots of tbl's current snapshot and its ancestors that the
// job jobID committed, and whether there is one: a checkpoint at or below
// it is already in the table and must not be committed again.
func committedCheckpoint(tbl *table.Table, jobID string) (int64, bool) {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return 0, false
	}
	md := tbl.Metadata()
	var best int64
	found := false
	for _, s := range table.AncestorsOf(cur.SnapshotID, md.SnapshotByID) {
		if s.Summary == nil || s.Summary.Properties[summaryJobID] != jobID {
			continue
		}
		id, err := strconv.ParseInt(s.Summary.Properties[summaryCheckpointID], 10, 64)
		if err != nil {
			continue
		}
		if !found || id > best {
			best, found = id, true
		}
	}
	return best, found
}

// removeFiles removes files eddy wrote but will not commit (of an aborted
// checkpoint). Files already gone are no error; the error joins those of
// the files that could not be removed.
func removeFiles(fsys icebergio.IO, paths []string) error {
	var errs []error
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := fsys.Remove(p); err != nil && !isNotExist(err) {
			errs = append(errs, fmt.Errorf("removing the uncommitted Iceberg file %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
