package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// factory is a configurable test factory.
type factory struct {
	spec      connector.Spec
	newSource func(connector.Context) (any, error)
	newSink   func(connector.Context) (any, error)
}

func (f factory) Spec() connector.Spec { return f.spec }
func (f factory) NewSource(ctx connector.Context) (any, error) {
	return f.newSource(ctx)
}
func (f factory) NewSink(ctx connector.Context) (any, error) { return f.newSink(ctx) }

// sourceOnly and sinkOnly implement one side.
type sourceOnly struct{ spec connector.Spec }

func (f sourceOnly) Spec() connector.Spec                     { return f.spec }
func (f sourceOnly) NewSource(connector.Context) (any, error) { return nil, nil }

type formatFactory struct {
	spec connector.Spec
}

func (f formatFactory) Spec() connector.Spec { return f.spec }

// NewDecoder decodes "a,b" into a struct's first two string fields, or into
// a string, by reflection: it makes a Decoder[any].
func (f formatFactory) NewDecoder(ctx connector.Context) (any, error) {
	t := ctx.RecordType
	return connector.DecoderFunc[any](func(b []byte) (any, error) {
		v := reflect.New(t).Elem()
		parts := strings.Split(string(b), ",")
		if t.Kind() == reflect.String {
			v.SetString(string(b))
			return v.Interface(), nil
		}
		if t.Kind() != reflect.Struct || len(parts) != t.NumField() {
			return nil, fmt.Errorf("cannot decode %q into %v", b, t)
		}
		for i, p := range parts {
			v.Field(i).SetString(p)
		}
		return v.Interface(), nil
	}), nil
}

func (f formatFactory) NewEncoder(ctx connector.Context) (any, error) {
	return connector.EncoderFunc[any](func(dst []byte, v any) ([]byte, error) {
		return fmt.Appendf(dst, "%v", v), nil
	}), nil
}

// formatAndSource claims to be both.
type formatAndSource struct{ formatFactory }

func (formatAndSource) NewSource(connector.Context) (any, error) { return nil, nil }

func mustPanic(t *testing.T, what, contains string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", what)
			return
		}
		if !strings.Contains(fmt.Sprint(r), contains) {
			t.Errorf("%s: panic %q does not say %q", what, r, contains)
		}
	}()
	f()
}

func TestRegisterRejectsBadSpecs(t *testing.T) {
	src := connector.Spec{Name: "src", Kind: connector.SourceKind}
	r := connector.NewRegistry()
	r.Register(sourceOnly{src})
	mustPanic(t, "duplicate", `"src" registered twice`, func() { r.Register(sourceOnly{src}) })
	bad := func(mod func(*connector.Spec)) sourceOnly {
		s := connector.Spec{Name: "x", Kind: connector.SourceKind}
		mod(&s)
		return sourceOnly{s}
	}
	for _, c := range []struct {
		what, contains string
		f              connector.Factory
	}{
		{"no name", "has no name", bad(func(s *connector.Spec) { s.Name = "" })},
		{"no kind", "has no kind", bad(func(s *connector.Spec) { s.Kind = 0 })},
		{"sink without NewSink", "is no SinkFactory", bad(func(s *connector.Spec) { s.Kind = connector.SinkKind })},
		{"required with default", "is required and has a default", bad(func(s *connector.Spec) {
			s.Options = []connector.Option{{Key: "a", Required: true, Default: "1"}}
		})},
		{"enum without values", "lists no values", bad(func(s *connector.Spec) {
			s.Options = []connector.Option{{Key: "a", Type: connector.Enum}}
		})},
		{"bad default", "default of option", bad(func(s *connector.Spec) {
			s.Options = []connector.Option{{Key: "a", Type: connector.Int, Default: "many"}}
		})},
		{"key twice", "declared twice", bad(func(s *connector.Spec) {
			s.Options = []connector.Option{{Key: "a"}, {Key: "b", FallbackKeys: []string{"a"}}}
		})},
		{"format option and formats", "declares the \"format\" option itself", bad(func(s *connector.Spec) {
			s.Options, s.Formats = []connector.Option{{Key: "format"}}, []string{"json"}
		})},
		{"format and source", "cannot also be", formatAndSource{formatFactory{connector.Spec{Name: "f", Kind: connector.FormatKind | connector.SourceKind}}}},
	} {
		mustPanic(t, c.what, c.contains, func() { connector.NewRegistry().Register(c.f) })
	}
	// Connectors and formats have separate name spaces.
	r.Register(formatFactory{connector.Spec{Name: "src", Kind: connector.FormatKind}})
}

