package mysqlcdc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/internal/cdc/cdctest"
	"github.com/eddystream/eddy/pipeline"
)

// TestPipelineSourceSchemaChanges reads a database as a pipeline's mysql
// source while its tables change: a column added, one renamed, a table
// truncated, one created that 'tables' matches (and one it excludes), one
// renamed away and one dropped. The events say each change, in order, and
// rows after a change carry the new columns.
func TestPipelineSourceSchemaChanges(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	c.Exec(t,
		"CREATE TABLE "+db+".a (id INT PRIMARY KEY, name VARCHAR(10), flag TINYINT(1), amount DECIMAL(8, 2) NOT NULL)",
		"CREATE TABLE "+db+".b (id BIGINT UNSIGNED PRIMARY KEY)",
		"INSERT INTO "+db+".a VALUES (1, 'x', 1, 1.50)",
		"INSERT INTO "+db+".b VALUES (18446744073709551615)")
	def := &pipeline.Definition{Behavior: pipeline.Evolve}
	f, _ := pipeline.Sources.Connector("mysql")
	spec := f.Spec()
	opts, err := spec.Validate(map[string]string{"hostname": s.Host, "port": fmt.Sprint(s.Port), "username": "root",
		"tables": db + `.\.*`, "tables.exclude": db + `.skip_\.*`, "server-id": "6100-6110"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewPipelineSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out cdctest.SyncBuffer
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	eddy.WriteTo(pipeline.Apply(eddy.FromSource(env, "mysql", src, eddy.NoWatermarks[pipeline.Event]()), def), "print", pipeline.NewPrintSink(&out))
	r := cdctest.Execute(t, env, "pipeline source", 2*time.Minute)

	wait := func(lines ...string) {
		t.Helper()
		cdctest.WaitLines(t, r.Ctx, out.String, "DB", db, lines...)
	}
	wait("CREATE TABLE DB.a (id INT NOT NULL, name VARCHAR(10), flag BOOLEAN, amount DECIMAL(8, 2) NOT NULL, PRIMARY KEY (id))",
		"+I DB.a[1, x, true, 1.50]",
		"CREATE TABLE DB.b (id DECIMAL(20, 0) NOT NULL, PRIMARY KEY (id))",
		"+I DB.b[18446744073709551615]")
	c.Exec(t,
		"ALTER TABLE "+db+".a ADD COLUMN note TEXT",
		"INSERT INTO "+db+".a VALUES (2, 'y', 0, 2.50, 'hello')",
		"ALTER TABLE "+db+".a RENAME COLUMN name TO label",
		"UPDATE "+db+".a SET label = 'z' WHERE id = 2",
		"TRUNCATE TABLE "+db+".b",
		"CREATE TABLE "+db+".c (id INT PRIMARY KEY, t DATETIME(3))",
		"CREATE TABLE "+db+".skip_me (id INT PRIMARY KEY)",
		"INSERT INTO "+db+".c VALUES (1, '2024-05-06 07:08:09.123')",
		"INSERT INTO "+db+".skip_me VALUES (1)",
		"RENAME TABLE "+db+".c TO "+db+".skip_c",
		"DROP TABLE "+db+".a")
	wait("ALTER TABLE DB.a ADD COLUMN note STRING",
		"+I DB.a[2, y, false, 2.50, hello]",
		"ALTER TABLE DB.a RENAME COLUMN name TO label",
		"-U DB.a[2, y, false, 2.50, hello]",
		"+U DB.a[2, z, false, 2.50, hello]",
		"TRUNCATE TABLE DB.b",
		"CREATE TABLE DB.c (id INT NOT NULL, t TIMESTAMP(3), PRIMARY KEY (id))",
		"+I DB.c[1, 2024-05-06T07:08:09.123]",
		"DROP TABLE DB.c",
		"DROP TABLE DB.a")
	got := out.String()
	if strings.Contains(got, "skip_") {
		t.Errorf("an excluded table reached the pipeline:\n%s", got)
	}
	order := []string{"ADD COLUMN note", "+I " + db + ".a[2", "RENAME COLUMN", "+U " + db + ".a[2", "DROP TABLE " + db + ".a"}
	last := -1
	for _, o := range order {
		i := strings.Index(got, o)
		if i < last {
			t.Errorf("%q came before what precedes it:\n%s", o, got)
		}
		last = i
	}
}
