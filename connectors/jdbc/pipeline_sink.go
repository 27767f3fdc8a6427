package jdbc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// pipelineSpec is the 'sink' block of a pipeline of type postgres or
// mysql.
func pipelineSpec(name, example string) connector.Spec {
	return connector.Spec{
		Name: name,
		Kind: connector.SinkKind,
		Description: "Writes a pipeline's tables into " + map[string]string{"postgres": "PostgreSQL", "mysql": "MySQL or MariaDB"}[name] +
			": each table is created when missing (with the source's primary key) and altered as the pipeline's schema changes say; " +
			"rows are upserted and deleted by key. The changes between two checkpoints, schema changes among them, are written in " +
			"database transactions when the checkpoint completes, so the pipeline is exactly-once.",
		Options: []connector.Option{
			{Key: "url", Type: connector.String, Required: true,
				Description: "The database: '" + example + "'.",
				Check:       func(v string) error { _, err := parseURL(v); return err }},
			{Key: "username", Type: connector.String, Description: "The user to connect as; it needs to create and alter tables."},
			{Key: "password", Type: connector.String, Secret: true, Description: "The user's password."},
			{Key: "sink.max-retries", Type: connector.Int, Default: "3",
				Description: "How many times a failed commit is retried (on a new connection) before the pipeline fails.", Check: connector.NonNegative},
			{Key: "connection.max-retry-timeout", Type: connector.Duration, Default: "60 s",
				Description: "How long to wait for a connection."},
		},
	}
}

// PipelineSink is the sink of a pipeline's tables in PostgreSQL or MySQL.
type PipelineSink struct {
	cfg *config
}

// NewPipelineSink returns the sink of a 'sink' block of type dialect
// ("postgres" or "mysql") with its validated options.
func NewPipelineSink(dialect string, o connector.Options) (*PipelineSink, error) {
	u, err := parseURL(o.String("url"))
	if err != nil {
		return nil, err
	}
	if u.dialect != dialect {
		return nil, fmt.Errorf("sink type %s takes a 'url' of %s, not %q", dialect, map[string]string{"postgres": "jdbc:postgresql://host:port/database", "mysql": "jdbc:mysql://host:port/database"}[dialect], o.String("url"))
	}
	return &PipelineSink{cfg: &config{url: u, table: "(pipeline tables)", user: o.String("username"), password: o.String("password"),
		retries: int(o.Int("sink.max-retries")), connectTimeout: o.Duration("connection.max-retry-timeout")}}, nil
}

// NewWriter is that of the transactions.
func (s *PipelineSink) NewWriter(ctx connector.WriterContext) (connector.Writer[pipeline.Event], error) {
	return s.transactional().NewWriter(ctx)
}

// NewTransactionalWriter returns the writer of one subtask.
func (s *PipelineSink) NewTransactionalWriter(ctx connector.WriterContext) (connector.TransactionalWriter[pipeline.Event], error) {
	return s.transactional().NewTransactionalWriter(ctx)
}

func (s *PipelineSink) transactional() connector.TransactionalSink[pipeline.Event] {
	return connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[pipeline.Event, pipelineTx], error) {
		name, log := "pipeline", slog.Default()
		if ctx != nil {
			name, log = fmt.Sprintf("%s-%d", ctx.SinkName(), ctx.Subtask()), ctx.Log()
		}
		return newPipelineCommitter(s.cfg, name, log), nil
	})
}

func newPipelineCommitter(cfg *config, name string, log *slog.Logger) *pipelineCommitter {
	return &pipelineCommitter{cfg: cfg, name: name, log: log, byKey: map[string]int{}, schemas: map[*pipeline.Schema]int{},
		stmts: map[string]*statements{}, has: map[string]map[string]bool{}, keys: map[*pipeline.Schema]*types.KeyEncoder{}}
}

// pipelineTx is a transaction of the pipeline's sink: its events, in order.
type pipelineTx struct {
	ID      string             `json:"id"`
	Schemas []*pipeline.Schema `json:"schemas"`
	Ops     []pipelineOp       `json:"ops"`
}

// pipelineOp is an event of a transaction, its schema an index in Schemas.
type pipelineOp struct {
	Event    pipeline.EventKind `json:"event"`
	Table    string             `json:"table"`
	Schema   int                `json:"schema"`
	Changes  []columnChange     `json:"changes,omitempty"`
	Tolerant bool               `json:"tolerant,omitempty"`
	Kind     changelog.Kind     `json:"kind,omitempty"`
	Row      []byte             `json:"row,omitempty"`
}

