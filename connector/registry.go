package connector

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Factory is what registers under a name: a connector or a format with the
// spec of its options. It also implements SourceFactory, SinkFactory or
// FormatFactory, as its spec's Kind says.
type Factory interface {
	// Spec returns the factory's spec.
	Spec() Spec
}

// Context is what a factory is given to make a source, sink, decoder or
// encoder.
type Context struct {
	// Name names what is being made (a table, an operator), for errors.
	Name string
	// Options are the user's options, validated against the factory's spec.
	Options Options
	// RecordType is the Go type T of the records asked for. The factory
	// returns a Source[T], Sink[T], Decoder[T] or Encoder[T], or, if it
	// works on values of any type through reflection, a Source[any],
	// Sink[any], Decoder[any] or Encoder[any] whose records are values of
	// RecordType; or an error saying which types it can make.
	RecordType reflect.Type
	// Registry is the registry the factory was found in, for factories that
	// look up a format.
	Registry *Registry
	// Table, when the connector backs a table of eddy's SQL, describes the
	// table; RecordType is then TableRecord. Nil otherwise.
	Table *Table
}

// SourceFactory makes sources.
type SourceFactory interface {
	Factory
	// NewSource returns a Source[T] for T = ctx.RecordType.
	NewSource(ctx Context) (any, error)
}

// SinkFactory makes sinks.
type SinkFactory interface {
	Factory
	// NewSink returns a Sink[T] (or TransactionalSink[T]) for T =
	// ctx.RecordType.
	NewSink(ctx Context) (any, error)
}

// FormatFactory makes decoders and encoders.
type FormatFactory interface {
	Factory
	// NewDecoder returns a Decoder[T] for T = ctx.RecordType.
	NewDecoder(ctx Context) (any, error)
	// NewEncoder returns an Encoder[T] for T = ctx.RecordType.
	NewEncoder(ctx Context) (any, error)
}

// Registry holds connectors and formats by name. It is safe for concurrent
// use. Most programs use Default, which the built-in connectors register in
// when their packages are imported (import
// github.com/eddystream/eddy/connectors/all for all of them); tests can
// build a registry of their own.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
	formats   map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{factories: map[string]Factory{}, formats: map[string]Factory{}}
}

// Default is the registry the built-in connectors and formats register in.
var Default = NewRegistry()

// Register adds f to the default registry. It panics if the name is taken
// or the spec is invalid, as database/sql.Register does.
func Register(f Factory) { Default.Register(f) }

