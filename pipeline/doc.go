// Package pipeline runs Flink CDC 3's YAML pipelines: whole-database
// synchronisation from a change data capture source into a sink, every
// table that matches a pattern created in the target and kept in step with
// its rows and its schema.
//
// A pipeline is a stream of Events: row changes of many tables, each
// encoded in its table's Schema, and the schema changes between them
// (created tables, added, dropped, renamed and retyped columns). Transform
// rules project and filter each table's rows with eddy's SQL expressions;
// route rules map source tables onto sink tables; a schema operator applies
// 'schema.change.behavior' (exception, evolve, try_evolve, lenient, ignore)
// and hands the sink the schema changes to apply and rows in the sink
// table's schema. Sources and sinks register under the YAML 'type' in
// Connectors, the same connector SPI as SQL tables with Event records.
package pipeline
