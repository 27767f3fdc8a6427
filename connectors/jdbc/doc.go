// Package jdbc is eddy's jdbc connector, with the option names of Flink's
// JDBC connector: a sink that writes a SQL table into a table of
// PostgreSQL (through pgx), MySQL or MariaDB (through go-mysql).
//
// A table with a PRIMARY KEY is written by upserts (INSERT ... ON CONFLICT
// DO UPDATE, INSERT ... ON DUPLICATE KEY UPDATE) and deletes by that key:
// the planner sends all changes of a key to one writer, in order, and drops
// the -U half of updates. Changes are buffered (the last change of each
// key) and written in one transaction at every checkpoint and when the
// buffer is full or old; since upserts and deletes by key are idempotent, a
// replay after a failure converges to the same table, so the sink is
// exactly-once in effect. A table without a primary key takes inserts only
// and is at-least-once: a replay inserts the rows since the last
// checkpoint again.
package jdbc
