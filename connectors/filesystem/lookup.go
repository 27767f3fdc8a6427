package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// lookupOptions are the options of a table's lookups, Flink's names for a
// lookup source with a full cache.
var lookupOptions = []connector.Option{
	{Key: "lookup.cache", Type: connector.Enum, Default: "FULL", Values: []string{"FULL"},
		Description: "SQL tables: how a lookup join (JOIN t FOR SYSTEM_TIME AS OF s.proc_time ON ...) reads the table: 'FULL' loads every row of its files into memory, indexed by the join's columns, at the first lookup."},
	{Key: "lookup.full-cache.periodic-reload.interval", Type: connector.Duration,
		Description: "SQL tables: if set, a lookup join reloads the table's files when its rows are older than this (at the next lookup); otherwise it keeps the rows it loaded first."},
}

// lookupTableSource is the source of a table, whose rows can also be
// looked up by key (connector.LookupSource).
type lookupTableSource struct {
	*tableSource
	files  *source[connector.TableRecord]
	reload time.Duration
	now    func() time.Time
}

// newLookupTableSource makes the source of ts look rows up too, reading
// its files with the source's options and decoders.
func newLookupTableSource(ts *tableSource, ctx connector.Context) connector.Source[connector.TableRecord] {
	files, ok := ts.Source.(*source[connector.TableRecord])
	if !ok {
		return ts
	}
	return &lookupTableSource{tableSource: ts, files: files, reload: ctx.Options.Duration("lookup.full-cache.periodic-reload.interval"), now: time.Now}
}

// SyncLookup implements connector.SyncLookupSource: a lookup reads the rows
// held in memory, so the join calls it on its own goroutine. The loads of
// the files (at the first lookup, and at each reload) block it while they
// read.
func (s *lookupTableSource) SyncLookup() bool { return true }

// NewLookup returns the lookup of the table's rows by the columns keys. It
// reads every file of the table at the first lookup (and again when
// 'lookup.full-cache.periodic-reload.interval' has passed), keeping the
// rows in memory indexed by their keys; a changelog format's retractions
// remove the rows they retract. Rows with a NULL key are never found.
func (s *lookupTableSource) NewLookup(keys []int) (connector.LookupFunc, error) {
	schema := s.layout.schema
	if len(keys) == 0 {
		return nil, fmt.Errorf("filesystem table: a lookup needs at least one key column")
	}
	for _, k := range keys {
		if k < 0 || k >= schema.Len() {
			return nil, fmt.Errorf("filesystem table: lookup key column %d is not a column of the table (it has %d)", k, schema.Len())
		}
	}
	if _, err := s.files.list(true); err != nil {
		return nil, fmt.Errorf("filesystem table: lookup: %w", err)
	}
	rowKey := types.NewKeyEncoder(schema, keys...)
	kt := rowKey.KeyType()
	cols := make([]int, kt.Len())
	for i := range cols {
		cols[i] = i
	}
	l := &tableLookup{src: s, keys: keys, rowKey: rowKey, keyKey: types.NewKeyEncoder(kt, cols...)}
	if len(keys) == 1 {
		switch kt.FieldType(0).Kind() {
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			l.intKey = true
		}
	}
	return l.lookup, nil
}

// tableLookup is the loaded rows of a table, indexed by a key, reloaded
// when they are older than the source's reload interval.
type tableLookup struct {
	src    *lookupTableSource
	keys   []int
	rowKey *types.KeyEncoder // the key of a row of the table
	keyKey *types.KeyEncoder // the key of a key row
	// intKey: the key is one integer column, by which the rows are
	// indexed as they are (lookupSnapshot.ints).
	intKey bool
	mu     sync.Mutex // held while loading
	cur    atomic.Pointer[lookupSnapshot]
}

// lookupSnapshot is the table's rows by key, as loaded at a time.
type lookupSnapshot struct {
	rows map[string][]types.Row
	ints map[int64][]types.Row // by the key column's value, for an intKey
	at   time.Time
}