// columnChange is a pipeline.SchemaChange with its type as SQL writes it.
type columnChange struct {
	Kind    pipeline.ChangeKind `json:"kind"`
	Column  string              `json:"column"`
	NewName string              `json:"newName,omitempty"`
	Type    string              `json:"type,omitempty"`
}

func (c columnChange) change() (pipeline.SchemaChange, error) {
	out := pipeline.SchemaChange{Kind: c.Kind, Column: c.Column, NewName: c.NewName}
	if c.Type != "" {
		t, err := types.ParseType(c.Type)
		if err != nil {
			return out, err
		}
		out.Type = t
	}
	return out, nil
}

// pipelineCommitter is the TwoPhaseCommitter of one subtask.
type pipelineCommitter struct {
	cfg  *config
	name string
	log  *slog.Logger
	seq  int
	// The open transaction's schemas, and its data changes by table and key
	// since the last schema event (the last change of a key wins).
	schemas map[*pipeline.Schema]int
	byKey   map[string]int
	keys    map[*pipeline.Schema]*types.KeyEncoder
	// before is the delete of an update's -U, written if its +U changes
	// the key; beforeKey is its table and key.
	before    *pipelineOp
	beforeKey string

	pg    *postgres
	my    *mysql
	stmts map[string]*statements // by table, schema version and columns
	// has holds, per table, the columns the table has, read once per
	// commit and after each schema change. Rows are written without the
	// columns their schema has and the table lacks: those a table refused
	// ('try_evolve'), and, when a transaction is written again after a
	// failure, those that a later change of the same transaction dropped
	// or renamed.
	has map[string]map[string]bool
}

func (c *pipelineCommitter) Begin() (pipelineTx, error) {
	c.seq++
	clear(c.byKey)
	clear(c.schemas)
	c.before = nil
	return pipelineTx{ID: fmt.Sprintf("%s-%d", c.name, c.seq)}, nil
}

func (c *pipelineCommitter) schemaIndex(tx *pipelineTx, s *pipeline.Schema) int {
	if i, ok := c.schemas[s]; ok {
		return i
	}
	c.schemas[s] = len(tx.Schemas)
	tx.Schemas = append(tx.Schemas, s)
	return len(tx.Schemas) - 1
}

func (c *pipelineCommitter) Write(tx *pipelineTx, e pipeline.Event) error {
	op := pipelineOp{Event: e.Kind, Table: e.Table.String(), Schema: c.schemaIndex(tx, e.Schema), Tolerant: e.Tolerant}
	if e.Kind != pipeline.DataChange {
		for _, ch := range e.Changes {
			cc := columnChange{Kind: ch.Kind, Column: ch.Column, NewName: ch.NewName}
			if ch.Kind == pipeline.AddColumn || ch.Kind == pipeline.AlterColumnType {
				cc.Type = ch.Type.String()
			}
			op.Changes = append(op.Changes, cc)
		}
		clear(c.byKey)
		tx.Ops = append(tx.Ops, op)
		return nil
	}
	if e.Schema == nil {
		return fmt.Errorf("jdbc: a row change of %s without its schema", e.Table)
	}
	if len(e.Schema.PrimaryKey) == 0 {
		if e.Change.Kind == changelog.UpdateBefore {
			return fmt.Errorf("table %s has no primary key, and an update of it cannot be applied; give the source table a key, or name one with a transform's 'primary-keys'", op.Table)
		}
		op.Kind, op.Row = e.Change.Kind, e.Change.Row.Bytes()
		tx.Ops = append(tx.Ops, op)
		return nil
	}
	k := op.Table + "\x00" + c.key(e.Schema, e.Change.Row)
	switch e.Change.Kind {
	case changelog.UpdateBefore:
		// The +U that follows upserts the row; if it changes the key, the
		// row under the old key is deleted first.
		op.Kind, op.Row = changelog.Delete, e.Change.Row.Bytes()
		c.before, c.beforeKey = &op, k
		return nil
	case changelog.UpdateAfter:
		if before := c.before; before != nil && before.Table == op.Table && c.beforeKey != k {
			c.keyed(tx, *before, c.beforeKey)
		}
	}
	c.before = nil
	op.Kind, op.Row = e.Change.Kind, e.Change.Row.Bytes()
	c.keyed(tx, op, k)
	return nil
}

