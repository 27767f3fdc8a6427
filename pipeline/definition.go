package pipeline

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Definition is a pipeline as its YAML file defines it, in Flink CDC 3's
// format.
type Definition struct {
	// File names the YAML file, for errors.
	File string
	// Source and Sink are the 'source' and 'sink' blocks.
	Source, Sink Endpoint
	// Routes are the 'route' rules, in order: a table takes the first that
	// matches it.
	Routes []Route
	// Transforms are the 'transform' rules, in order: a table takes the
	// first that matches it.
	Transforms []Transform
	// Name is 'pipeline.name'.
	Name string
	// Parallelism is 'pipeline.parallelism' (default 1).
	Parallelism int
	// Behavior is 'pipeline.schema.change.behavior' (default lenient).
	Behavior Behavior
	// SchemaChanges are the types of schema change the sink applies, from
	// its keys 'include.schema.changes' and 'exclude.schema.changes'; nil
	// for all.
	SchemaChanges SchemaChangeTypes
	// LocalTimeZone is 'pipeline.local-time-zone', empty if not set.
	LocalTimeZone string
}

// Endpoint is a 'source' or 'sink' block: its type, its name, and the rest
// of its keys as the connector's options.
type Endpoint struct {
	Type    string
	Name    string
	Options map[string]string
	// Lines gives the line of each option, for errors.
	Lines map[string]int
	Line  int
}

// Route is a 'route' rule.
type Route struct {
	SourceTable   *Selector
	SinkTable     string
	ReplaceSymbol string
	Description   string
	Line          int
}

// Transform is a 'transform' rule.
type Transform struct {
	SourceTable   *Selector
	Projection    string
	Filter        string
	PrimaryKeys   []string
	PartitionKeys []string
	TableOptions  string
	Description   string
	// SoftDelete is 'converter-after-transform: SOFT_DELETE': deletes
	// become inserts of the deleted row.
	SoftDelete bool
	Line       int
}

// ParseFile reads a pipeline definition from a YAML file.
func ParseFile(path string) (*Definition, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return Parse(b, path)
}

// definitionError is a mistake in a definition, at a line of its file.
func definitionError(file string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
}

// Parse reads a pipeline definition; file names it in errors.
func Parse(src []byte, file string) (*Definition, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d := &Definition{File: file, Parallelism: 1}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, fmt.Errorf("%s: a pipeline definition is one YAML document with 'source' and 'sink' blocks", file)
	}
	top, err := mapping(file, f.Docs[0].Body)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, kv := range top {
		seen[kv.key] = true
		switch kv.key {
		case "source":
			d.Source, err = endpoint(file, kv)
		case "sink":
			if d.Sink, err = endpoint(file, kv); err == nil {
				err = d.schemaChangeTypes()
			}
		case "route":
			err = d.routes(kv)
		case "transform":
			err = d.transforms(kv)
		case "pipeline":
			err = d.pipeline(kv)
		default:
			err = definitionError(file, kv.line, "unknown block %q; a pipeline has source, sink, route, transform and pipeline", kv.key)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, b := range []string{"source", "sink"} {
		if !seen[b] {
			return nil, fmt.Errorf("%s: the pipeline has no %q block", file, b)
		}
	}
	if d.Name == "" {
		d.Name = "eddy pipeline"
	}
	return d, nil
}

// keyValue is an entry of a YAML mapping.
type keyValue struct {
	key   string
	line  int
	value ast.Node
}

func line(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

func mapping(file string, n ast.Node) ([]keyValue, error) {
	n = unwrap(n)
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	case *ast.NullNode:
		return nil, nil
	default:
		return nil, definitionError(file, line(n), "expected a mapping of keys to values, found %s", n.Type())
	}
	out := make([]keyValue, 0, len(values))
	seen := map[string]bool{}
	for _, v := range values {
		k, err := scalar(file, v.Key)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, definitionError(file, line(v.Key), "key %q appears twice", k)
		}
		seen[k] = true
		out = append(out, keyValue{key: k, line: line(v.Key), value: v.Value})
	}
	return out, nil
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		case *ast.AliasNode:
			n = t.Value
		default:
			return n
		}
	}
}

// scalar returns a scalar's text.
func scalar(file string, n ast.Node) (string, error) {
	switch v := unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return strings.TrimRight(v.Value.Value, "\n"), nil
	case *ast.IntegerNode:
		return v.Token.Value, nil
	case *ast.FloatNode:
		return v.Token.Value, nil
	case *ast.BoolNode:
		return strconv.FormatBool(v.Value), nil
	case *ast.NullNode:
		return "", nil
	}
	return "", definitionError(file, line(n), "expected a single value, found %s", n.Type())
}

