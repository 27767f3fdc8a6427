package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eddystream/eddy/sql"
)

func init() {
	if err := sql.RegisterFunction("test.Repeat", sql.Func2(func(s string, n int64) string {
		return strings.Repeat(s, int(n))
	})); err != nil {
		panic(err)
	}
}

// TestTypedFunctionInSQL calls a typed Go function from a query, as the
// SQL guide shows: CREATE FUNCTION binds it, its arguments are cast to
// its Go types (INT to BIGINT), and a NULL argument gives NULL.
func TestTypedFunctionInSQL(t *testing.T) {
	got, _ := runWith(t, `
CREATE FUNCTION repeat_it AS 'test.Repeat';
CREATE TABLE seen (r STRING) WITH ('connector' = 'collect');
INSERT INTO seen SELECT repeat_it(s, n) FROM (VALUES ('ab', 2), ('x', 3), (CAST(NULL AS STRING), 1), ('y', CAST(NULL AS INT))) AS t(s, n);`)
	if s := fmt.Sprint(sorted(got)); s != "[+I[abab] +I[null] +I[null] +I[xxx]]" {
		t.Fatalf("repeat_it: %s", s)
	}
}
