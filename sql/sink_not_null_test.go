package sql_test

import (
	"slices"
	"strings"
	"testing"
)

const notNullSink = `
CREATE TABLE out (a BIGINT NOT NULL, b STRING) WITH ('connector' = 'collect');
`

// nullRows gives a NULL in a column the sink declares NOT NULL, between
// rows that have a value.
const nullRows = `
INSERT INTO out
SELECT a, b FROM (VALUES (CAST(1 AS BIGINT), 'x'), (CAST(NULL AS BIGINT), 'y'), (CAST(3 AS BIGINT), 'z')) AS t(a, b);
`

func TestSinkNotNullEnforcerFailsTheJob(t *testing.T) {
	_, err := runErr(t, notNullSink+nullRows, 1)
	if err == nil {
		t.Fatal("the job wrote NULL into a NOT NULL column and succeeded")
	}
	for _, want := range []string{"table sink out", "column a is NOT NULL", "+I[null, y]", "'table.exec.sink.not-null-enforcer' = 'DROP'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestSinkNotNullEnforcerDrops(t *testing.T) {
	for _, v := range []string{"DROP", "drop"} {
		got, err := runErr(t, "SET 'table.exec.sink.not-null-enforcer' = '"+v+"';"+notNullSink+nullRows, 2)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := []string{"+I[1, x]", "+I[3, z]"}; !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", v, got, want)
		}
	}
}

// A retracting query: the -U and +U rows of a group whose value is NULL
// are checked too, and the other groups' changes pass.
func TestSinkNotNullEnforcerOnChangelog(t *testing.T) {
	script := `
SET 'table.exec.sink.not-null-enforcer' = 'DROP';
CREATE TABLE counts (k STRING, n BIGINT NOT NULL, m BIGINT) WITH ('connector' = 'collect');
INSERT INTO counts
SELECT k, MAX(v), COUNT(*) FROM (VALUES ('a', CAST(1 AS BIGINT)), ('b', CAST(NULL AS BIGINT)), ('a', CAST(2 AS BIGINT)), ('b', CAST(NULL AS BIGINT))) AS t(k, v)
GROUP BY k;
`
	got, err := runErr(t, script, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 2]"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSinkNotNullEnforcerSettingError(t *testing.T) {
	err := planError("SET 'table.exec.sink.not-null-enforcer' = 'IGNORE';" + notNullSink + nullRows)
	if err == nil || !strings.Contains(err.Error(), "'table.exec.sink.not-null-enforcer' = 'IGNORE'") || !strings.Contains(err.Error(), "ERROR") {
		t.Fatalf("err = %v, want the setting named with its values", err)
	}
	// Without a NOT NULL column that the query may fill with NULL, nothing
	// is checked and the job runs.
	got, err := runErr(t, notNullSink+"INSERT INTO out SELECT CAST(7 AS BIGINT), 'w';", 1)
	if err != nil || !slices.Equal(got, []string{"+I[7, w]"}) {
		t.Fatalf("got %v, %v", got, err)
	}
}
