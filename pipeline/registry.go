package pipeline

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/eddystream/eddy/connector"
)

// Sources and Sinks hold the connectors of pipelines by their YAML 'type'
// ("mysql", "postgres", "values", ...). A factory registered here makes a
// connector.Source[Event] or connector.Sink[Event] (Context.RecordType is
// Event); its Spec declares the keys of the YAML block, which are
// validated, documented and redacted as a SQL connector's options are. The
// connectors of eddy's own packages register when imported (import
// github.com/eddystream/eddy/connectors/all for all of them).
var (
	Sources = connector.NewRegistry()
	Sinks   = connector.NewRegistry()
)

// openSource makes the source of a 'source' block.
func openSource(d *Definition) (connector.Source[Event], error) {
	v, err := open(d, Sources, d.Source, "source", func(f connector.Factory, ctx connector.Context) (any, error) {
		sf, ok := f.(connector.SourceFactory)
		if !ok {
			return nil, fmt.Errorf("it is not a source")
		}
		return sf.NewSource(ctx)
	})
	if err != nil {
		return nil, err
	}
	s, ok := v.(connector.Source[Event])
	if !ok {
		return nil, fmt.Errorf("%s:%d: source type %q made a %T, not a source of pipeline events", d.File, d.Source.Line, d.Source.Type, v)
	}
	return s, nil
}

// openSink makes the sink of a 'sink' block.
func openSink(d *Definition) (connector.Sink[Event], error) {
	v, err := open(d, Sinks, d.Sink, "sink", func(f connector.Factory, ctx connector.Context) (any, error) {
		sf, ok := f.(connector.SinkFactory)
		if !ok {
			return nil, fmt.Errorf("it is not a sink")
		}
		return sf.NewSink(ctx)
	})
	if err != nil {
		return nil, err
	}
	s, ok := v.(connector.Sink[Event])
	if !ok {
		return nil, fmt.Errorf("%s:%d: sink type %q made a %T, not a sink of pipeline events", d.File, d.Sink.Line, d.Sink.Type, v)
	}
	return s, nil
}

func open(d *Definition, r *connector.Registry, e Endpoint, block string, make func(connector.Factory, connector.Context) (any, error)) (any, error) {
	f, err := r.Connector(e.Type)
	if err != nil {
		var names []string
		for _, s := range r.Specs() {
			names = append(names, s.Name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s:%d: unknown %s type %q; eddy's pipelines have %s", d.File, e.Line, block, e.Type, strings.Join(names, ", "))
	}
	spec := f.Spec()
	opts, err := spec.Validate(e.Options)
	if err != nil {
		line := e.Line
		if oe, ok := err.(*connector.OptionError); ok && e.Lines[oe.Key] > 0 {
			line = e.Lines[oe.Key]
		}
		return nil, fmt.Errorf("%s:%d: %s: %w", d.File, line, block, err)
	}
	name := e.Name
	if name == "" {
		name = e.Type + " " + block
	}
	v, err := make(f, connector.Context{Name: name, Options: opts, RecordType: reflect.TypeFor[Event](), Registry: r})
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %s %q: %w", d.File, e.Line, block, e.Type, err)
	}
	return v, nil
}
