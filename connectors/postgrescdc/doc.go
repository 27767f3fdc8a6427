// Package postgrescdc is eddy's postgres-cdc connector: a source of the
// rows and changes of PostgreSQL tables, read through logical replication
// with the built-in pgoutput plug-in, with Flink CDC's option names.
//
// A job first reads a snapshot of the tables without locks, in chunks of
// their primary key that its readers read in parallel. Every chunk is read
// in a transaction that imports a snapshot exported by the creation of a
// replication slot, so that it holds exactly the transactions that
// committed before the slot's consistent point; the changes of later
// transactions come from the slot. Once every chunk is read, one reader
// streams the slot from the lowest of the chunks' consistent points,
// skipping for each chunk the transactions its snapshot already holds.
// Chunks in progress are read again after a failure, from a new exported
// snapshot; finished ones are not; the stream resumes at the transaction
// and row it reached. Checkpoints carry all of it, and the slot's
// confirmed_flush_lsn only advances to positions of completed checkpoints,
// so the source is exactly-once.
//
// Rows carry their change kind: with 'changelog-mode' = 'all' (the
// default, which needs REPLICA IDENTITY FULL), +I for snapshot rows and
// inserts, -U and +U for updates, -D for deletes, a change of primary key
// being a -D and a +I; with 'upsert', +I, +U and -D keyed by the primary
// key. Metadata columns give 'database_name', 'schema_name', 'table_name',
// 'op_ts' (the commit time; 0 for snapshot rows) and 'row_kind'.
//
// The same source reads pipelines (registered in pipeline.Sources as type
// postgres, made by NewPipelineSource): every table of one database that
// 'tables' (database.schema.table patterns) selects, each with its own row
// type from its columns' types, named schema.table. Logical replication
// carries no DDL, but pgoutput sends a relation message, the table's
// columns at that point of the WAL, before the first change of a table
// whose columns changed: the source decodes what follows with it and emits
// the difference as an AlterTable event, a column of the same number
// (attnum, from the catalog while it still has the relation's columns)
// under a new name being a renamed one. With 'schema-change.capture' =
// 'event-trigger', event triggers of the database write every CREATE,
// ALTER and DROP TABLE into the WAL as logical decoding messages with the
// table's columns by number (ddl_trigger.go), at their place in the DDL's
// transaction: renamed columns, renamed tables (a DropTable and a
// CreateTable, as mysql-cdc emits them) and dropped tables are then exact.
// TRUNCATE is a TruncateTable event, and a table that 'tables' matches and
// that first appears in the stream (created after the start, in a
// publication FOR ALL TABLES) a CreateTable event. The stream split
// carries the tables as they are at its position (in a transaction, at its
// start, which a restore reads again), so that a restored job compares
// the relations and messages it reads again with the columns of that
// point, not with the catalog's now. A SQL table's job stops with an error
// when its table is dropped, renamed, or its columns change.
package postgrescdc