func (l *tableLookup) lookup(_ context.Context, key types.Row) ([]types.Row, error) {
	snap := l.cur.Load()
	if snap == nil || (l.src.reload > 0 && l.src.now().Sub(snap.at) >= l.src.reload) {
		var err error
		if snap, err = l.refresh(snap); err != nil {
			return nil, err
		}
	}
	if key.AnyNull() {
		return nil, nil
	}
	if l.intKey {
		return snap.ints[key.Int64(0)], nil
	}
	// The key is encoded on the stack when it fits, and the map indexed
	// without making a string of it.
	var buf [128]byte
	return snap.rows[string(l.keyKey.AppendKey(buf[:0], key))], nil
}

// refresh loads the table unless another lookup has replaced old already.
func (l *tableLookup) refresh(old *lookupSnapshot) (*lookupSnapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.cur.Load(); cur != old {
		return cur, nil
	}
	at := l.src.now()
	snap := &lookupSnapshot{at: at}
	var err error
	if l.intKey {
		snap.ints, err = load(l, func(r types.Row) int64 { return r.Int64(l.keys[0]) })
	} else {
		snap.rows, err = load(l, l.rowKey.Key)
	}
	if err != nil {
		return nil, err
	}
	l.cur.Store(snap)
	return snap, nil
}

// load reads every file of the table into a map of its rows by their
// keys, which keyOf gives.
func load[K comparable](l *tableLookup, keyOf func(types.Row) K) (map[K][]types.Row, error) {
	s := l.src
	paths, err := s.files.list(true)
	if err != nil {
		return nil, fmt.Errorf("filesystem table: loading the rows to look up: %w", err)
	}
	out := map[K][]types.Row{}
	decode := s.files.newDecoder()
	w := types.NewRowWriter(s.layout.schema, types.NewArena(0))
	for _, path := range paths {
		var parts []types.Value
		if s.layout.partitioned() {
			if parts, err = s.layout.partitionValues(s.root, path); err != nil {
				return nil, fmt.Errorf("filesystem table: loading the rows to look up: %w", err)
			}
		}
		var emitErr error
		emit := func(c connector.TableRecord) {
			if emitErr != nil {
				return
			}
			r := c.Row
			if s.layout.partitioned() {
				if r, emitErr = l.withPartitions(w, r, parts); emitErr != nil {
					return
				}
			}
			for _, k := range l.keys {
				if r.IsNull(k) {
					return
				}
			}
			k := keyOf(r)
			switch {
			case c.Kind.IsAddition():
				out[k] = append(out[k], r.Clone())
			case c.Kind.IsRetraction():
				rows := out[k]
				for i, old := range rows {
					if old.Encoding() == r.Encoding() {
						rows = append(rows[:i:i], rows[i+1:]...)
						break
					}
				}
				if len(rows) == 0 {
					delete(out, k)
				} else {
					out[k] = rows
				}
			}
		}
		err := readLines(path, s.files.opts.SkipFirstLine, func(line []byte, n int64) error {
			if err := decode.Decode(line, emit); err != nil {
				return fmt.Errorf("%s:%d: %w", path, n, err)
			}
			if emitErr != nil {
				return fmt.Errorf("%s:%d: %w", path, n, emitErr)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("filesystem table: loading the rows to look up: %w", err)
		}
	}
	return out, nil
}

// withPartitions returns r, a row of the columns in the files, with the
// partition columns of its file filled in.
func (l *tableLookup) withPartitions(w *types.RowWriter, r types.Row, parts []types.Value) (types.Row, error) {
	layout := l.src.layout
	w.Reset()
	for j, i := range layout.dataCols {
		w.CopyField(i, r, j)
	}
	for j, i := range layout.partCols {
		if parts == nil || parts[j] == nil {
			w.SetNull(i)
		} else if err := w.SetValue(i, parts[j]); err != nil {
			return types.Row{}, err
		}
	}
	return w.Finish(), nil
}

// readLines calls f with every line of the file at path that is not blank
// (without its line ending) and its line number, as the source reads them.
func readLines(path string, skipFirst bool, f func(line []byte, n int64) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<16)
	var buf []byte
	for n := int64(1); ; n++ {
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			buf = append(buf, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s after line %d: %w", path, n-1, err)
		}
		line := bytes.TrimRight(buf, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 && !(skipFirst && n == 1) {
			if ferr := f(line, n); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

var _ connector.LookupSource = (*lookupTableSource)(nil)
