package iceberg

import (
	"fmt"

	icebergo "github.com/apache/iceberg-go"
)

// Contents of the files a fileMeta describes (fileMeta.Content).
const (
	contentData            = "data"
	contentPositionDeletes = "position-deletes"
	contentEqualityDeletes = "equality-deletes"
)

// fileMeta describes a Parquet file eddy wrote into an Iceberg table's
// location but has not necessarily committed yet: a data file, a
// position-delete file or an equality-delete file, with what a manifest
// entry records of it. fileMetas travel in checkpoints (as JSON) between
// the writers and the committer, so the JSON field names are stable.
type fileMeta struct {
	// Content is contentData, contentPositionDeletes or
	// contentEqualityDeletes.
	Content string `json:"content"`
	// Path is the file's full location (file:///..., s3://...).
	Path string `json:"path"`
	// Format is the file format, "PARQUET".
	Format string `json:"format"`
	// RecordCount is the number of rows (of deletes, for a delete file).
	RecordCount int64 `json:"record_count"`
	// FileSize is the file's size in bytes.
	FileSize int64 `json:"file_size"`
	// SpecID is the id of the partition spec the file was written for.
	SpecID int `json:"spec_id"`
	// Partition is the file's partition tuple (a partitionKey: each
	// field's presence and Iceberg single-value serialisation, in spec
	// order), empty for an unpartitioned table. Bytes keep the values'
	// types through JSON; the spec gives them back (dataFile).
	Partition []byte `json:"partition,omitempty"`
	// ColumnSizes, ValueCounts, NullValueCounts and NaNValueCounts are
	// column metrics by field id.
	ColumnSizes     map[int]int64 `json:"column_sizes,omitempty"`
	ValueCounts     map[int]int64 `json:"value_counts,omitempty"`
	NullValueCounts map[int]int64 `json:"null_value_counts,omitempty"`
	NaNValueCounts  map[int]int64 `json:"nan_value_counts,omitempty"`
	// LowerBounds and UpperBounds are column bounds by field id, in
	// Iceberg's single-value binary serialisation.
	LowerBounds map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds map[int][]byte `json:"upper_bounds,omitempty"`
	// SplitOffsets are the offsets of the file's row groups.
	SplitOffsets []int64 `json:"split_offsets,omitempty"`
	// ReferencedDataFile is, for a position-delete file whose deletes all
	// refer to one data file, that file's path.
	ReferencedDataFile string `json:"referenced_data_file,omitempty"`
	// EqualityIDs are the field ids an equality-delete file matches on.
	EqualityIDs []int `json:"equality_ids,omitempty"`
	// ContentOffset and ContentSize locate a deletion vector's blob in its
	// Puffin file (Format "PUFFIN", position deletes of format version 3).
	ContentOffset *int64 `json:"content_offset,omitempty"`
	ContentSize   *int64 `json:"content_size,omitempty"`
}

// isDeletionVector reports whether m is a deletion vector: position
// deletes of one data file in a Puffin file.
func (m *fileMeta) isDeletionVector() bool {
	return m.Content == contentPositionDeletes && m.Format == string(icebergo.PuffinFile)
}

// manifestContent returns the manifest entry content of m.Content.
func (m *fileMeta) manifestContent() (icebergo.ManifestEntryContent, error) {
	switch m.Content {
	case contentData:
		return icebergo.EntryContentData, nil
	case contentPositionDeletes:
		return icebergo.EntryContentPosDeletes, nil
	case contentEqualityDeletes:
		return icebergo.EntryContentEqDeletes, nil
	}
	return 0, fmt.Errorf("iceberg file %s: unknown content %q (want %q, %q or %q)", m.Path, m.Content, contentData, contentPositionDeletes, contentEqualityDeletes)
}

// dataFile builds the iceberg-go DataFile of m for a commit to a table
// whose partition spec with m's spec id is spec, over the schema sc. It
// fails when spec is another spec (the table's partitioning changed since
// the file was written).
func (m *fileMeta) dataFile(spec icebergo.PartitionSpec, sc *icebergo.Schema) (icebergo.DataFile, error) {
	return m.dataFileIn(spec, sc, nil)
}