func TestUnknownNamesListTheRegisteredOnes(t *testing.T) {
	r := connector.NewRegistry()
	r.Register(sourceOnly{connector.Spec{Name: "b", Kind: connector.SourceKind}})
	r.Register(sourceOnly{connector.Spec{Name: "a", Kind: connector.SourceKind}})
	r.Register(formatFactory{connector.Spec{Name: "txt", Kind: connector.FormatKind}})
	if _, err := r.Connector("kafka"); err == nil || !strings.Contains(err.Error(), `unknown connector "kafka"`) || !strings.Contains(err.Error(), "registered: a, b") {
		t.Errorf("Connector(kafka) = %v", err)
	}
	if _, err := r.Format("avro"); err == nil || !strings.Contains(err.Error(), "registered: txt") {
		t.Errorf("Format(avro) = %v", err)
	}
	if _, err := connector.NewRegistry().Connector("x"); err == nil || !strings.Contains(err.Error(), "registered: none") {
		t.Errorf("empty registry: %v", err)
	}
	var names []string
	for _, s := range r.Specs() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "txt"}) {
		t.Errorf("Specs() names %q; want connectors then formats, by name", names)
	}
}

// intSource is a source of ints from one split.
type intSource struct{ n int }

func (s intSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "all", State: []byte{0}}}, nil
	})
}

func (s intSource) NewReader(connector.ReaderContext) (connector.Reader[int], error) {
	return &intReader{n: s.n}, nil
}

type intReader struct {
	n, pos int
	has    bool
}

func (r *intReader) AddSplits(s []connector.Split) error {
	r.has = len(s) > 0
	if r.has {
		r.pos = int(s[0].State[0])
	}
	return nil
}
func (r *intReader) Read(out connector.Output[int]) error {
	if !r.has {
		return nil
	}
	so := out.Split("all")
	for ; r.pos < r.n && out.Room() > 0; r.pos++ {
		so.Emit(r.pos)
	}
	if r.pos == r.n {
		so.Finish()
		r.has = false
	}
	return nil
}
func (r *intReader) SnapshotState(int64) ([]connector.Split, error) {
	if !r.has {
		return nil, nil
	}
	return []connector.Split{{ID: "all", State: []byte{byte(r.pos)}}}, nil
}
func (r *intReader) Close() error { return nil }

func TestOpenSourceChecksTheType(t *testing.T) {
	r := connector.NewRegistry()
	r.Register(factory{spec: connector.Spec{Name: "ints", Kind: connector.SourceKind | connector.SinkKind},
		newSource: func(connector.Context) (any, error) { return intSource{3}, nil },
		newSink:   func(connector.Context) (any, error) { return nil, errors.New("no sink today") }})
	r.Register(factory{spec: connector.Spec{Name: "sinkonly", Kind: connector.SinkKind},
		newSink: func(connector.Context) (any, error) { return nil, nil }})
	if _, err := connector.OpenSource[int](r, "ints", nil); err != nil {
		t.Fatal(err)
	}
	_, err := connector.OpenSource[string](r, "ints", nil)
	if err == nil || !strings.Contains(err.Error(), "not the Source[string] asked for") || !strings.Contains(err.Error(), `"ints"`) {
		t.Errorf("OpenSource[string] of a source of ints: %v", err)
	}
	if _, err := connector.OpenSink[int](r, "ints", nil); err == nil || !strings.Contains(err.Error(), "no sink today") {
		t.Errorf("a factory's error is not returned: %v", err)
	}
	if _, err := connector.OpenSource[int](r, "sinkonly", nil); err == nil || !strings.Contains(err.Error(), "is a sink, not a source") {
		t.Errorf("OpenSource of a sink: %v", err)
	}
	if _, err := connector.OpenSource[int](r, "ints", map[string]string{"x": "1"}); err == nil || !strings.Contains(err.Error(), "takes no options") {
		t.Errorf("an option of a connector without options: %v", err)
	}
}

