package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/internal/testservers"
)

// TestPipelineRESTRescale runs `eddy pipeline` syncing a MariaDB table into
// PostgreSQL at parallelism 1, rescales it to 2 through its REST API while
// a load of inserts, updates and deletes runs, checks that the API shows
// its source at parallelism 2, and that the PostgreSQL table ends equal to
// the MariaDB table row for row.
func TestPipelineRESTRescale(t *testing.T) {
	s := startMirrorServers(t)
	bin, m, p, my, pg := s.bin, s.m, s.p, s.my, s.pg
	execMy(t, my, "CREATE DATABASE rshop")
	execMy(t, my, "CREATE TABLE rshop.orders (id INT PRIMARY KEY, customer VARCHAR(32) NOT NULL, amount DECIMAL(10, 2))")
	for i := 1; i <= 4000; i += 500 {
		var rows []string
		for j := i; j < i+500; j++ {
			rows = append(rows, fmt.Sprintf("(%d, 'c%d', %d.%02d)", j, j%97, j, j%100))
		}
		execMy(t, my, "INSERT INTO rshop.orders VALUES "+strings.Join(rows, ","))
	}
	ctx := context.Background()

	dir := t.TempDir()
	file := filepath.Join(dir, "rshop.yaml")
	def := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %d
  username: root
  password: ""
  tables: rshop.orders
  server-id: 5900-5910
  scan.incremental.snapshot.chunk.size: 400

sink:
  type: postgres
  url: jdbc:postgresql://%s:%d/postgres?sslmode=disable
  username: postgres

pipeline:
  name: rshop-sync
  parallelism: 1
`, m.Host, m.Port, p.Host, p.Port)
	if err := os.WriteFile(file, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "pipeline", file, "--checkpoint-dir", filepath.Join(dir, "checkpoints"),
		"--checkpoint-interval", "200ms", "--rest-address", "127.0.0.1:0")
	pipe := startREST(t, cmd)
	addr := pipe.addr
	dump := func() { t.Logf("the pipeline's output:\n%s", pipe.Logs()) }

	loadDone := make(chan error, 1)
	go func() {
		c, err := client.Connect(m.Addr(), "root", "", "")
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close()
		rng := rand.New(rand.NewPCG(11, 12))
		next := 4001
		for tx := 0; tx < 800; tx++ {
			stmts := []string{"BEGIN"}
			for k := 0; k <= rng.IntN(3); k++ {
				id := 1 + rng.IntN(next)
				switch op := rng.IntN(10); {
				case op < 5:
					stmts = append(stmts, fmt.Sprintf("UPDATE rshop.orders SET amount = amount + 1, customer = 'u%d' WHERE id = %d", tx, id))
				case op < 7:
					stmts = append(stmts, fmt.Sprintf("DELETE FROM rshop.orders WHERE id = %d", id))
				default:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO rshop.orders VALUES (%d, 'n%d', %d.50)", next, tx, tx))
					next++
				}
			}
			stmts = append(stmts, "COMMIT")
			for _, q := range stmts {
				if _, err := c.Execute(q); err != nil {
					loadDone <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		loadDone <- nil
	}()

	// Rescale once the job runs (the API refuses it before).
	var answer struct {
		Path        string
		Parallelism int
	}
	var seen []string
	for deadline := time.Now().Add(5 * time.Minute); answer.Path == "" && time.Now().Before(deadline); {
		resp, err := http.Post(addr+"/v1/jobs/current/rescale", "application/json", strings.NewReader(`{"parallelism": 2}`))
		if err != nil {
			dump()
			t.Fatalf("POST rescale: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			if err := json.Unmarshal(body, &answer); err != nil {
				t.Fatalf("the rescale's answer %s: %v", body, err)
			}
		case http.StatusNotImplemented:
			t.Fatalf("the pipeline cannot be rescaled: %s", body)
		default:
			if a := resp.Status + " " + strings.TrimSpace(string(body)); !slices.Contains(seen, a) {
				seen = append(seen, a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if answer.Path == "" || answer.Parallelism != 2 {
		dump()
		t.Fatalf("no rescale: answer %+v; the refused attempts said %q", answer, seen)
	}
	t.Logf("rescaled from the savepoint %s; refused attempts before said %q", answer.Path, seen)

	resp, err := http.Get(addr + "/v1/jobs/current")
	if err != nil {
		t.Fatalf("GET the job: %v", err)
	}
	var job struct {
		Vertices []struct {
			Name        string
			Parallelism int
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil || len(job.Vertices) == 0 || job.Vertices[0].Parallelism != 2 {
		t.Errorf("after the rescale the job's vertices are %+v (%v), want its source at parallelism 2", job.Vertices, err)
	}

	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	wantRows, err := testservers.MariaDBRows(my, "SELECT id, customer, CAST(amount AS CHAR) FROM rshop.orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got, err = testservers.PostgresRows(ctx, pg, "SELECT id, customer, amount::text FROM rshop.orders ORDER BY id"); err == nil && slices.Equal(got, wantRows) {
			break
		}
	}
	if !slices.Equal(got, wantRows) {
		dump()
		t.Fatalf("PostgreSQL holds %d rows, MariaDB %d; first differences:\n%s", len(got), len(wantRows), firstDiffs(got, wantRows))
	}
	t.Logf("%d rows in step through a rescale from 1 to 2", len(wantRows))
}
