package jdbc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// statements are a table's parameterised statements.
type statements struct {
	insert, upsert, delete string
}

// op is one statement to run: an upsert or insert of a row's columns, or a
// delete by its key.
type op struct {
	delete bool
	upsert bool
	args   []any
}

func (s *statements) of(o op) string {
	switch {
	case o.delete:
		return s.delete
	case o.upsert:
		return s.upsert
	}
	return s.insert
}

// database is a dialect's connection.
type database interface {
	// apply runs ops in one transaction.
	apply(ctx context.Context, ops []op) error
	close()
}

// Sink is a jdbc sink of a SQL table.
type Sink struct {
	cfg   *config
	table *connector.Table
}

// NewTableSink returns a sink of the table t with the validated options of
// the "jdbc" connector.
func NewTableSink(t *connector.Table, o connector.Options) (*Sink, error) {
	cfg, err := newConfig(o)
	if err != nil {
		return nil, err
	}
	return &Sink{cfg: cfg, table: t}, nil
}

// ChangelogMode says what the sink applies: upserts and deletes by its
// primary key, or inserts only for a table without one.
func (s *Sink) ChangelogMode() changelog.Mode {
	if len(s.table.PrimaryKey) > 0 {
		return changelog.Upsert
	}
	return changelog.InsertOnly
}

// NewWriter returns the at-least-once writer of one subtask.
func (s *Sink) NewWriter(ctx connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return &writer{rowOps: s.rowOps(), ctx: ctx, byKey: map[string]int{}}, nil
}

// rowOps turns changes into statements and runs them.
type rowOps struct {
	cfg    *config
	rt     *types.RowType
	key    []int
	keyEnc *types.KeyEncoder
	db     database
}

func (s *Sink) rowOps() *rowOps {
	rt := s.table.Schema
	o := &rowOps{cfg: s.cfg, rt: rt, key: s.table.PrimaryKey, keyEnc: types.NewKeyEncoder(rt, s.table.PrimaryKey...)}
	switch s.cfg.url.dialect {
	case "postgres":
		o.db = newPostgres(s.cfg, rt.Names(), s.table.PrimaryKey)
	default:
		o.db = newMySQL(s.cfg, rt.Names(), s.table.PrimaryKey)
	}
	return o
}

// writer buffers changes, the last of each key, and writes them in one
// transaction when the buffer is full, when the flush interval has passed
// since the oldest, and at every checkpoint.
type writer struct {
	*rowOps
	// ctx counts the bytes written: an estimate, the size of the
	// statements' parameters (see paramBytes).
	ctx    connector.WriterContext
	buf    []op
	byKey  map[string]int // key -> index in buf, upsert mode
	oldest time.Time

	// mu guards the buffer and the connection against the timer that
	// flushes the buffer once the interval has passed, even when no more
	// changes come to call Write.
	mu     sync.Mutex
	timer  *time.Timer
	closed bool
}

// tick flushes the buffer if its oldest change has waited the interval,
// and otherwise waits again. A failed flush keeps the buffer for the next.
func (w *writer) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed || len(w.buf) == 0 {
		return
	}
	if wait := w.cfg.interval - time.Since(w.oldest); wait > 0 {
		w.timer = time.AfterFunc(wait, w.tick)
		return
	}
	if w.flush() != nil {
		w.timer = time.AfterFunc(w.cfg.interval, w.tick)
	}
}