// pair is the record of the reflective tests.
type pair struct{ A, B string }

// anySource reads the lines of a fixed input with the decoder of its format,
// for any record type: it is a Source[any].
type anySource struct {
	lines []string
	dec   connector.Decoder[any]
	wrong bool // emit an int instead of the decoded record
	log   *[]string
}

func (s anySource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		return []connector.Split{{ID: "lines", State: []byte{0}}}, nil
	})
}

func (s anySource) NewReader(connector.ReaderContext) (connector.Reader[any], error) {
	return &anyReader{s: s}, nil
}

type anyReader struct {
	s   anySource
	pos int
	has bool
}

func (r *anyReader) AddSplits(sp []connector.Split) error {
	for _, x := range sp {
		r.pos, r.has = int(x.State[0]), true
	}
	return nil
}
func (r *anyReader) Read(out connector.Output[any]) error {
	if !r.has {
		return nil
	}
	so := out.Split("lines")
	for ; r.pos < len(r.s.lines) && out.Room() > 0; r.pos++ {
		if r.s.wrong {
			so.Emit(r.pos)
			continue
		}
		err := r.s.dec.Decode([]byte(r.s.lines[r.pos]), func(v any) { so.EmitAt(v, int64(r.pos)) })
		if err != nil {
			if berr := out.BadRecord(connector.DeadLetter{Location: fmt.Sprintf("line %d", r.pos+1), Raw: r.s.lines[r.pos], Error: err.Error()}); berr != nil {
				return berr
			}
		}
	}
	if r.pos == len(r.s.lines) {
		so.Finish()
		r.has = false
	}
	return nil
}
func (r *anyReader) SnapshotState(int64) ([]connector.Split, error) {
	if !r.has {
		return nil, nil
	}
	return []connector.Split{{ID: "lines", State: []byte{byte(r.pos)}}}, nil
}
func (r *anyReader) Close() error { return nil }
func (r *anyReader) NoMoreSplits() {
	*r.s.log = append(*r.s.log, "no more splits")
}
func (r *anyReader) HandleEvent(e []byte) error {
	*r.s.log = append(*r.s.log, "event "+string(e))
	return nil
}
func (r *anyReader) NotifyCheckpointComplete(id int64) error {
	*r.s.log = append(*r.s.log, fmt.Sprint("checkpoint ", id))
	return nil
}

// reflectiveRegistry holds a "lines" source and sink that work on any
// record type through the "txt" format.
func reflectiveRegistry(lines []string, wrong bool, log *[]string, written *[]string) *connector.Registry {
	r := connector.NewRegistry()
	r.Register(formatFactory{connector.Spec{Name: "txt", Kind: connector.FormatKind, Description: "Comma-separated strings.",
		Options: []connector.Option{{Key: "strict", Type: connector.Bool, Description: "Strictness."}}}})
	r.Register(factory{
		spec: connector.Spec{Name: "lines", Kind: connector.SourceKind | connector.SinkKind, Formats: []string{"txt"}},
		newSource: func(ctx connector.Context) (any, error) {
			d, err := connector.DecoderFor[any](ctx)
			if err != nil {
				return nil, err
			}
			return anySource{lines: lines, dec: d, wrong: wrong, log: log}, nil
		},
		newSink: func(ctx connector.Context) (any, error) {
			e, err := connector.EncoderFor[any](ctx)
			if err != nil {
				return nil, err
			}
			return connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[any, []string], error) {
				return &linesCommitter{enc: e, out: written, log: log}, nil
			}), nil
		},
	})
	return r
}

// linesCommitter is a transactional sink of lines, for any record type.
type linesCommitter struct {
	enc connector.Encoder[any]
	out *[]string
	log *[]string
}

