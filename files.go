package eddy

import (
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connectors/filesystem"
	"github.com/eddystream/eddy/formats"
)

// FileOptions configures the file sources.
type FileOptions[T any] struct {
	// Watermarks timestamps the records; the zero value gives none.
	Watermarks WatermarkStrategy[T]
	// OnBadRecord says what to do with a line that does not parse.
	OnBadRecord BadRecordPolicy
	// MonitorInterval, if positive, keeps the source running: every
	// interval it also reads the files that appeared since. Files must be
	// complete when they appear.
	MonitorInterval time.Duration
}

// ReadJSONLines adds a source reading JSON objects, one a line, from the
// files (directories, glob patterns) of paths, each decoded into a T with
// encoding/json. Each file is a split, dealt to the subtasks round-robin. A
// line that does not decode fails the job with its file and line number, or
// goes to DeadLetters if opts.OnBadRecord says so. It is the filesystem
// connector with the json format.
func ReadJSONLines[T any](env *Environment, opts FileOptions[T], paths ...string) *Stream[T] {
	src := filesystem.NewSource(filesystem.SourceOptions{Paths: paths, MonitorInterval: opts.MonitorInterval}, formats.JSON[T])
	return FromSource(env, "JSONLines", src, opts.Watermarks, OnBadRecord(opts.OnBadRecord))
}

// CSVOptions configures ReadCSV.
type CSVOptions[T any] struct {
	FileOptions[T]
	// Comma is the field separator; 0 means ','.
	Comma rune
	// Header skips the first line of every file.
	Header bool
	// Comment, if set, marks comment lines: lines that start with '#' are
	// skipped. Only '#' is supported.
	Comment rune
}

// ReadCSV adds a source reading comma-separated lines from the files of
// paths; parse turns the fields of a line into a record. Quoted fields may
// not span lines. Bad lines are handled as in ReadJSONLines.
func ReadCSV[T any](env *Environment, parse func(fields []string) (T, error), opts CSVOptions[T], paths ...string) *Stream[T] {
	if opts.Comment != 0 && opts.Comment != '#' {
		env.fail(errf("ReadCSV: comment character %q is not supported; use '#'", opts.Comment))
	}
	fo := formats.CSVOptions{FieldDelimiter: opts.Comma, AllowComments: opts.Comment != 0}
	src := filesystem.NewSource(filesystem.SourceOptions{Paths: paths, MonitorInterval: opts.MonitorInterval, SkipFirstLine: opts.Header},
		func() connector.Decoder[T] { return formats.CSV(parse, fo) })
	return FromSource(env, "CSV", src, opts.Watermarks, OnBadRecord(opts.OnBadRecord))
}
