package connector_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestMetadataColumn finds a VARCHAR metadata column after the physical
// ones, and not a CHAR one or a missing one.
func TestMetadataColumn(t *testing.T) {
	tb := &connector.Table{Schema: types.MustRowType(types.F("a", types.BigInt()), types.F("b", types.String())),
		Metadata: []string{"partition", "topic", "key"}, MetadataTypes: []types.Type{types.Int(), types.String(), types.Char(4)}}
	for key, want := range map[string]int{"topic": 3, "key": -1, "headers": -1, "partition": -1} {
		if got := connector.MetadataColumn(tb, key); got != want {
			t.Errorf("MetadataColumn(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestStringEqualities keeps the equalities of the column with string
// constants that pass the check, and no other predicate.
func TestStringEqualities(t *testing.T) {
	preds := []connector.Predicate{
		{Path: []int{3}, Op: connector.OpEqual, Value: "a/b"},
		{Path: []int{3}, Op: connector.OpNotEqual, Value: "a/c"},
		{Path: []int{2}, Op: connector.OpEqual, Value: "x"},
		{Path: []int{3, 0}, Op: connector.OpEqual, Value: "nested"},
		{Path: []int{3}, Op: connector.OpEqual, Value: int64(7)},
		{Path: []int{3}, Op: connector.OpEqual, Value: "a/+"},
		{Path: []int{3}, Op: connector.OpEqual, Value: "c/d"},
	}
	acc, vals := connector.StringEqualities(preds, 3, func(v string) bool { return !strings.Contains(v, "+") })
	if !slices.Equal(acc, []int{0, 6}) || !slices.Equal(vals, []string{"a/b", "c/d"}) {
		t.Fatalf("accepted %v %q, want [0 6] [a/b c/d]", acc, vals)
	}
	acc, _ = connector.StringEqualities(preds, 3, nil)
	if !slices.Equal(acc, []int{0, 5, 6}) {
		t.Fatalf("without a check accepted %v, want [0 5 6]", acc)
	}
}