func (c *linesCommitter) Begin() ([]string, error) { return []string{}, nil }
func (c *linesCommitter) Write(tx *[]string, v any) error {
	b, err := c.enc.Encode(nil, v)
	*tx = append(*tx, string(b))
	return err
}
func (c *linesCommitter) PreCommit(*[]string) error { return nil }
func (c *linesCommitter) Commit(tx []string) error {
	*c.out = append(*c.out, tx...)
	return nil
}
func (c *linesCommitter) Abort([]string) error          { return nil }
func (c *linesCommitter) Recover(_, _ [][]string) error { return nil }
func (c *linesCommitter) ChangelogMode() changelog.Mode { return changelog.Retract }
func (c *linesCommitter) NotifyCheckpointComplete(id int64) error {
	*c.log = append(*c.log, fmt.Sprint("committer checkpoint ", id))
	return nil
}
func (c *linesCommitter) ProcessWatermark(wm int64) error {
	*c.log = append(*c.log, fmt.Sprint("committer watermark ", wm))
	return nil
}

// readerCtx, enumCtx and writerCtx are contexts for calling readers,
// enumerators and writers directly.
type readerCtx struct{}

func (readerCtx) SourceName() string    { return "test" }
func (readerCtx) Subtask() int          { return 0 }
func (readerCtx) Parallelism() int      { return 1 }
func (readerCtx) RequestSplit()         {}
func (readerCtx) SendEvent([]byte)      {}
func (readerCtx) ProcessingTime() int64 { return 0 }
func (readerCtx) Log() *slog.Logger     { return slog.Default() }

type writerCtx struct{}

func (writerCtx) SinkName() string      { return "test" }
func (writerCtx) Subtask() int          { return 0 }
func (writerCtx) Parallelism() int      { return 1 }
func (writerCtx) ProcessingTime() int64 { return 0 }
func (writerCtx) Log() *slog.Logger     { return slog.Default() }

