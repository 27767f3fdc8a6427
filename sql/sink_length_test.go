package sql_test

import (
	"slices"
	"strings"
	"testing"
)

const lengthSink = `
CREATE TABLE out (s VARCHAR(3), c CHAR(5), b VARBINARY(2), n VARCHAR(4)) WITH ('connector' = 'collect');
INSERT INTO out SELECT 'abcdef', 'ab', CAST('xyz' AS BYTES), 123456;
`

// A sink writes values longer or shorter than its columns' lengths as
// they are, as Flink's table.exec.sink.type-length-enforcer IGNORE does,
// unless TRIM_PAD says to fit them.
func TestSinkTypeLengthEnforcer(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"", "+I[abcdef, ab, [120, 121, 122], 123456]"},
		{"SET 'table.exec.sink.type-length-enforcer' = 'IGNORE';", "+I[abcdef, ab, [120, 121, 122], 123456]"},
		{"SET 'table.exec.sink.type-length-enforcer' = 'trim_pad';", "+I[abc, ab   , [120, 121], 1234]"},
	} {
		got := run(t, tc.set+lengthSink, 1)
		if want := []string{tc.want}; !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", tc.set, got, want)
		}
	}
	err := planError("SET 'table.exec.sink.type-length-enforcer' = 'TRIM';" + lengthSink)
	if err == nil || !strings.Contains(err.Error(), "'table.exec.sink.type-length-enforcer' = 'TRIM'") || !strings.Contains(err.Error(), "TRIM_PAD") {
		t.Fatalf("err = %v, want the setting named with its values", err)
	}
}
