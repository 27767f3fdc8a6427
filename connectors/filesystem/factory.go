package filesystem

import (
	"strings"

	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/formats" // the json and csv formats
)

var spec = connector.Spec{
	Name:        "filesystem",
	Kind:        connector.SourceKind | connector.SinkKind,
	Description: "Reads files line by line (a file, a directory, or glob patterns), optionally watching for new files; writes exactly-once part files into a directory.",
	Formats:     []string{"json", "csv"},
	Options: []connector.Option{
		{Key: "path", Type: connector.String, Required: true,
			Description: "The file, directory or glob pattern to read, or the directory to write part files into; a plain path or a file:// URI."},
		{Key: "source.monitor-interval", Type: connector.Duration,
			Description: "If set, the source keeps running and looks for new files under the path at this interval; otherwise it reads the files there are and ends."},
		{Key: "source.skip-first-line", Type: connector.Bool, Default: "false",
			Description: "Whether the first line of every file is a header, and skipped."},
	},
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	if _, err := connector.DecoderFor[any](ctx); err != nil {
		return nil, err
	}
	opts := SourceOptions{
		Paths:           []string{ctx.Options.String("path")},
		MonitorInterval: ctx.Options.Duration("source.monitor-interval"),
		SkipFirstLine:   ctx.Options.Bool("source.skip-first-line"),
	}
	return NewSource[any](opts, func() connector.Decoder[any] {
		d, _ := connector.DecoderFor[any](ctx)
		return d
	}), nil
}

func (factory) NewSink(ctx connector.Context) (any, error) {
	if _, err := connector.EncoderFor[any](ctx); err != nil {
		return nil, err
	}
	format, _ := ctx.Options.Format()
	suffix := ".jsonl"
	if format == "csv" {
		suffix = ".csv"
	}
	dir := strings.TrimPrefix(ctx.Options.String("path"), "file://")
	return NewSink[any](SinkOptions{Dir: dir, Suffix: suffix}, func() connector.Encoder[any] {
		e, _ := connector.EncoderFor[any](ctx)
		return e
	}), nil
}

func init() { connector.Register(factory{}) }
