package connector

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// Table describes a table of eddy's SQL that a connector reads or writes.
// A factory asked for a table (Context.Table set) makes a
// Source[changelog.Change[types.Row]] or a
// Sink[changelog.Change[types.Row]] whose rows have the type Schema; a
// source of an append-only table emits insertions (+I) only and need not
// implement ChangelogSource.
type Table struct {
	// Name is the table's name in eddy's SQL (as CREATE TABLE wrote it,
	// without catalog or database), for connectors that name what they
	// read or write after the table; empty if the table has none.
	Name string
	// Schema is the row type of the table's physical columns, in the order
	// of CREATE TABLE.
	Schema *types.RowType
	// PrimaryKey holds the indexes in Schema of the primary key's columns
	// (PRIMARY KEY ... NOT ENFORCED), empty if the table has none.
	PrimaryKey []int
	// PartitionKeys holds the indexes in Schema of the PARTITIONED BY
	// columns, empty if the table is not partitioned.
	PartitionKeys []int
	// Metadata lists the metadata keys ('METADATA FROM ...') a source is
	// asked to append to each row after the physical columns, in order,
	// with their types in MetadataTypes. A factory that does not know a key
	// fails with an error listing the keys it offers.
	Metadata      []string
	MetadataTypes []types.Type
}

// RowType returns the type of the rows a source of t emits: the physical
// columns followed by the metadata columns. A metadata field is named by
// its key, or, where a column already has that name ('id' metadata beside
// an id column), by its key and "$metadata" (and a number if need be).
func (t *Table) RowType() *types.RowType {
	if len(t.Metadata) == 0 {
		return t.Schema
	}
	fs := append([]types.Field(nil), t.Schema.Fields()...)
	taken := map[string]bool{}
	for _, f := range fs {
		taken[f.Name] = true
	}
	for i, k := range t.Metadata {
		name := k
		for n := 1; taken[name]; n++ {
			name = k + "$metadata"
			if n > 1 {
				name += strconv.Itoa(n)
			}
		}
		taken[name] = true
		fs = append(fs, types.F(name, t.MetadataTypes[i]))
	}
	return types.MustRowType(fs...)
}

// Column returns the index of the physical column called name, or -1.
func (t *Table) Column(name string) int {
	i, ok := t.Schema.Index(name)
	if !ok {
		return -1
	}
	return i
}

// TableRecord is the Go type of the records of a table's source or sink.
type TableRecord = changelog.Change[types.Row]

// OpenTableSource validates options against the connector name's spec and
// makes a source of the table t.
func OpenTableSource(r *Registry, name string, options map[string]string, t *Table) (Source[TableRecord], error) {
	f, opts, err := r.validate(name, options, false)
	if err != nil {
		return nil, err
	}
	sf, ok := f.(SourceFactory)
	if !ok || f.Spec().Kind&SourceKind == 0 {
		return nil, fmt.Errorf("connector %q is a %v and cannot be read: use it as the target of INSERT INTO only", name, f.Spec().Kind)
	}
	v, err := sf.NewSource(Context{Name: name, Options: opts, RecordType: reflect.TypeFor[TableRecord](), Registry: r, Table: t})
	return typed(name, "source of a table", v, err, unboxSource[TableRecord])
}

// OpenTableSink validates options against the connector name's spec and
// makes a sink of the table t.
func OpenTableSink(r *Registry, name string, options map[string]string, t *Table) (Sink[TableRecord], error) {
	f, opts, err := r.validate(name, options, false)
	if err != nil {
		return nil, err
	}
	sf, ok := f.(SinkFactory)
	if !ok || f.Spec().Kind&SinkKind == 0 {
		return nil, fmt.Errorf("connector %q is a %v and cannot be written: read it in a query only", name, f.Spec().Kind)
	}
	v, err := sf.NewSink(Context{Name: name, Options: opts, RecordType: reflect.TypeFor[TableRecord](), Registry: r, Table: t})
	return typed(name, "sink of a table", v, err, boxSink[TableRecord])
}

// UnknownMetadata returns the error of a factory asked for a metadata key
// it does not offer.
func UnknownMetadata(connector, key string, offered ...string) error {
	if len(offered) == 0 {
		return fmt.Errorf("connector %q offers no metadata: remove the METADATA column %q", connector, key)
	}
	return fmt.Errorf("connector %q offers no metadata %q; it offers %s", connector, key, strings.Join(offered, ", "))
}

// Validate checks options (without 'connector') against the spec of the
// connector name and of the format they choose, as opening it would: an
// *OptionError names the option at fault.
func (r *Registry) Validate(name string, options map[string]string) error {
	_, _, err := r.validate(name, options, false)
	return err
}

// OpenTableDecoder validates options against the format name's spec and
// makes a decoder of the rows of table t (for a connector that reads
// messages of a format, or a test of a format).
func OpenTableDecoder(r *Registry, name string, options map[string]string, t *Table) (Decoder[TableRecord], error) {
	return openDecoder[TableRecord](r, name, options, reflect.TypeFor[TableRecord](), t)
}

// OpenTableEncoder validates options against the format name's spec and
// makes an encoder of the rows of table t.
func OpenTableEncoder(r *Registry, name string, options map[string]string, t *Table) (Encoder[TableRecord], error) {
	return openEncoder[TableRecord](r, name, options, reflect.TypeFor[TableRecord](), t)
}

// ProjectableSource is implemented by sources of tables that can emit only
// some fields of their rows, so that a query reads no more than it uses.
type ProjectableSource interface {
	// ProjectFields returns a source whose rows hold the fields at paths, in
	// order: a path is the index of a column of the table's rows (physical
	// then metadata columns), followed by the indexes of fields of nested
	// ROW values. A path ending inside a ROW that is NULL gives NULL. It
	// returns false if the source cannot project so.
	ProjectFields(paths [][]int) (Source[TableRecord], bool)
}

// TransientRowSource is implemented by sources of tables that can write
// each row into memory they reuse for the next one. The planner asks for
// such a source when whatever reads its rows copies what it keeps of a row
// before the source writes the next: a projection that runs in the source
// operator (eddy.TransformInSource). A source returned by ProjectFields may
// implement it too.
type TransientRowSource interface {
	// TransientRows returns the source writing its rows so.
	TransientRows() Source[TableRecord]
}