// key returns the encoded primary key of a row.
func (c *pipelineCommitter) key(s *pipeline.Schema, row types.Row) string {
	enc := c.keys[s]
	if enc == nil {
		enc = types.NewKeyEncoder(s.Columns, s.KeyIndexes()...)
		c.keys[s] = enc
	}
	return enc.Key(row)
}

// keyed adds the change of a keyed row to tx, in place of the transaction's
// earlier change of the key since the last schema event.
func (c *pipelineCommitter) keyed(tx *pipelineTx, op pipelineOp, k string) {
	if i, ok := c.byKey[k]; ok {
		tx.Ops[i] = op
		return
	}
	c.byKey[k] = len(tx.Ops)
	tx.Ops = append(tx.Ops, op)
}

func (c *pipelineCommitter) PreCommit(*pipelineTx) error { return nil }

func (c *pipelineCommitter) Abort(pipelineTx) error { return nil }

func (c *pipelineCommitter) Recover(_, _ []pipelineTx) error { return nil }

// Commit writes a transaction's events, retrying on a new connection as
// 'sink.max-retries' says. In PostgreSQL the whole transaction is one
// database transaction, schema changes included; MySQL commits each schema
// change by itself, so the rows between two are a database transaction
// each. Writing a transaction again converges to the same tables.
func (c *pipelineCommitter) Commit(tx pipelineTx) error {
	if len(tx.Ops) == 0 {
		return nil
	}
	var err error
	for attempt := 0; attempt <= c.cfg.retries; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.connectTimeout+time.Minute)
		if c.cfg.url.dialect == "postgres" {
			err = c.commitPG(ctx, tx)
		} else {
			err = c.commitMySQL(ctx, tx)
		}
		cancel()
		if err == nil {
			return nil
		}
		c.closeConns()
	}
	return fmt.Errorf("jdbc: pipeline transaction %s into %s database %s at %s:%d: %w", tx.ID, c.cfg.url.dialect, c.cfg.url.database, c.cfg.url.host, c.cfg.url.port, err)
}

func (c *pipelineCommitter) closeConns() {
	if c.pg != nil {
		c.pg.close()
	}
	if c.my != nil {
		c.my.close()
	}
}

// statementsOf returns the upsert, insert and delete of a table in a
// schema, without the columns the table lacks.
func (c *pipelineCommitter) statementsOf(table string, s *pipeline.Schema) (*statements, []int) {
	has := c.has[table]
	var cols []int
	var present []string
	for i, f := range s.Columns.Fields() {
		if has == nil || has[f.Name] {
			cols = append(cols, i)
			present = append(present, f.Name)
		}
	}
	k := table + "\x00" + strconv.Itoa(s.Version) + "\x00" + strings.Join(present, "\x00")
	if st := c.stmts[k]; st != nil {
		return st, cols
	}
	names := make([]string, len(cols))
	for j, i := range cols {
		names[j] = s.Columns.Field(i).Name
	}
	var key []int
	for _, ki := range s.KeyIndexes() {
		for j, i := range cols {
			if i == ki {
				key = append(key, j)
			}
		}
	}
	cfg := *c.cfg
	cfg.table = table // schema.table, quoted part by part
	var st statements
	if c.cfg.url.dialect == "postgres" {
		st = newPostgres(&cfg, names, key).st
	} else {
		st = newMySQL(&cfg, names, key).st
	}
	c.stmts[k] = &st
	return &st, cols
}

// dataOp returns the statement and parameters of a data change.
func (c *pipelineCommitter) dataOp(tx *pipelineTx, op pipelineOp) (string, []any, error) {
	s := tx.Schemas[op.Schema]
	row, err := types.RowFromBytes(s.Columns, op.Row)
	if err != nil {
		return "", nil, fmt.Errorf("a row of %s: %w", op.Table, err)
	}
	st, cols := c.statementsOf(op.Table, s)
	mysql := c.cfg.url.dialect == "mysql"
	if op.Kind == changelog.Delete && len(s.PrimaryKey) > 0 {
		var args []any
		for _, i := range s.KeyIndexes() {
			args = append(args, goValue(s.Columns, row, i, mysql))
		}
		return st.delete, args, nil
	}
	if op.Kind == changelog.Delete {
		return "", nil, fmt.Errorf("table %s has no primary key, and a delete of it cannot be applied; give the source table a key, or name one with a transform's 'primary-keys'", op.Table)
	}
	args := make([]any, len(cols))
	for j, i := range cols {
		args[j] = goValue(s.Columns, row, i, mysql)
	}
	if len(s.PrimaryKey) > 0 {
		return st.upsert, args, nil
	}
	return st.insert, args, nil
}

