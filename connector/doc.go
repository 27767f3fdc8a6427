// Package connector is the service-provider interface of eddy's connectors:
// what a source, a sink or a format implements so that jobs can read from
// and write to an outside system with exactly-once checkpoints, whether it
// is built into eddy or written outside this module.
//
// # Sources
//
// A Source is divided into splits (files, partitions, key ranges of a table,
// a log), each read from start to end by one reader. Its Enumerator runs
// once per job and assigns splits to the readers, one Reader per parallel
// subtask. A reader's splits carry their positions, which travel in
// checkpoints: after a failure, or in a job restored from a savepoint at
// another parallelism, every split resumes where the checkpoint left it. The
// enumerator's own state (the splits it has not assigned yet) travels with
// them, and assignments are held back around checkpoints so that every split
// is in exactly one of the two.
//
// Records are emitted through a SplitOutput per split, which timestamps
// them and tracks the split's watermark. A record that cannot be decoded is
// reported with Output.BadRecord: the job's configuration decides whether it
// fails the job or goes to the dead-letter output. Nothing is dropped
// silently.
//
// # Sinks
//
// A Sink makes one Writer per parallel subtask. Writers are flushed at every
// checkpoint barrier, so a sink that writes idempotently (upserts by key,
// messages with deterministic ids) has exactly-once effect. A sink whose
// writes become visible atomically implements TwoPhaseCommitter instead and
// is wrapped with TwoPhase: it pre-commits when the barrier passes and
// commits when the checkpoint completes.
//
// # Formats, options and the registry
//
// Decoders and Encoders turn bytes into records and back. Connectors and
// formats register by name in a Registry with a Spec of their options
// (name, type, default, required, description, secret), which validates
// what a user writes (SQL WITH clauses, YAML pipelines, the Go API) with
// errors that name the option and the fix, and generates the reference
// documentation.
//
// The package connectortest holds the conformance suite every connector
// runs.
package connector
