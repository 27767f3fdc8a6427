package mysqlcdc

import (
	"slices"
	"testing"
)

// TestNullChunkKeys snapshots a table split on a nullable column: rows
// whose chunk key is NULL are in no key range, and belong to the first
// chunk.
func TestNullChunkKeys(t *testing.T) {
	s := startServer(t)
	c := s.conn()
	db := s.newDatabase(c)
	exec(t, c, "CREATE TABLE "+db+".accounts (id INT PRIMARY KEY, balance BIGINT NULL, note VARCHAR(32))",
		"INSERT INTO "+db+".accounts VALUES (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (4, 40, 'd'), (5, 50, 'e'), (6, 60, 'f'), (7, NULL, 'g')")
	for _, split := range []struct{ name, extra string }{
		{"even", ""},
		{"uneven", "INSERT INTO " + db + ".accounts VALUES (8, 1000000000, 'h')"},
	} {
		t.Run(split.name, func(t *testing.T) {
			if split.extra != "" {
				exec(t, c, split.extra)
			}
			got := startupRun(t, s, s.options(db, "accounts", "scan.startup.mode", "snapshot",
				"scan.incremental.snapshot.chunk.key-column", "balance", "scan.incremental.snapshot.chunk.size", "2"), nil, -1)
			want := []string{"+I|1|10|a", "+I|2|20|b", "+I|3|NULL|c", "+I|4|40|d", "+I|5|50|e", "+I|6|60|f", "+I|7|NULL|g"}
			if split.extra != "" {
				want = append(want, "+I|8|1000000000|h")
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestChunkContainsNull places a NULL chunk key, as changes of the binary
// log carry it, in the first chunk, where the snapshot reads it.
func TestChunkContainsNull(t *testing.T) {
	cs := chunksOf("db.t", []string{"10", "20"})
	for i, c := range cs {
		if got, want := c.contains(nullText), i == 0; got != want {
			t.Errorf("chunk %d [%q, %q) contains NULL: %v, want %v", i, c.start, c.end, got, want)
		}
	}
}