// dataFileIn is dataFile with the partition values part (by field id)
// instead of those of m.Partition, when part is not nil.
func (m *fileMeta) dataFileIn(spec icebergo.PartitionSpec, sc *icebergo.Schema, part map[int]any) (icebergo.DataFile, error) {
	if spec.ID() != m.SpecID {
		return nil, fmt.Errorf("iceberg file %s was written for partition spec %d, not the table's spec %d: the table's partitioning changed while the job ran; restart the job from its last checkpoint", m.Path, m.SpecID, spec.ID())
	}
	content, err := m.manifestContent()
	if err != nil {
		return nil, err
	}
	if part == nil {
		part = map[int]any{}
	}
	if !spec.IsUnpartitioned() && len(part) == 0 {
		fields, err := specFieldTypes(spec, sc)
		if err != nil {
			return nil, fmt.Errorf("iceberg file %s: %w", m.Path, err)
		}
		if part, err = partitionValues(partitionKey(m.Partition), fields); err != nil {
			return nil, fmt.Errorf("iceberg file %s: %w", m.Path, err)
		}
	}
	b, err := icebergo.NewDataFileBuilder(spec, content, m.Path, icebergo.FileFormat(m.Format), part, nil, nil, m.RecordCount, m.FileSize)
	if err != nil {
		return nil, fmt.Errorf("iceberg file %s: describing it for the manifest: %w", m.Path, err)
	}
	if len(m.ColumnSizes) > 0 {
		b.ColumnSizes(m.ColumnSizes)
	}
	if len(m.ValueCounts) > 0 {
		b.ValueCounts(m.ValueCounts)
	}
	if len(m.NullValueCounts) > 0 {
		b.NullValueCounts(m.NullValueCounts)
	}
	if len(m.NaNValueCounts) > 0 {
		b.NaNValueCounts(m.NaNValueCounts)
	}
	if len(m.LowerBounds) > 0 {
		b.LowerBoundValues(m.LowerBounds)
	}
	if len(m.UpperBounds) > 0 {
		b.UpperBoundValues(m.UpperBounds)
	}
	if len(m.SplitOffsets) > 0 {
		b.SplitOffsets(m.SplitOffsets)
	}
	if m.ReferencedDataFile != "" {
		b.ReferencedDataFile(m.ReferencedDataFile)
	}
	if len(m.EqualityIDs) > 0 {
		b.EqualityFieldIDs(m.EqualityIDs)
	}
	if m.ContentOffset != nil {
		b.ContentOffset(*m.ContentOffset)
	}
	if m.ContentSize != nil {
		b.ContentSizeInBytes(*m.ContentSize)
	}
	return b.Build(), nil
}

// fileMetaOf records the manifest description df of the file eddy wrote
// (content is one of the content constants).
func fileMetaOf(df icebergo.DataFile, content string, specID int) fileMeta {
	m := fileMeta{
		Content:         content,
		Path:            df.FilePath(),
		Format:          string(df.FileFormat()),
		RecordCount:     df.Count(),
		FileSize:        df.FileSizeBytes(),
		SpecID:          specID,
		ColumnSizes:     df.ColumnSizes(),
		ValueCounts:     df.ValueCounts(),
		NullValueCounts: df.NullValueCounts(),
		NaNValueCounts:  df.NaNValueCounts(),
		LowerBounds:     df.LowerBoundValues(),
		UpperBounds:     df.UpperBoundValues(),
		SplitOffsets:    df.SplitOffsets(),
		EqualityIDs:     df.EqualityFieldIDs(),
		ContentOffset:   df.ContentOffset(),
		ContentSize:     df.ContentSizeInBytes(),
	}
	if ref := df.ReferencedDataFile(); ref != nil {
		m.ReferencedDataFile = *ref
	}
	return m
}
