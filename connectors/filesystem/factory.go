package filesystem

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the json, csv, debezium-json, canal-json and maxwell-json formats
)

var spec = connector.Spec{
	Name: "filesystem",
	Kind: connector.SourceKind | connector.SinkKind,
	Description: "Reads files line by line (a file, a directory, or glob patterns), optionally watching for new files; writes exactly-once part files into a directory. " +
		"A SQL table is a directory: PARTITIONED BY columns are subdirectories (dt=2020-01-01/hr=10) that the source reads back into their columns, and the sink commits a partition with a success file when its trigger fires.",
	Formats: []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json"},
	Options: append([]connector.Option{
		{Key: "path", Type: connector.String, Required: true,
			Description: "The file, directory or glob pattern to read, or the directory to write part files into; a plain path or a file:// URI."},
		{Key: "source.monitor-interval", Type: connector.Duration,
			Description: "If set, the source keeps running and looks for new files under the path at this interval; otherwise it reads the files there are and ends."},
		{Key: "source.skip-first-line", Type: connector.Bool, Default: "false",
			Description: "Whether the first line of every file is a header, and skipped."},
		{Key: "partition.default-name", Type: connector.String, Default: "__DEFAULT_PARTITION__",
			Description: "SQL tables: the directory name of a partition whose value is NULL or empty."},
		{Key: "sink.partition-commit.trigger", Type: connector.Enum, Default: "process-time", Values: []string{"process-time", "partition-time"},
			Description: "SQL tables: when a partition is committed, once its files are: 'process-time' when the clock passes the partition's creation plus the delay; 'partition-time' when the watermark passes the time extracted from the partition's values plus the delay."},
		{Key: "sink.partition-commit.delay", Type: connector.Duration, Default: "0 s",
			Description: "SQL tables: how long after its trigger time a partition is committed: '1 h' for hourly partitions, '1 d' for daily ones."},
		{Key: "sink.partition-commit.policy.kind", Type: connector.List,
			Description: "SQL tables: what committing a partition does: 'success-file' writes an empty success file into its directory. eddy has no Hive metastore, so 'metastore' is refused.",
			Check:       checkPolicies},
		{Key: "sink.partition-commit.success-file.name", Type: connector.String, Default: "_SUCCESS",
			Description: "SQL tables: the name of the success file of the 'success-file' policy.",
			Check: func(v string) error {
				if v == "" || strings.ContainsAny(v, `/\`) {
					return fmt.Errorf("want a file name without a directory")
				}
				return nil
			}},
		{Key: "sink.rolling-policy.file-size", Type: connector.MemorySize, Default: "128 mb",
			Description: "Accepted for Flink's DDL; eddy's sink starts new part files at every checkpoint, which is when they become visible, whatever their size."},
		{Key: "sink.rolling-policy.rollover-interval", Type: connector.Duration, Default: "30 min",
			Description: "Accepted for Flink's DDL; part files roll at every checkpoint (set the checkpoint interval to roll more often)."},
		{Key: "sink.rolling-policy.check-interval", Type: connector.Duration, Default: "1 min",
			Description: "Accepted for Flink's DDL; part files roll at every checkpoint."},
		{Key: "partition.time-extractor.timestamp-pattern", Type: connector.String,
			Description: "SQL tables: how the 'partition-time' trigger makes a partition's time from its values, e.g. '$dt $hr:00:00' (read as yyyy-MM-dd HH:mm:ss); by default the first partition column's value."},
	}, lookupOptions...),
}

func checkPolicies(v string) error {
	for _, p := range strings.Split(v, ",") {
		switch strings.TrimSpace(p) {
		case "success-file", "":
		case "metastore":
			return fmt.Errorf("the 'metastore' policy needs a Hive metastore, which eddy does not have; use 'success-file'")
		case "custom":
			return fmt.Errorf("eddy runs no custom partition commit policy classes; use 'success-file'")
		default:
			return fmt.Errorf("unknown policy %q; use 'success-file'", strings.TrimSpace(p))
		}
	}
	return nil
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table != nil {
		return newTableSourceOf(ctx)
	}
	newDec, err := connector.DecoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return NewSource[any](sourceOptionsOf(ctx), newDec), nil
}

func sourceOptionsOf(ctx connector.Context) SourceOptions {
	return SourceOptions{
		Paths:           []string{ctx.Options.String("path")},
		MonitorInterval: ctx.Options.Duration("source.monitor-interval"),
		SkipFirstLine:   ctx.Options.Bool("source.skip-first-line"),
	}
}

// tableContext returns the layout of the table of ctx and the context of
// its format, which sees the columns of the files only.
func tableContext(ctx connector.Context) (*tableLayout, connector.Context, error) {
	if len(ctx.Table.Metadata) > 0 {
		return nil, ctx, connector.UnknownMetadata(spec.Name, ctx.Table.Metadata[0])
	}
	layout, err := newTableLayout(ctx.Table, ctx.Options.String("partition.default-name"))
	if err != nil {
		return nil, ctx, err
	}
	fctx := ctx
	fctx.Table = &connector.Table{Schema: layout.data}
	return layout, fctx, nil
}

func formatMode(ctx connector.Context) changelog.Mode {
	switch f, _ := ctx.Options.Format(); f {
	case "debezium-json", "canal-json", "maxwell-json":
		return changelog.Retract
	}
	return changelog.InsertOnly
}

func newTableSourceOf(ctx connector.Context) (connector.Source[connector.TableRecord], error) {
	layout, fctx, err := tableContext(ctx)
	if err != nil {
		return nil, err
	}
	newDec, err := connector.DecoderMaker[connector.TableRecord](fctx)
	if err != nil {
		return nil, err
	}
	src := NewSource[connector.TableRecord](sourceOptionsOf(ctx), newDec)
	root := strings.TrimPrefix(ctx.Options.String("path"), "file://")
	return newLookupTableSource(&tableSource{Source: src, layout: layout, root: root, mode: formatMode(ctx)}, ctx), nil
}

func (factory) NewSink(ctx connector.Context) (any, error) {
	format, _ := ctx.Options.Format()
	suffix := ".jsonl"
	if format == "csv" {
		suffix = ".csv"
	}
	dir := strings.TrimPrefix(ctx.Options.String("path"), "file://")
	if ctx.Table != nil {
		return newTableSinkOf(ctx, dir, suffix)
	}
	newEnc, err := connector.EncoderMaker[any](ctx)
	if err != nil {
		return nil, err
	}
	return NewSink[any](SinkOptions{Dir: dir, Suffix: suffix}, newEnc), nil
}

func newTableSinkOf(ctx connector.Context, dir, suffix string) (connector.Sink[connector.TableRecord], error) {
	layout, fctx, err := tableContext(ctx)
	if err != nil {
		return nil, err
	}
	newEnc, err := connector.EncoderMaker[connector.TableRecord](fctx)
	if err != nil {
		return nil, err
	}
	o := ctx.Options
	pc := PartitionCommit{
		PartitionTime:    o.String("sink.partition-commit.trigger") == "partition-time",
		Delay:            o.Duration("sink.partition-commit.delay"),
		TimestampPattern: o.String("partition.time-extractor.timestamp-pattern"),
	}
	for _, p := range o.List("sink.partition-commit.policy.kind") {
		if p == "success-file" {
			pc.SuccessFile = o.String("sink.partition-commit.success-file.name")
		}
	}
	if pc.SuccessFile != "" && !layout.partitioned() {
		return nil, &connector.OptionError{Connector: spec.Name, Key: "sink.partition-commit.policy.kind",
			Problem: "is set but the table has no partitions to commit; declare PARTITIONED BY (...) or remove the option"}
	}
	for _, m := range patternVar.FindAllString(pc.TimestampPattern, -1) {
		if i := ctx.Table.Column(m[1:]); i < 0 || !isPartitionKey(ctx.Table, i) {
			return nil, &connector.OptionError{Connector: spec.Name, Key: "partition.time-extractor.timestamp-pattern",
				Problem: fmt.Sprintf("= '%s' refers to %s, which is not a partition column; use $ and the name of a PARTITIONED BY column", pc.TimestampPattern, m)}
		}
	}
	return newTableSink(dir, suffix, layout, pc, formatMode(ctx), newEnc), nil
}

func isPartitionKey(t *connector.Table, i int) bool {
	for _, k := range t.PartitionKeys {
		if k == i {
			return true
		}
	}
	return false
}

func init() { connector.Register(factory{}) }
