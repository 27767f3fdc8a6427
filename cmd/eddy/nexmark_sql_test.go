package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeReferenceFiles writes SQL files laid out as the Nexmark reference's
// queries folder (eddy's own text, of the same shape: a DDL with the
// runner's variables, the views, and queries writing to blackhole sinks),
// with q6 a query eddy does not plan.
func writeReferenceFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ddl_gen_v2.sql": `CREATE TABLE datagen (
  event_type INT,
  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
  dateTime AS bid.dateTime,
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'first-event.rate' = '${TPS}', 'next-event.rate' = '${TPS}', 'events.num' = '${EVENTS_NUM}',
  'person.proportion' = '${PERSON_PROPORTION}', 'auction.proportion' = '${AUCTION_PROPORTION}', 'bid.proportion' = '${BID_PROPORTION}');`,
		"ddl_views.sql": "CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, dateTime FROM ${NEXMARK_TABLE} WHERE event_type = 2;",
		"q0.sql":        "CREATE TABLE nexmark_q0 (auction BIGINT, price BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO nexmark_q0 SELECT auction, price FROM bid;",
		"q6.sql":        "CREATE TABLE nexmark_q6 (auction BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO nexmark_q6 SELECT nosuchcolumn FROM bid;",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNexmarkCommandSQL runs queries beside their reference SQL files: each
// SQL run gets a row with its share of the Go API's rate per core, and a
// file that eddy does not plan, or a query's file missing from the folder,
// is reported without stopping the others.
func TestNexmarkCommandSQL(t *testing.T) {
	var out, errOut bytes.Buffer
	o := nexmarkOptions{query: "q0,q6,q22", events: 20_000, tps: 10_000, parallelism: 2, state: "heap", output: "blackhole",
		sqlDir: writeReferenceFiles(t)}
	if err := runNexmark(context.Background(), &out, &errOut, o); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	table := out.String()
	if !regexp.MustCompile(`(?m)^\s*q0/sql\s+20000\s.*\s-\s+\d+%\s*$`).MatchString(table) {
		t.Errorf("the table has no row for q0's SQL with its share of the Go API's rate:\n%s", table)
	}
	for _, q := range []string{" q0 ", " q6 ", " q22 "} {
		if !strings.Contains(table, q) {
			t.Errorf("the table has no row for%s:\n%s", q, table)
		}
	}
	if strings.Contains(table, "q6/sql") || !strings.Contains(errOut.String(), "q6/sql does not run") || !strings.Contains(errOut.String(), "nosuchcolumn") {
		t.Errorf("q6's SQL should be reported as not planned, naming the column:\ntable:\n%s\nstderr:\n%s", table, errOut.String())
	}
	// The folder has no q22.sql, as older copies of the reference have not.
	if strings.Contains(table, "q22/sql") || !strings.Contains(errOut.String(), "q22/sql does not run") || !strings.Contains(errOut.String(), "q22.sql") {
		t.Errorf("q22's missing file should be reported, naming it:\ntable:\n%s\nstderr:\n%s", table, errOut.String())
	}

	// Alone, a file that is not planned, or a folder without the files, is
	// the command's error.
	o.query = "q6"
	if err := runNexmark(context.Background(), &out, &errOut, o); err == nil || !strings.Contains(err.Error(), "nosuchcolumn") {
		t.Errorf("got %v, want the error of q6's file", err)
	}
	o.query, o.sqlDir = "q0", t.TempDir()
	if err := runNexmark(context.Background(), &out, &errOut, o); err == nil || !strings.Contains(err.Error(), "ddl_gen.sql") {
		t.Errorf("got %v, want an error naming the missing file", err)
	}
}
