package pipeline

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// Build adds the pipeline d to env: its source, the transform and route
// rules, the schema operator and its sink, made from the definition's
// blocks through Sources and Sinks. Run it with env.Execute.
func Build(env *eddy.Environment, d *Definition) error {
	src, err := openSource(d)
	if err != nil {
		return err
	}
	sink, err := openSink(d)
	if err != nil {
		return err
	}
	BuildWith(env, d, src, sink)
	return nil
}

// BuildWith is Build with the source and sink given, for programs and tests
// that make their own. The definition's Source and Sink blocks only name
// them.
func BuildWith(env *eddy.Environment, d *Definition, src connector.Source[Event], sink connector.Sink[Event]) {
	name := func(e Endpoint, block string) string {
		if e.Name != "" {
			return e.Name
		}
		return e.Type + " " + block
	}
	events := eddy.FromSource(env, name(d.Source, "source"), src, eddy.NoWatermarks[Event]()).UID("pipeline-source")
	eddy.WriteTo(Apply(events, d), name(d.Sink, "sink"), sink)
}

// Apply adds to a stream of a source's events the pipeline's transform and
// route rules and its schema operator: the result is what its sink takes,
// each sink table's events in order on one subtask.
func Apply(events *eddy.Stream[Event], d *Definition) *eddy.Stream[Event] {
	routedEvents := eddy.Process(events, func() eddy.ProcessFunction[Event, routed] {
		t := newTransformer(d)
		return eddy.ProcessFunc[Event, routed](func(ctx *eddy.ProcessContext[routed], e Event) error {
			return t.apply(e, ctx.Emit)
		})
	}).Name("transform and route").UID("pipeline-transform")
	bySinkTable := eddy.KeyBy(routedEvents, func(r routed) string { return r.Event.Table.String() })
	return eddy.ProcessKeyed(bySinkTable, func() eddy.KeyedProcessFunction[string, routed, Event] {
		return &schemaOperator{behavior: d.Behavior, applies: d.SchemaChanges}
	}).Name("schema operator").UID("pipeline-schema")
}