func (w *writer) Write(records []connector.TableRecord, _ []int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range records {
		if r.Kind == changelog.UpdateBefore {
			continue // the +U that follows replaces the row
		}
		if len(w.buf) == 0 {
			w.oldest = time.Now()
			if w.cfg.interval > 0 && w.timer == nil {
				w.timer = time.AfterFunc(w.cfg.interval, w.tick)
			}
		}
		o, err := w.opOf(r)
		if err != nil {
			return err
		}
		if len(w.key) == 0 {
			w.buf = append(w.buf, o)
		} else {
			k := w.keyEnc.Key(r.Row)
			if i, ok := w.byKey[k]; ok {
				w.buf[i] = o
			} else {
				w.byKey[k] = len(w.buf)
				w.buf = append(w.buf, o)
			}
		}
		if w.cfg.maxRows > 0 && len(w.buf) >= w.cfg.maxRows {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	if len(w.buf) > 0 && w.cfg.interval > 0 && time.Since(w.oldest) >= w.cfg.interval {
		return w.flush()
	}
	return nil
}

// opOf returns the statement of a change (not a -U): an upsert or a
// delete by key, or an insert for a table without a key.
func (w *rowOps) opOf(r connector.TableRecord) (op, error) {
	if len(w.key) == 0 {
		if r.Kind != changelog.Insert && r.Kind != changelog.UpdateAfter {
			return op{}, fmt.Errorf("jdbc: %s has no primary key and takes inserts only, not %s; declare PRIMARY KEY (...) NOT ENFORCED", w.cfg.where(), r.Kind)
		}
		return op{args: w.args(r.Row, nil)}, nil
	}
	if r.Kind == changelog.Delete {
		return op{delete: true, args: w.args(r.Row, w.key)}, nil
	}
	return op{upsert: true, args: w.args(r.Row, nil)}, nil
}

// args returns the statement parameters of a row: every column, or the
// columns cols.
func (w *rowOps) args(row types.Row, cols []int) []any {
	mysql := w.cfg.url.dialect == "mysql"
	if cols == nil {
		out := make([]any, w.rt.Len())
		for i := range out {
			out[i] = goValue(w.rt, row, i, mysql)
		}
		return out
	}
	out := make([]any, len(cols))
	for j, i := range cols {
		out[j] = goValue(w.rt, row, i, mysql)
	}
	return out
}

// Flush writes the buffer in one transaction, retrying on a new connection
// as 'sink.max-retries' says.
func (w *writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

// flush is Flush with w.mu held.
func (w *writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.apply(w.buf); err != nil {
		return err
	}
	n := 0
	for _, o := range w.buf {
		n += paramBytes(o.args)
	}
	connector.CountBytesOut(w.ctx, n)
	clear(w.buf)
	w.buf = w.buf[:0]
	clear(w.byKey)
	return nil
}

// apply runs ops in one transaction, retrying on a new connection as
// 'sink.max-retries' says.
func (w *rowOps) apply(ops []op) error {
	var err error
	for attempt := 0; attempt <= w.cfg.retries; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.cfg.connectTimeout+time.Minute)
		err = w.db.apply(ctx, ops)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// paramBytes estimates the bytes of a statement's parameters as sent to
// the database: the length of strings and binary values, the width of
// numbers, booleans and times; the statement's text and the protocol's
// framing are not counted.
func paramBytes(args []any) int {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case nil:
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		case bool:
			n++
		case float32:
			n += 4
		default:
			n += 8 // int64, float64, time.Time
		}
	}
	return n
}

func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.db.close()
	return nil
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSink(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("jdbc writes SQL tables (changelog.Change[types.Row] records), not %v records", ctx.RecordType)
	}
	s, err := NewTableSink(ctx.Table, ctx.Options)
	if err != nil {
		return nil, err
	}
	switch {
	case len(ctx.Table.PrimaryKey) > 0 && s.cfg.exactlyOnce:
		return s.transactional(), nil
	case s.cfg.exactlyOnce && s.cfg.guaranteeSet:
		return nil, fmt.Errorf("jdbc: %s: 'sink.delivery-guarantee' = 'exactly-once' needs a PRIMARY KEY (...) NOT ENFORCED, whose upserts make a replayed transaction harmless; without one use 'at-least-once'", s.cfg.where())
	}
	return s, nil
}

func init() { connector.Register(factory{}) }
