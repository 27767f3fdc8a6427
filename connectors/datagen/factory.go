// Package datagen is eddy's datagen connector, as Flink's: a SQL table
// source of generated rows, random or sequences per column, at a given
// rate, bounded or not. It registers as "datagen" with Flink's option
// names; the per-column options name a column in place of the '#'
// ('fields.id.kind' = 'sequence').
//
// Rows are deterministic: a row's random values are a function of the
// row's number and column (except timestamps, which are relative to the
// clock), and each split's position is checkpointed, so that a job restored
// from a checkpoint generates the same rows after it as before the failure;
// a sequence column is exactly-once across restarts.
package datagen

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/connector"
)

var spec = connector.Spec{
	Name:        "datagen",
	Kind:        connector.SourceKind,
	Description: "Generates the rows of a SQL table: random values of every type (nested ROW, ARRAY and MAP included) or sequences of numbers and strings, per column, at a given rate; bounded by 'number-of-rows' or by its sequences, unbounded otherwise.",
	Options: []connector.Option{
		{Key: "rows-per-second", Type: connector.Int, Default: "10000",
			Description: "The rate of rows, over all the source's subtasks.", Check: connector.Positive},
		{Key: "number-of-rows", Type: connector.Int,
			Description: "The number of rows to generate, over all subtasks; unbounded if not set (and no column is a sequence).", Check: connector.NonNegative},
		{Key: "fields.#.kind", Type: connector.Enum, Default: "random", Values: []string{"random", "sequence"},
			Description: "The generator of column #: 'random' values, or a 'sequence' from 'fields.#.start' to 'fields.#.end' (numbers, and strings of numbers), which bounds the source."},
		{Key: "fields.#.min", Type: connector.String,
			Description: "The least random value of numeric column # (the type's least by default)."},
		{Key: "fields.#.max", Type: connector.String,
			Description: "The greatest random value of numeric column # (the type's greatest by default)."},
		{Key: "fields.#.max-past", Type: connector.Duration, Default: "0 s",
			Description: "How far in the past a random TIMESTAMP or TIMESTAMP_LTZ of column # may be, relative to the clock."},
		{Key: "fields.#.length", Type: connector.Int,
			Description: "The length of random strings and bytes (100 by default, at most the type's), or the size of random arrays, maps and multisets (3 by default), of column #.", Check: connector.Positive},
		{Key: "fields.#.var-len", Type: connector.Bool, Default: "false",
			Description: "Whether random strings and bytes of column # have a random length from 1 to 'fields.#.length'."},
		{Key: "fields.#.start", Type: connector.String,
			Description: "The first value of the sequence of column #."},
		{Key: "fields.#.end", Type: connector.String,
			Description: "The last value of the sequence of column #."},
		{Key: "fields.#.null-rate", Type: connector.Float, Default: "0",
			Description: "The fraction of NULL values of column #, from 0 to 1.",
			Check: func(v string) error {
				var f float64
				if _, err := fmt.Sscan(strings.TrimSpace(v), &f); err != nil || f < 0 || f > 1 {
					return fmt.Errorf("want a fraction from 0 to 1")
				}
				return nil
			}},
	},
}

type factory struct{}

func (factory) Spec() connector.Spec { return spec }

func (factory) NewSource(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, fmt.Errorf("datagen generates the rows of SQL tables, not %v records; use eddy.FromGenerator in Go", ctx.RecordType)
	}
	return NewTableSource(ctx.Table, ctx.Options)
}

func init() { connector.Register(factory{}) }
