// Package mysqlcdc is eddy's mysql-cdc connector: a source of the rows and
// changes of MySQL and MariaDB tables, read from the server's binary log,
// with Flink CDC's option names.
//
// A job first reads a snapshot of the tables without locks, in chunks of
// their primary key that its readers read in parallel: each chunk's query
// is brought up to date with the binary log between the positions before
// and after it, as in the DBLog algorithm Flink CDC uses, so that the
// chunk's rows are the table's at the position after it. Once every chunk
// is read, one reader follows the binary log from the lowest of those
// positions, skipping the changes a chunk already holds. Chunks in progress
// restart after a failure; finished ones are not read again; the binary
// log resumes at the transaction and row it reached. Checkpoints carry all
// of it, so the source is exactly-once.
//
// A pipeline's source follows schema changes through the binary log: it
// applies each ALTER, CREATE, RENAME and DROP TABLE statement to the
// tables it holds, as they were when the statement ran, rather than
// describing the tables from the server, which may have changed them
// again since (ddl_apply.go). Before it decodes a table's rows it checks
// the binary log's columns against the table it holds (tablemap.go).
//
// Rows carry their change kind (+I for snapshot rows and inserts, -U and +U
// for updates, -D for deletes; a change of primary key is a -D and a +I).
// Metadata columns give 'database_name', 'table_name', 'op_ts' (the
// change's time in the binary log; 0 for snapshot rows) and 'row_kind'.
package mysqlcdc