// schemaStatements returns the statements of a schema event, given the
// columns the table has now (nil if it does not exist).
func (c *pipelineCommitter) schemaStatements(tx *pipelineTx, op pipelineOp, has map[string]bool) ([]string, error) {
	d := c.cfg.url.dialect
	id := pipeline.ParseTableID(op.Table)
	s := tx.Schemas[op.Schema]
	switch op.Event {
	case pipeline.CreateTable:
		if has == nil {
			return createStatements(d, id, s), nil
		}
		// The table exists (an earlier run, made by hand, or this very
		// transaction written before a failure): it gets the columns it
		// lacks that the table still has at the end of the transaction,
		// which may drop or rename some later.
		last := tx.Schemas[lastSchema(tx, op.Table)]
		var out []string
		for i, f := range s.Columns.Fields() {
			if _, ok := last.Columns.Index(f.Name); !ok {
				continue
			}
			if q := alterStatement(d, id, s, pipeline.SchemaChange{Kind: pipeline.AddColumn, Column: f.Name, Type: f.Type.Nullable(), Position: i}, has); q != "" {
				out = append(out, q)
			}
		}
		return out, nil
	case pipeline.AlterTable:
		var out []string
		now := map[string]bool{}
		for k, v := range has {
			now[k] = v
		}
		for _, cc := range op.Changes {
			ch, err := cc.change()
			if err != nil {
				return nil, err
			}
			if q := alterStatement(d, id, s, ch, now); q != "" {
				out = append(out, q)
			}
			switch ch.Kind {
			case pipeline.AddColumn:
				now[ch.Column] = true
			case pipeline.DropColumn:
				delete(now, ch.Column)
			case pipeline.RenameColumn:
				if now[ch.Column] {
					delete(now, ch.Column)
					now[ch.NewName] = true
				}
			}
		}
		return out, nil
	case pipeline.TruncateTable:
		if has == nil {
			return nil, nil
		}
		return []string{"TRUNCATE TABLE " + tableName(d, id)}, nil
	case pipeline.DropTable:
		return []string{"DROP TABLE IF EXISTS " + tableName(d, id)}, nil
	}
	return nil, fmt.Errorf("unknown event %v", op.Event)
}

// lastSchema returns the index of the schema of the last event of a table
// in a transaction.
func lastSchema(tx *pipelineTx, table string) int {
	for i := len(tx.Ops) - 1; i >= 0; i-- {
		if tx.Ops[i].Table == table {
			return tx.Ops[i].Schema
		}
	}
	return 0
}

func (c *pipelineCommitter) commitPG(ctx context.Context, tx pipelineTx) error {
	if c.pg == nil {
		c.pg = &postgres{c: c.cfg}
	}
	if c.pg.conn == nil {
		if err := c.pg.connect(ctx); err != nil {
			return err
		}
	}
	return pgx.BeginFunc(ctx, c.pg.conn, func(dbtx pgx.Tx) error {
		var batch pgx.Batch
		flush := func() error {
			if batch.Len() == 0 {
				return nil
			}
			err := dbtx.SendBatch(ctx, &batch).Close()
			batch = pgx.Batch{}
			return err
		}
		columns := func(table string) (map[string]bool, error) {
			id := pipeline.ParseTableID(table)
			// A table without a schema is where PostgreSQL's search path
			// puts it, as the unqualified statements find it.
			q := "SELECT column_name FROM information_schema.columns WHERE table_schema = COALESCE($1, current_schema()) AND table_name = $2"
			var schema any
			if id.Schema != "" {
				schema = id.Schema
			}
			rows, err := dbtx.Query(ctx, q, schema, id.Table)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			var has map[string]bool
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					return nil, err
				}
				if has == nil {
					has = map[string]bool{}
				}
				has[n] = true
			}
			return has, rows.Err()
		}
		clear(c.has)
		var err error
		for _, op := range tx.Ops {
			if op.Event == pipeline.DataChange {
				if _, ok := c.has[op.Table]; !ok {
					if c.has[op.Table], err = columns(op.Table); err != nil {
						return err
					}
				}
				q, args, err := c.dataOp(&tx, op)
				if err != nil {
					return err
				}
				batch.Queue(q, args...)
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			has, err := columns(op.Table)
			if err != nil {
				return err
			}
			qs, err := c.schemaStatements(&tx, op, has)
			if err != nil {
				return err
			}
			for _, q := range qs {
				if !op.Tolerant {
					if _, err := dbtx.Exec(ctx, q); err != nil {
						return fmt.Errorf("%s: %w", q, err)
					}
					continue
				}
				// A change the table refuses leaves the table as it is.
				sp, err := dbtx.Begin(ctx)
				if err != nil {
					return err
				}
				if _, err := sp.Exec(ctx, q); err != nil {
					c.log.Warn("jdbc: the sink table refused a schema change ('schema.change.behavior' is try_evolve); rows go without the columns it lacks",
						"table", op.Table, "statement", q, "error", err)
					if err := sp.Rollback(ctx); err != nil {
						return err
					}
					continue
				}
				if err := sp.Commit(ctx); err != nil {
					return err
				}
			}
			if c.has[op.Table], err = columns(op.Table); err != nil {
				return err
			}
		}
		return flush()
	})
}