// Register adds f under its spec's name. Connectors and formats have
// separate name spaces. It panics if the name is taken, the spec is invalid,
// or f does not implement the interfaces its Kind names.
func (r *Registry) Register(f Factory) {
	s := f.Spec()
	if err := s.check(); err != nil {
		panic(err)
	}
	if s.Kind == 0 {
		panic(fmt.Sprintf("connector %q: spec has no kind", s.Name))
	}
	if _, ok := f.(SourceFactory); s.Kind&SourceKind != 0 && !ok {
		panic(fmt.Sprintf("connector %q: spec says source but %T is no SourceFactory", s.Name, f))
	}
	if _, ok := f.(SinkFactory); s.Kind&SinkKind != 0 && !ok {
		panic(fmt.Sprintf("connector %q: spec says sink but %T is no SinkFactory", s.Name, f))
	}
	if _, ok := f.(FormatFactory); s.Kind&FormatKind != 0 && !ok {
		panic(fmt.Sprintf("connector %q: spec says format but %T is no FormatFactory", s.Name, f))
	}
	if s.Kind&FormatKind != 0 && s.Kind != FormatKind {
		panic(fmt.Sprintf("connector %q: a format cannot also be a source or sink", s.Name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.factories
	if s.Kind == FormatKind {
		m = r.formats
	}
	if _, dup := m[s.Name]; dup {
		panic(fmt.Sprintf("connector: %q registered twice", s.Name))
	}
	m[s.Name] = f
}

// Connector returns the connector registered as name, or an error that
// lists the registered ones.
func (r *Registry) Connector(name string) (Factory, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if f, ok := r.factories[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("connector: unknown connector %q (forgotten import of its package, or of github.com/eddystream/eddy/connectors/all?); registered: %s", name, names(r.factories))
}

// Format returns the format registered as name, or an error that lists the
// registered ones.
func (r *Registry) Format(name string) (Factory, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if f, ok := r.formats[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("connector: unknown format %q (forgotten import?); registered: %s", name, names(r.formats))
}

func names(m map[string]Factory) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Specs returns the specs of every registered connector and format, sorted
// by kind (connectors first) and name.
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Spec
	for _, m := range []map[string]Factory{r.factories, r.formats} {
		var part []Spec
		for _, f := range m {
			part = append(part, f.Spec())
		}
		sort.Slice(part, func(i, j int) bool { return part[i].Name < part[j].Name })
		out = append(out, part...)
	}
	return out
}

// validate looks up name and validates options against its spec.
func (r *Registry) validate(name string, options map[string]string, format bool) (Factory, Options, error) {
	var f Factory
	var err error
	if format {
		f, err = r.Format(name)
	} else {
		f, err = r.Connector(name)
	}
	if err != nil {
		return nil, Options{}, err
	}
	spec := f.Spec()
	opts, err := spec.Validate(options)
	if err != nil {
		return nil, Options{}, err
	}
	if fn, fopts := opts.Format(); fn != "" {
		ff, err := r.Format(fn)
		if err != nil {
			return nil, Options{}, fmt.Errorf("connector %q: %w", name, err)
		}
		fspec := ff.Spec()
		// The format's options are named as the user wrote them, with the
		// format's prefix, in an error of the connector.
		if _, err := fspec.validate(fopts, name, fn+"."); err != nil {
			return nil, Options{}, err
		}
		opts.formatSpec = &fspec
	}
	return f, opts, nil
}

// typed asserts that a factory made a V, or an erased E that erase adapts.
func typed[V, E any](name, what string, v any, err error, erase func(E) V) (V, error) {
	var zero V
	if err != nil {
		return zero, err
	}
	if out, ok := v.(V); ok {
		return out, nil
	}
	if e, ok := v.(E); ok {
		return erase(e), nil
	}
	return zero, fmt.Errorf("connector %q: made a %T, not the %s asked for", name, v, what)
}

// OpenSource validates options against the connector name's spec and makes
// a source of records of type T.
func OpenSource[T any](r *Registry, name string, options map[string]string) (Source[T], error) {
	f, opts, err := r.validate(name, options, false)
	if err != nil {
		return nil, err
	}
	sf, ok := f.(SourceFactory)
	if !ok || f.Spec().Kind&SourceKind == 0 {
		return nil, fmt.Errorf("connector %q is a %v, not a source", name, f.Spec().Kind)
	}
	v, err := sf.NewSource(Context{Name: name, Options: opts, RecordType: reflect.TypeFor[T](), Registry: r})
	return typed(name, fmt.Sprintf("Source[%v]", reflect.TypeFor[T]()), v, err, unboxSource[T])
}

// OpenSink validates options against the connector name's spec and makes a
// sink of records of type T.
func OpenSink[T any](r *Registry, name string, options map[string]string) (Sink[T], error) {
	f, opts, err := r.validate(name, options, false)
	if err != nil {
		return nil, err
	}
	sf, ok := f.(SinkFactory)
	if !ok || f.Spec().Kind&SinkKind == 0 {
		return nil, fmt.Errorf("connector %q is a %v, not a sink", name, f.Spec().Kind)
	}
	v, err := sf.NewSink(Context{Name: name, Options: opts, RecordType: reflect.TypeFor[T](), Registry: r})
	return typed(name, fmt.Sprintf("Sink[%v]", reflect.TypeFor[T]()), v, err, boxSink[T])
}

// OpenDecoder validates options against the format name's spec and makes a
// decoder of records of type T.
func OpenDecoder[T any](r *Registry, name string, options map[string]string) (Decoder[T], error) {
	return openDecoder[T](r, name, options, reflect.TypeFor[T](), nil)
}

func openDecoder[T any](r *Registry, name string, options map[string]string, typ reflect.Type, table *Table) (Decoder[T], error) {
	f, opts, err := r.validate(name, options, true)
	if err != nil {
		return nil, err
	}
	v, err := f.(FormatFactory).NewDecoder(Context{Name: name, Options: opts, RecordType: typ, Registry: r, Table: table})
	return typed(name, fmt.Sprintf("Decoder[%v]", typ), v, err, unboxDecoder[T])
}

// OpenEncoder validates options against the format name's spec and makes an
// encoder of records of type T.
func OpenEncoder[T any](r *Registry, name string, options map[string]string) (Encoder[T], error) {
	return openEncoder[T](r, name, options, reflect.TypeFor[T](), nil)
}

func openEncoder[T any](r *Registry, name string, options map[string]string, typ reflect.Type, table *Table) (Encoder[T], error) {
	f, opts, err := r.validate(name, options, true)
	if err != nil {
		return nil, err
	}
	v, err := f.(FormatFactory).NewEncoder(Context{Name: name, Options: opts, RecordType: typ, Registry: r, Table: table})
	return typed(name, fmt.Sprintf("Encoder[%v]", typ), v, err, boxEncoder[T])
}

// DecoderFor returns the decoder of the format the options of ctx chose
// ('format' and its prefixed options) for records of ctx.RecordType, for a
// factory making a source. T is ctx.RecordType, or any for a factory that
// works through reflection. The format sees ctx.Table, so that a format
// of table rows knows their type.
func DecoderFor[T any](ctx Context) (Decoder[T], error) {
	name, fopts := ctx.Options.Format()
	return openDecoder[T](ctx.registry(), name, fopts, ctx.RecordType, ctx.Table)
}

// EncoderFor returns the encoder of the format the options of ctx chose for
// records of ctx.RecordType, for a factory making a sink. T is as for
// DecoderFor.
func EncoderFor[T any](ctx Context) (Encoder[T], error) {
	name, fopts := ctx.Options.Format()
	return openEncoder[T](ctx.registry(), name, fopts, ctx.RecordType, ctx.Table)
}

func (c Context) registry() *Registry {
	if c.Registry == nil {
		return Default
	}
	return c.Registry
}
