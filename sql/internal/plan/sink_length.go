package plan

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// typeLengthEnforcerKey is the setting that says whether the values a
// sink receives for its CHAR(n), VARCHAR(n), BINARY(n) and VARBINARY(n)
// columns are made to fit the length, as Flink's option of that name:
// IGNORE (the default) writes them as they are, TRIM_PAD trims longer
// values to n and pads shorter ones of CHAR(n) and BINARY(n) to n.
const typeLengthEnforcerKey = "table.exec.sink.type-length-enforcer"

// trimsToLength reports, from settings, whether the values a sink
// receives are trimmed and padded to its columns' lengths.
func trimsToLength(settings map[string]string) (bool, error) {
	switch v := strings.TrimSpace(settings[typeLengthEnforcerKey]); {
	case v == "" || strings.EqualFold(v, "IGNORE"):
		return false, nil
	case strings.EqualFold(v, "TRIM_PAD"):
		return true, nil
	default:
		return false, fmt.Errorf("SET '%s' = '%s': the value is IGNORE (write values longer or shorter than a column's length as they are, the default) or TRIM_PAD (trim them to the length, and pad those of CHAR and BINARY columns)", typeLengthEnforcerKey, v)
	}
}

// lengthFree returns the type a value written into a column of type t
// keeps when its length is not enforced: STRING for a CHAR(n) or
// VARCHAR(n), BYTES for a BINARY(n) or VARBINARY(n), with t's
// nullability; t itself for other types.
func lengthFree(t types.Type) types.Type {
	switch {
	case t.IsString():
		return types.String().WithNullability(t.IsNullable())
	case t.IsBinary():
		return types.Bytes().WithNullability(t.IsNullable())
	}
	return t
}