func TestReflectiveAdaptersRunInAJob(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry([]string{"a,b", "c,d", "bad", "e,f"}, false, &log, &written)
	opts := map[string]string{"format": "txt", "txt.strict": "true"}
	src, err := connector.OpenSource[pair](r, "lines", opts)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := connector.OpenSink[pair](r, "lines", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sink.(connector.TransactionalSink[pair]); !ok {
		t.Fatalf("the typed sink of a TransactionalSink[any] is a %T, not transactional", sink)
	}
	if m := sink.(connector.ChangelogSink).ChangelogMode(); m != changelog.InsertOnly {
		t.Errorf("a sink that declares no mode is taken as %v", m)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	st := eddy.FromSource(env, "lines", src, eddy.NoWatermarks[pair](), eddy.OnBadRecord(eddy.DeadLetterBadRecords))
	dead := eddy.Collect(eddy.DeadLetters(st))
	eddy.WriteTo(st, "lines", sink)
	if err := env.Execute(context.Background(), "reflective"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"{a b}", "{c d}", "{e f}"}; !slices.Equal(written, want) {
		t.Errorf("written %q, want %q", written, want)
	}
	if d := dead.Values(); len(d) != 1 || d[0].Location != "line 3" || d[0].Raw != "bad" {
		t.Errorf("dead letters %+v", d)
	}
	if !slices.Contains(log, "no more splits") {
		t.Errorf("the reader was not told that no more splits come: %q", log)
	}
}

func TestReflectiveAdaptersForwardOptionalInterfaces(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry([]string{"a,b"}, false, &log, &written)
	opts := map[string]string{"format": "txt"}
	src, err := connector.OpenSource[pair](r, "lines", opts)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := src.NewReader(readerCtx{})
	if err != nil {
		t.Fatal(err)
	}
	rd.(connector.NoMoreSplitsHandler).NoMoreSplits()
	if err := rd.(connector.ReaderEventHandler).HandleEvent([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := rd.(connector.CheckpointListener).NotifyCheckpointComplete(7); err != nil {
		t.Fatal(err)
	}
	sink, err := connector.OpenSink[pair](r, "lines", opts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.(connector.TransactionalSink[pair]).NewTransactionalWriter(writerCtx{})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := w.(connector.CheckpointListener)
	if !ok {
		t.Fatalf("the typed transactional writer %T does not pass on checkpoint notifications", w)
	}
	if err := l.NotifyCheckpointComplete(8); err != nil {
		t.Fatal(err)
	}
	// The watermark reaches the committer through the typed writers, the
	// transactional one and the flushing one.
	fw, err := sink.NewWriter(writerCtx{})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []any{w, fw} {
		wl, ok := w.(connector.WatermarkListener)
		if !ok {
			t.Fatalf("the typed writer %T does not pass on watermarks", w)
		}
		if err := wl.ProcessWatermark(int64(100 + i)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"no more splits", "event hello", "checkpoint 7", "committer checkpoint 8", "committer watermark 100", "committer watermark 101"}
	if !slices.Equal(log, want) {
		t.Errorf("calls %q, want %q", log, want)
	}
}

func TestReflectiveSourceOfTheWrongTypePanics(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry([]string{"a,b"}, true, &log, &written)
	src, err := connector.OpenSource[pair](r, "lines", map[string]string{"format": "txt"})
	if err != nil {
		t.Fatal(err)
	}
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.Collect(eddy.FromSource(env, "lines", src, eddy.NoWatermarks[pair]()))
	err = env.Execute(context.Background(), "wrong type")
	if err == nil || !strings.Contains(err.Error(), "made a int where a connector_test.pair was asked for") {
		t.Errorf("a reflective source of ints read as pairs: %v", err)
	}
}

func TestFormatOptionsThroughTheConnector(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry(nil, false, &log, &written)
	for _, c := range []struct {
		options map[string]string
		want    string
	}{
		{map[string]string{"format": "txt", "txt.strict": "maybe"}, `connector "lines": option 'txt.strict' = 'maybe': not true or false`},
		{map[string]string{"format": "txt", "txt.strct": "true"}, `option 'txt.strct' is unknown (did you mean 'txt.strict'?); valid options are txt.strict`},
		{map[string]string{"format": "json"}, `'json' is not a format this connector supports; use one of txt`},
	} {
		_, err := connector.OpenSource[pair](r, "lines", c.options)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenSource(%v) = %v; want %q", c.options, err, c.want)
		}
		var oe *connector.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("OpenSource(%v): %T is no OptionError", c.options, err)
		}
	}
	// A format the connector lists that is not registered.
	r.Register(factory{spec: connector.Spec{Name: "other", Kind: connector.SourceKind, Formats: []string{"avro"}},
		newSource: func(connector.Context) (any, error) { return nil, nil }})
	if _, err := connector.OpenSource[pair](r, "other", map[string]string{"format": "avro"}); err == nil || !strings.Contains(err.Error(), `unknown format "avro"`) {
		t.Errorf("an unregistered format: %v", err)
	}
}

func TestTypedDecodersAndEncoders(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry(nil, false, &log, &written)
	d, err := connector.OpenDecoder[pair](r, "txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []pair
	if err := d.Decode([]byte("x,y"), func(p pair) { got = append(got, p) }); err != nil || !slices.Equal(got, []pair{{"x", "y"}}) {
		t.Errorf("decoded %v, %v", got, err)
	}
	if err := d.Decode([]byte("x"), func(pair) {}); err == nil {
		t.Error("a bad message decoded")
	}
	e, err := connector.OpenEncoder[pair](r, "txt", map[string]string{"strict": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := e.Encode([]byte("> "), pair{"p", "q"}); err != nil || string(b) != "> {p q}" {
		t.Errorf("encoded %q, %v", b, err)
	}
	if _, err := connector.OpenDecoder[pair](r, "lines", nil); err == nil || !strings.Contains(err.Error(), `unknown format "lines"`) {
		t.Errorf("a connector opened as a format: %v", err)
	}
}

func TestTwoPhaseOutsideTheRuntimeCommitsAtFlush(t *testing.T) {
	var log, written []string
	r := reflectiveRegistry(nil, false, &log, &written)
	sink, err := connector.OpenSink[pair](r, "lines", map[string]string{"format": "txt"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewWriter(writerCtx{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]pair{{"a", "b"}}, []int64{0}); err != nil {
		t.Fatal(err)
	}
	if len(written) != 0 {
		t.Fatal("a write is visible before the flush")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(written, []string{"{a b}"}) {
		t.Errorf("written %q", written)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTransactionsTravelAsJSON checks the encoding of a TwoPhase sink's
// transactions, which checkpoints hold.
func TestTransactionsTravelAsJSON(t *testing.T) {
	var committed []fileTx
	sink := connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[int, fileTx], error) {
		return &jsonCommitter{committed: &committed}, nil
	})
	w, err := sink.NewTransactionalWriter(writerCtx{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := w.PreCommit(); err != nil || b != nil {
		t.Fatalf("pre-commit without a transaction: %q, %v", b, err)
	}
	if err := w.Write([]int{1, 2}, []int64{0, 0}); err != nil {
		t.Fatal(err)
	}
	b, err := w.PreCommit()
	if err != nil {
		t.Fatal(err)
	}
	var back fileTx
	if err := json.Unmarshal(b, &back); err != nil || back.File != "f1" {
		t.Fatalf("transaction %s: %v", b, err)
	}
	if err := w.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit([]byte("not json")); err == nil || !strings.Contains(err.Error(), "decoding a connector_test.fileTx transaction") {
		t.Errorf("a corrupt transaction: %v", err)
	}
	if err := w.Recover([][]byte{b}, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(committed, []fileTx{{"f1"}}) {
		t.Errorf("committed %v", committed)
	}
}

// fileTx is the transaction of jsonCommitter.
type fileTx struct {
	File string `json:"file"`
}

type jsonCommitter struct {
	n         int
	committed *[]fileTx
}

func (c *jsonCommitter) Begin() (fileTx, error) {
	c.n++
	return fileTx{fmt.Sprint("f", c.n)}, nil
}
func (c *jsonCommitter) Write(*fileTx, int) error    { return nil }
func (c *jsonCommitter) PreCommit(*fileTx) error     { return nil }
func (c *jsonCommitter) Abort(fileTx) error          { return nil }
func (c *jsonCommitter) Recover(_, _ []fileTx) error { return nil }
func (c *jsonCommitter) Commit(tx fileTx) error {
	*c.committed = append(*c.committed, tx)
	return nil
}

// copyingCommitter is a jsonCommitter that says it keeps nothing of the
// records given to Write (connector.NonRetainingWriter).
type copyingCommitter struct{ jsonCommitter }

func (*copyingCommitter) RetainsNoRecords() bool { return true }

// TestTwoPhaseRetainsWhatItsCommitterRetains checks that the writers of a
// TwoPhase sink, transactional or flushing, keep nothing of their records
// (connector.NonRetainingWriter) exactly when their committer says so.
func TestTwoPhaseRetainsWhatItsCommitterRetains(t *testing.T) {
	var committed []fileTx
	for _, c := range []struct {
		name      string
		committer connector.TwoPhaseCommitter[int, fileTx]
		want      bool
	}{
		{"a committer that says nothing", &jsonCommitter{committed: &committed}, false},
		{"a committer that keeps nothing", &copyingCommitter{jsonCommitter{committed: &committed}}, true},
	} {
		sink := connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[int, fileTx], error) {
			return c.committer, nil
		})
		tw, err := sink.NewTransactionalWriter(writerCtx{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := sink.NewWriter(writerCtx{})
		if err != nil {
			t.Fatal(err)
		}
		for kind, writer := range map[string]any{"transactional": tw, "flushing": w} {
			r, ok := writer.(connector.NonRetainingWriter)
			if got := ok && r.RetainsNoRecords(); got != c.want {
				t.Errorf("%s: the %s writer says it keeps nothing of its records: %v, want %v", c.name, kind, got, c.want)
			}
		}
	}
}