func (c *pipelineCommitter) commitMySQL(ctx context.Context, tx pipelineTx) error {
	if c.my == nil {
		c.my = &mysql{c: c.cfg}
	}
	if c.my.conn == nil {
		if err := c.my.connect(ctx); err != nil {
			return err
		}
	}
	conn := c.my.conn
	columns := func(table string) (map[string]bool, error) {
		id := pipeline.ParseTableID(table)
		q := "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?"
		var schema any
		if id.Schema != "" {
			schema = id.Schema
		}
		r, err := conn.Execute(q, schema, id.Table)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var has map[string]bool
		for i := 0; i < r.RowNumber(); i++ {
			n, _ := r.GetString(i, 0)
			if has == nil {
				has = map[string]bool{}
			}
			has[n] = true
		}
		return has, nil
	}
	inTx := false
	begin := func() error {
		if !inTx {
			inTx = true
			return conn.Begin()
		}
		return nil
	}
	commit := func() error {
		if inTx {
			inTx = false
			return conn.Commit()
		}
		return nil
	}
	clear(c.has)
	err := func() error {
		var err error
		for _, op := range tx.Ops {
			if op.Event == pipeline.DataChange {
				if _, ok := c.has[op.Table]; !ok {
					if c.has[op.Table], err = columns(op.Table); err != nil {
						return err
					}
				}
				q, args, err := c.dataOp(&tx, op)
				if err != nil {
					return err
				}
				if err := begin(); err != nil {
					return err
				}
				st, err := c.my.stmt(q)
				if err != nil {
					return err
				}
				r, err := st.Execute(args...)
				if err != nil {
					return err
				}
				r.Close()
				continue
			}
			if err := commit(); err != nil {
				return err
			}
			has, err := columns(op.Table)
			if err != nil {
				return err
			}
			qs, err := c.schemaStatements(&tx, op, has)
			if err != nil {
				return err
			}
			for _, q := range qs {
				if _, err := conn.Execute(q); err != nil {
					if !op.Tolerant {
						return fmt.Errorf("%s: %w", q, err)
					}
					c.log.Warn("jdbc: the sink table refused a schema change ('schema.change.behavior' is try_evolve); rows go without the columns it lacks",
						"table", op.Table, "statement", q, "error", err)
				}
			}
			// A table's statements change with its columns.
			c.my.stmts = map[string]*client.Stmt{}
			if c.has[op.Table], err = columns(op.Table); err != nil {
				return err
			}
		}
		return commit()
	}()
	if err != nil && inTx {
		_ = conn.Rollback()
	}
	return err
}

func (c *pipelineCommitter) Close() error {
	c.closeConns()
	return nil
}

type pipelineFactory struct{ dialect, example string }

func (f pipelineFactory) Spec() connector.Spec { return pipelineSpec(f.dialect, f.example) }

func (f pipelineFactory) NewSink(ctx connector.Context) (any, error) {
	return NewPipelineSink(f.dialect, ctx.Options)
}

func init() {
	pipeline.Sinks.Register(pipelineFactory{"postgres", "jdbc:postgresql://host:port/database"})
	pipeline.Sinks.Register(pipelineFactory{"mysql", "jdbc:mysql://host:port/database"})
}
