package filesystem

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// tableLayout is how the rows of a SQL table lie in the files of its
// directory: the data columns in the files, the partition columns in the
// names of the directories (Hive style, "dt=2020-01-01/hr=10").
type tableLayout struct {
	schema *types.RowType // every physical column
	data   *types.RowType // the columns in the files
	// dataCols and partCols are the indexes in schema of the data and
	// partition columns.
	dataCols, partCols []int
	defaultName        string // the directory name of a NULL or empty partition value
}

func newTableLayout(t *connector.Table, defaultName string) (*tableLayout, error) {
	l := &tableLayout{schema: t.Schema, partCols: t.PartitionKeys, defaultName: defaultName}
	isPart := map[int]bool{}
	for _, i := range t.PartitionKeys {
		isPart[i] = true
		if ft := t.Schema.FieldType(i); ft.IsConstructed() {
			return nil, fmt.Errorf("filesystem table: partition column %s is %s; a partition column must be of a scalar type", types.QuoteIdentifier(t.Schema.Field(i).Name), ft)
		}
	}
	var fs []types.Field
	for i, f := range t.Schema.Fields() {
		if !isPart[i] {
			l.dataCols = append(l.dataCols, i)
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("filesystem table: every column is a partition column; the files need at least one column of their own")
	}
	var err error
	if l.data, err = types.NewRowType(fs...); err != nil {
		return nil, fmt.Errorf("filesystem table: %w", err)
	}
	return l, nil
}

func (l *tableLayout) partitioned() bool { return len(l.partCols) > 0 }

// appendEscapedPartition appends a partition value escaped for a
// directory name as Hive escapes it: characters that are special in paths
// become %XX.
func appendEscapedPartition(dst, v []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range v {
		if c < 0x20 || strings.IndexByte("\"#%'*/:=?\\\x7f{[]^", c) >= 0 {
			dst = append(dst, '%', hex[c>>4], hex[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// partitionDirs names the partition directories of the rows of a table
// (of the full schema) that one writer writes: "dt=2020-01-01/hr=10". It
// remembers the values of the partition columns of the last row and their
// directory, as consecutive rows are mostly of one partition: a row of the
// same values costs a comparison of the columns' encodings. Not safe for
// concurrent use.
type partitionDirs struct {
	l *tableLayout
	// fixed says, per partition column, whether its value is in its slot
	// (a fixed-width type) rather than in bytes of its own.
	fixed []bool
	// The last row's partition values: null, the slot of a fixed-width
	// value, the bytes of another (key[start[k]:start[k+1]]).
	valid bool
	null  []bool
	slots []int64
	start []int
	key   []byte
	dir   string
	// Scratch space of the directory and of a value's text.
	buf, text []byte
}

func newPartitionDirs(l *tableLayout) *partitionDirs {
	n := len(l.partCols)
	p := &partitionDirs{l: l, fixed: make([]bool, n), null: make([]bool, n), slots: make([]int64, n), start: make([]int, n+1)}
	for k, i := range l.partCols {
		p.fixed[k] = l.schema.FieldType(i).IsFixed()
	}
	return p
}

// Dir returns the relative directory of the partition of row r.
func (p *partitionDirs) Dir(r types.Row) string {
	if !p.valid || !p.same(r) {
		p.remember(r)
		p.dir = p.l.partitionDir(r, &p.buf, &p.text)
		p.valid = true
	}
	return p.dir
}

// same reports whether the partition columns of r hold the values of the
// last row's.
func (p *partitionDirs) same(r types.Row) bool {
	for k, i := range p.l.partCols {
		null := r.IsNull(i)
		switch {
		case null != p.null[k]:
			return false
		case null:
		case p.fixed[k]:
			if r.Int64(i) != p.slots[k] { // the slot as it is
				return false
			}
		default:
			if r.BinaryString(i) != string(p.key[p.start[k]:p.start[k+1]]) { // the value's bytes
				return false
			}
		}
	}
	return true
}

// remember keeps the partition values of r.
func (p *partitionDirs) remember(r types.Row) {
	p.key = p.key[:0]
	for k, i := range p.l.partCols {
		p.start[k] = len(p.key)
		p.null[k] = r.IsNull(i)
		p.slots[k] = 0
		if !p.null[k] {
			if p.fixed[k] {
				p.slots[k] = r.Int64(i)
			} else {
				p.key = append(p.key, r.BinaryString(i)...)
			}
		}
	}
	p.start[len(p.l.partCols)] = len(p.key)
}

// partitionDir returns the relative directory of the partition of row r
// (of the full schema): "dt=2020-01-01/hr=10". *scratch and *text are
// scratch space, kept grown for the next call.
func (l *tableLayout) partitionDir(r types.Row, scratch, text *[]byte) string {
	buf := (*scratch)[:0]
	defer func() { *scratch = buf }()
	for k, i := range l.partCols {
		if k > 0 {
			buf = append(buf, filepath.Separator)
		}
		buf = append(buf, l.schema.Field(i).Name...)
		buf = append(buf, '=')
		if !r.IsNull(i) {
			*text = types.AppendText((*text)[:0], l.schema, r, i, nil)
			if len(*text) > 0 {
				buf = appendEscapedPartition(buf, *text)
				continue
			}
		}
		buf = append(buf, l.defaultName...)
	}
	// As filepath.Join: a column name may hold a separator or dots.
	return filepath.Clean(string(buf))
}

// partitionValues parses the partition values out of the path of a file
// below root; a column missing from the path is NULL.
func (l *tableLayout) partitionValues(root, file string) ([]types.Value, error) {
	rel, err := filepath.Rel(root, filepath.Dir(file))
	if err != nil {
		rel = filepath.Dir(file)
	}
	found := map[string]string{}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if k, v, ok := strings.Cut(seg, "="); ok {
			found[k] = v
		}
	}
	out := make([]types.Value, len(l.partCols))
	for j, i := range l.partCols {
		name := l.schema.Field(i).Name
		raw, ok := found[name]
		if !ok || raw == l.defaultName {
			continue
		}
		s, err := url.PathUnescape(raw)
		if err != nil {
			s = raw
		}
		v, err := types.ParseValue(l.schema.FieldType(i), s, nil)
		if err != nil {
			return nil, fmt.Errorf("partition %s=%s of %s: %w", name, raw, file, err)
		}
		out[j] = v
	}
	return out, nil
}

// tableSource reads the rows of a table from the files below a directory,
// adding the partition columns from the directory names.
type tableSource struct {
	connector.Source[connector.TableRecord]
	layout *tableLayout
	root   string
	mode   changelog.Mode
}

// ChangelogMode says what the table's format yields: insertions, or any
// change for a changelog format.
func (s *tableSource) ChangelogMode() changelog.Mode { return s.mode }

func (s *tableSource) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	r, err := s.Source.NewReader(ctx)
	if err != nil || !s.layout.partitioned() {
		return r, err
	}
	arena := types.NewArena(0)
	return &tableReader{Reader: r, src: s, w: types.NewRowWriter(s.layout.schema, arena), splits: map[string]*partSplit{}}, nil
}

// tableReader fills in the partition columns of the rows its reader emits.
type tableReader struct {
	connector.Reader[connector.TableRecord]
	src    *tableSource
	w      *types.RowWriter
	splits map[string]*partSplit
	err    error
}

func (r *tableReader) Read(out connector.Output[connector.TableRecord]) error {
	if err := r.Reader.Read(tableOutput{out, r}); err != nil {
		return err
	}
	return r.err
}

// NoMoreSplits passes the signal on.
func (r *tableReader) NoMoreSplits() {
	if h, ok := r.Reader.(connector.NoMoreSplitsHandler); ok {
		h.NoMoreSplits()
	}
}

type tableOutput struct {
	connector.Output[connector.TableRecord]
	r *tableReader
}

func (o tableOutput) Split(id string) connector.SplitOutput[connector.TableRecord] {
	if s, ok := o.r.splits[id]; ok {
		s.out = o.Output.Split(id)
		return s
	}
	vals, err := o.r.src.layout.partitionValues(o.r.src.root, id)
	if err != nil && o.r.err == nil {
		o.r.err = fmt.Errorf("filesystem table: %w", err)
	}
	s := &partSplit{id: id, out: o.Output.Split(id), r: o.r, values: vals}
	o.r.splits[id] = s
	return s
}

// partSplit is the output of one file of a partitioned table.
type partSplit struct {
	id     string
	out    connector.SplitOutput[connector.TableRecord]
	r      *tableReader
	values []types.Value
}

func (s *partSplit) full(c connector.TableRecord) (connector.TableRecord, bool) {
	l, w := s.r.src.layout, s.r.w
	w.Reset()
	for j, i := range l.dataCols {
		w.CopyField(i, c.Row, j)
	}
	for j, i := range l.partCols {
		if s.values == nil || s.values[j] == nil {
			w.SetNull(i)
		} else if err := w.SetValue(i, s.values[j]); err != nil {
			s.fail(err)
			return c, false
		}
	}
	return connector.TableRecord{Kind: c.Kind, Row: w.Finish()}, true
}

func (s *partSplit) fail(err error) {
	if s.r.err == nil {
		s.r.err = fmt.Errorf("filesystem table: %w", err)
	}
}

func (s *partSplit) Emit(c connector.TableRecord) {
	if f, ok := s.full(c); ok {
		s.out.Emit(f)
	}
}

func (s *partSplit) EmitAt(c connector.TableRecord, ts int64) {
	if f, ok := s.full(c); ok {
		s.out.EmitAt(f, ts)
	}
}

func (s *partSplit) Finish() {
	s.out.Finish()
	delete(s.r.splits, s.id)
}
