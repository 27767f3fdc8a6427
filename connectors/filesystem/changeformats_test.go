package filesystem_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// TestChangeFormatsToFilesAndBack copies a changelog (Debezium messages
// with inserts, updates and deletes) into a directory in canal-json and in
// maxwell-json with one SQL job each, and copies that directory on to
// another in the same format with a second job: the first directory holds
// an insertion per +I and +U and a deletion per -U and -D, and the changes
// of the last one leave the rows the Debezium messages do.
func TestChangeFormatsToFilesAndBack(t *testing.T) {
	const cols = "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>, attrs MAP<STRING, INT>"
	typ, err := types.ParseType("ROW<" + cols + ">")
	if err != nil {
		t.Fatal(err)
	}
	rt := typ.Row()
	row := func(id int, name string) string {
		return fmt.Sprintf(`{"id": %d, "name": "%s", "price": %d.25, "ts": "2024-05-06 07:08:09.%03d", "tags": ["t%d"], "attrs": {"a": %d}}`, id, name, id, id, id%4, id)
	}
	var msgs []string
	for i := 0; i < 100; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": null, "after": %s, "op": "c"}`, row(i, fmt.Sprint("n", i))))
	}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": %s, "after": %s, "op": "u"}`, row(i, fmt.Sprint("n", i)), row(i, fmt.Sprint("m", i))))
	}
	for i := 90; i < 100; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"before": %s, "after": null, "op": "d"}`, row(i, fmt.Sprint("n", i))))
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "changes.jsonl"), []byte(strings.Join(msgs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jd, err := types.NewJSONDecoder(rt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 90; i++ {
		name := fmt.Sprint("n", i)
		if i < 30 {
			name = fmt.Sprint("m", i)
		}
		r, err := jd.Decode([]byte(row(i, name)))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, types.FormatChange(changelog.Insert, rt, r))
	}
	slices.Sort(want)

	run := func(script string) {
		t.Helper()
		s := sql.NewSession(sql.WithParallelism(2))
		if _, err := s.Execute(script); err != nil {
			t.Fatal(err)
		}
		env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithRestartStrategy(eddy.NoRestart()))
		if err := s.Build(env); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := env.Execute(ctx, "change formats"); err != nil {
			t.Fatal(err)
		}
	}
	// materialize applies the changes of the directory's committed files,
	// in the format, to a bag of rows (in any order: the jobs run in
	// parallel).
	materialize := func(format, dir string) (rows []string, inserts, deletes int) {
		t.Helper()
		dec, err := connector.OpenTableDecoder(connector.Default, format, nil, &connector.Table{Schema: rt})
		if err != nil {
			t.Fatal(err)
		}
		bag := map[string]int{}
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, `{"data":`) {
					t.Errorf("%s: line %q does not start with {\"data\":", format, line)
				}
				if err := dec.Decode([]byte(line), func(c connector.TableRecord) {
					k := types.FormatChange(changelog.Insert, rt, c.Row)
					switch c.Kind {
					case changelog.Insert:
						inserts++
						bag[k]++
					case changelog.Delete:
						deletes++
						bag[k]--
					default:
						t.Errorf("%s: %q read as a %v change; the format writes insertions and deletions only", format, line, c.Kind)
					}
				}); err != nil {
					return fmt.Errorf("%s: %q: %w", path, line, err)
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range bag {
			if n < 0 || n > 1 {
				t.Errorf("%s: directory %s leaves row %s %d times", format, dir, k, n)
			}
			if n == 1 {
				rows = append(rows, k)
			}
		}
		slices.Sort(rows)
		return rows, inserts, deletes
	}
	for _, format := range []string{"canal-json", "maxwell-json"} {
		mid, back := t.TempDir(), t.TempDir()
		run(fmt.Sprintf(`
CREATE TABLE src (%[1]s) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = 'debezium-json');
CREATE TABLE mid (%[1]s) WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = '%[4]s');
INSERT INTO mid SELECT * FROM src;
`, cols, src, mid, format))
		got, ins, del := materialize(format, mid)
		if ins != 130 || del != 40 {
			t.Errorf("%s: the files hold %d insertions and %d deletions, want 130 (100 +I, 30 +U) and 40 (30 -U, 10 -D)", format, ins, del)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the written files leave %d rows, want %d; first: %v, want %v", format, len(got), len(want), got[:min(3, len(got))], want[:3])
		}
		run(fmt.Sprintf(`
CREATE TABLE mid (%[1]s) WITH ('connector' = 'filesystem', 'path' = '%[2]s', 'format' = '%[4]s');
CREATE TABLE back (%[1]s) WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = '%[4]s');
INSERT INTO back SELECT * FROM mid;
`, cols, mid, back, format))
		if got, _, _ := materialize(format, back); !slices.Equal(got, want) {
			t.Fatalf("%s: the copied files leave %d rows, want %d; first: %v, want %v", format, len(got), len(want), got[:min(3, len(got))], want[:3])
		}
	}
}
