package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// A commit that replaces deletion vectors, or skips iceberg-go's
	// checks, is not retried by iceberg-go when another commit comes
	// first: it is built again on the table as it then is.
	for attempt := 1; ; attempt++ {
		committed, err := commitFilesOnce(ctx, tbl, data, deletes, summary)
		if err == nil || !errors.Is(err, table.ErrCommitFailed) || attempt == commitAttempts {
			return committed, err
		}
		if rerr := tbl.Refresh(ctx); rerr != nil {
			return nil, errors.Join(err, fmt.Errorf("iceberg table %s: loading it again to retry the commit: %w", strings.Join(tbl.Identifier(), "."), rerr))
		}
	}
}

// commitConflict tells whether err says that a schema change's commit
// lost a race with another commit and changed nothing (optimistic
// concurrency): it wraps table.ErrCommitFailed, or it is a requirement of
// the commit that the catalog found broken. iceberg-go's SQL catalog
// checks a commit's requirements before it writes anything, but returns
// their failure ("requirement failed: branch "main" has changed: ...")
// without table.ErrCommitFailed, so that message is taken as a conflict
// too.
func commitConflict(err error) bool {
	return err != nil && (errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed:"))
}

// commitAttempts is how many times commitFiles builds and tries a commit
// that another commit got ahead of.
const commitAttempts = 4

// commitFilesOnce makes one attempt of commitFiles.
func commitFilesOnce(ctx context.Context, tbl *table.Table, data, deletes []fileMeta, summary map[string]string) (*table.Table, error) {
	name := strings.Join(tbl.Identifier(), ".")
	spec, sc := tbl.Spec(), tbl.Schema()
	v3 := tbl.Metadata().Version() >= 3
	dataFiles := make([]icebergo.DataFile, 0, len(data))
	for i := range data {
		if data[i].Content != contentData {
			return nil, fmt.Errorf("iceberg table %s: committing %s as a data file, but it holds %s", name, data[i].Path, data[i].Content)
		}
		df, err := data[i].dataFile(spec, sc)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: %w", name, err)
		}
		dataFiles = append(dataFiles, df)
	}
	added := make(map[string]bool, len(data))
	for i := range data {
		added[data[i].Path] = true
	}
	// iceberg-go checks that the data files position deletes name are in
	// the table before the commit, so a delete of a row added in the same
	// snapshot fails that check. A Parquet position-delete file need not
	// name its data file; a deletion vector must, and such a commit skips
	// the check (see commitUnchecked).
	sameSnapshotDV, cloned := false, false
	deleteFiles := make([]icebergo.DataFile, 0, len(deletes))
	for i := range deletes {
		if ref := deletes[i].ReferencedDataFile; ref != "" && added[ref] {
			if deletes[i].isDeletionVector() {
				sameSnapshotDV = true
			} else {
				if !cloned {
					deletes, cloned = slices.Clone(deletes), true
				}
				deletes[i].ReferencedDataFile = ""
			}
		}
		if deletes[i].Content == contentData {
			return nil, fmt.Errorf("iceberg table %s: committing the data file %s as a delete file", name, deletes[i].Path)
		}
		if deletes[i].Content == contentPositionDeletes && v3 != deletes[i].isDeletionVector() {
			if v3 {
				return nil, fmt.Errorf("iceberg table %s has format version %d, whose position deletes are deletion vectors, but %s is a Parquet position-delete file: the table's format version changed while the job ran; restart the job from its last checkpoint", name, tbl.Metadata().Version(), deletes[i].Path)
			}
			return nil, fmt.Errorf("iceberg table %s has format version %d, which has no deletion vectors, but %s is one: the table's format version changed while the job ran; restart the job from its last checkpoint", name, tbl.Metadata().Version(), deletes[i].Path)
		}
		df, err := deletes[i].dataFile(spec, sc)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: %w", name, err)
		}
		deleteFiles = append(deleteFiles, df)
	}
	var removed []icebergo.DataFile
	if v3 {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("iceberg table %s: opening its file IO at %s: %w", name, tbl.Location(), err)
		}
		wfs, ok := fsys.(icebergio.WriteFileIO)
		if !ok {
			return nil, fmt.Errorf("iceberg table %s: the file IO of %s (%T) cannot write files: use a writable warehouse", name, tbl.Location(), fsys)
		}
		if deleteFiles, removed, err = mergeDeletionVectors(ctx, tbl, wfs, deleteFiles); err != nil {
			return nil, fmt.Errorf("iceberg table %s: merging deletion vectors: %w", name, err)
		}
	}
	props := icebergo.Properties{}
	for k, v := range summary {
		props[k] = v
	}

	tx := tbl.NewTransaction()
	rd := tx.NewRowDelta(props)
	rd.AddRows(dataFiles...)
	rd.AddDeletes(deleteFiles...)
	if len(removed) > 0 {
		rd.RemoveDeletes(removed...)
	}
	if err := rd.Commit(ctx); err != nil {
		return nil, fmt.Errorf("iceberg table %s: staging %d data and %d delete files: %w", name, len(dataFiles), len(deleteFiles), err)
	}
	if sameSnapshotDV {
		return commitUnchecked(ctx, tbl, tx, len(dataFiles), len(deleteFiles))
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: committing %d data and %d delete files: %w", name, len(dataFiles), len(deleteFiles), err)
	}
	return committed, nil
}

// commitUnchecked commits the staged transaction tx of tbl through the
// catalog tbl was loaded from, without iceberg-go's conflict checks: the
// commit holds deletion vectors of data files it adds itself, which those
// checks wrongly take for files a concurrent commit removed. The commit is
// still fenced by the table's current snapshot (another commit in between
// fails it), so there is nothing a conflict check could find.
func commitUnchecked(ctx context.Context, tbl *table.Table, tx *table.Transaction, nData, nDeletes int) (*table.Table, error) {
	name := strings.Join(tbl.Identifier(), ".")
	cat, ok := catalogOf(tbl)
	if !ok {
		return nil, fmt.Errorf("iceberg table %s: committing deletion vectors of data files of the same snapshot needs the catalog the table was loaded from, which eddy does not know: load the table with loadOrCreateTable", name)
	}
	tc, err := tx.TableCommit()
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: preparing the commit of %d data and %d delete files: %w", name, nData, nDeletes, err)
	}
	if _, _, err := cat.CommitTable(ctx, tc.Identifier, tc.Requirements, tc.Updates); err != nil {
		return nil, fmt.Errorf("iceberg table %s: committing %d data and %d delete files: %w", name, nData, nDeletes, err)
	}
	tx.MarkCommitted()
	committed, err := cat.LoadTable(ctx, tbl.Identifier())
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: loading it after a commit: %w", name, err)
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