// list returns a sequence's scalars, or a scalar's comma-separated parts.
func list(file string, n ast.Node) ([]string, error) {
	if s, ok := unwrap(n).(*ast.SequenceNode); ok {
		var out []string
		for _, v := range s.Values {
			t, err := scalar(file, v)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	t, err := scalar(file, n)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range strings.Split(t, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

func endpoint(file string, kv keyValue) (Endpoint, error) {
	e := Endpoint{Options: map[string]string{}, Lines: map[string]int{}, Line: kv.line}
	kvs, err := mapping(file, kv.value)
	if err != nil {
		return e, err
	}
	for _, o := range kvs {
		var v string
		if o.key == "include.schema.changes" || o.key == "exclude.schema.changes" {
			// Flink CDC writes these as YAML lists.
			l, err := list(file, o.value)
			if err != nil {
				return e, err
			}
			v = strings.Join(l, ",")
		} else if v, err = scalar(file, o.value); err != nil {
			return e, err
		}
		switch o.key {
		case "type":
			e.Type = v
		case "name":
			e.Name = v
		default:
			e.Options[o.key], e.Lines[o.key] = v, o.line
		}
	}
	if e.Type == "" {
		return e, definitionError(file, kv.line, "the %s block has no 'type'", kv.key)
	}
	return e, nil
}

// schemaChangeTypes takes the sink block's 'include.schema.changes' and
// 'exclude.schema.changes' out of its options.
func (d *Definition) schemaChangeTypes() error {
	var lists [2][]string
	line := d.Sink.Line
	for i, key := range []string{"include.schema.changes", "exclude.schema.changes"} {
		v, ok := d.Sink.Options[key]
		if !ok {
			continue
		}
		line = d.Sink.Lines[key]
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				lists[i] = append(lists[i], n)
			}
		}
		delete(d.Sink.Options, key)
		delete(d.Sink.Lines, key)
	}
	if lists[0] == nil && lists[1] == nil {
		return nil
	}
	t, err := ParseSchemaChangeTypes(lists[0], lists[1])
	if err != nil {
		return definitionError(d.File, line, "%v", err)
	}
	d.SchemaChanges = t
	return nil
}

// sequence returns the mappings of a sequence of mappings.
func sequence(file string, kv keyValue) ([][]keyValue, []int, error) {
	s, ok := unwrap(kv.value).(*ast.SequenceNode)
	if !ok {
		return nil, nil, definitionError(file, kv.line, "%q is a list of rules, each starting with '- '", kv.key)
	}
	var out [][]keyValue
	var lines []int
	for _, v := range s.Values {
		m, err := mapping(file, v)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, m)
		lines = append(lines, line(v))
	}
	return out, lines, nil
}

func (d *Definition) routes(kv keyValue) error {
	rules, lines, err := sequence(d.File, kv)
	if err != nil {
		return err
	}
	for i, rule := range rules {
		r := Route{Line: lines[i]}
		for _, o := range rule {
			v, err := scalar(d.File, o.value)
			if err != nil {
				return err
			}
			switch o.key {
			case "source-table":
				if r.SourceTable, err = ParseSelector(v); err != nil {
					return definitionError(d.File, o.line, "route 'source-table': %v", err)
				}
			case "sink-table":
				r.SinkTable = v
			case "replace-symbol":
				r.ReplaceSymbol = v
			case "description":
				r.Description = v
			default:
				return definitionError(d.File, o.line, "unknown route key %q; a route has source-table, sink-table, replace-symbol and description", o.key)
			}
		}
		if r.SourceTable == nil || r.SinkTable == "" {
			return definitionError(d.File, r.Line, "a route needs 'source-table' and 'sink-table'")
		}
		d.Routes = append(d.Routes, r)
	}
	return nil
}

func (d *Definition) transforms(kv keyValue) error {
	rules, lines, err := sequence(d.File, kv)
	if err != nil {
		return err
	}
	for i, rule := range rules {
		t := Transform{Line: lines[i]}
		for _, o := range rule {
			var v string
			var vs []string
			if o.key == "primary-keys" || o.key == "partition-keys" {
				vs, err = list(d.File, o.value)
			} else {
				v, err = scalar(d.File, o.value)
			}
			if err != nil {
				return err
			}
			switch o.key {
			case "source-table":
				if t.SourceTable, err = ParseSelector(v); err != nil {
					return definitionError(d.File, o.line, "transform 'source-table': %v", err)
				}
			case "projection":
				t.Projection = v
			case "filter":
				t.Filter = v
			case "primary-keys":
				t.PrimaryKeys = vs
			case "partition-keys":
				t.PartitionKeys = vs
			case "table-options":
				t.TableOptions = v
			case "description":
				t.Description = v
			case "converter-after-transform":
				if !strings.EqualFold(v, "SOFT_DELETE") {
					return definitionError(d.File, o.line, "'converter-after-transform' is %q; the converter eddy offers is SOFT_DELETE", v)
				}
				t.SoftDelete = true
			default:
				return definitionError(d.File, o.line, "unknown transform key %q; a transform has source-table, projection, filter, primary-keys, partition-keys, table-options, converter-after-transform and description", o.key)
			}
		}
		if t.SourceTable == nil {
			return definitionError(d.File, t.Line, "a transform needs 'source-table'")
		}
		d.Transforms = append(d.Transforms, t)
	}
	return nil
}

func (d *Definition) pipeline(kv keyValue) error {
	kvs, err := mapping(d.File, kv.value)
	if err != nil {
		return err
	}
	for _, o := range kvs {
		v, err := scalar(d.File, o.value)
		if err != nil {
			return err
		}
		switch o.key {
		case "name":
			d.Name = v
		case "parallelism":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return definitionError(d.File, o.line, "'parallelism' is %q; give a whole number, 1 or more", v)
			}
			d.Parallelism = n
		case "schema.change.behavior":
			if d.Behavior, err = ParseBehavior(v); err != nil {
				return definitionError(d.File, o.line, "%v", err)
			}
		case "local-time-zone":
			d.LocalTimeZone = v
		case "execution.runtime-mode":
			if !strings.EqualFold(v, "STREAMING") {
				return definitionError(d.File, o.line, "'execution.runtime-mode' is %q; eddy runs pipelines in STREAMING mode (a source with 'scan.startup.mode' = 'snapshot' ends after its snapshot)", v)
			}
		default:
			return definitionError(d.File, o.line, "unknown pipeline key %q; eddy's pipeline block takes name, parallelism, schema.change.behavior, local-time-zone and execution.runtime-mode", o.key)
		}
	}
	return nil
}
