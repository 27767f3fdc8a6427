// Package reference reads the SQL files of the Nexmark benchmark's
// reference implementation for Flink (nexmark-flink/src/main/resources/queries
// in github.com/nexmark/nexmark: the DDL of the nexmark table, the views
// person, auction and bid, and q0.sql to q22.sql) as the reference's runner
// does, its ${...} variables substituted, so that eddy can run them
// unmodified. The files are not part of eddy: a user points at a copy of
// that folder.
package reference

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Workload is what the runner's variables describe: the events of a run,
// and the directories its queries read and write.
type Workload struct {
	// Events is the number of events (EVENTS_NUM) and TPS their rate of
	// event time in events per second (TPS).
	Events, TPS int64
	// NexmarkDir is the directory q10 writes its files under
	// (${NEXMARK_DIR}/data/output/...).
	NexmarkDir string
	// FlinkHome is the directory q13 reads its side input from
	// (${FLINK_HOME}/data/side_input.txt).
	FlinkHome string
	// Submitted is the time of submission (SUBMIT_TIME, which q10 writes
	// into its paths); the zero time is now.
	Submitted time.Time
}

// Vars returns the variables of the reference's files as its runner
// (QueryRunner and QueryRunnerV2) substitutes them for w: the reference's
// default proportions of persons, auctions and bids (1:3:46), the datagen
// table, no keep-alive and no stop.
func Vars(w Workload) map[string]string {
	submitted := w.Submitted
	if submitted.IsZero() {
		submitted = time.Now()
	}
	return map[string]string{
		"TPS": strconv.FormatInt(w.TPS, 10), "EVENTS_NUM": strconv.FormatInt(w.Events, 10),
		"PERSON_PROPORTION": "1", "AUCTION_PROPORTION": "3", "BID_PROPORTION": "46",
		"NEXMARK_TABLE": "datagen", "KEEP_ALIVE": "false", "STOP_AT": "-1", "BOOTSTRAP_SERVERS": "",
		"NEXMARK_DIR": w.NexmarkDir, "FLINK_HOME": w.FlinkHome,
		// LocalDateTime.toString() of the submission, without its
		// nanoseconds.
		"SUBMIT_TIME": submitted.Format("2006-01-02T15:04:05"),
	}
}

// Query returns the script of query q (q0 to q22) from the reference's
// folder dir as the runner submits it: the DDL (ddl_gen_v2.sql, as
// QueryRunnerV2 reads it, or ddl_gen.sql where there is no v2), then
// ddl_views.sql and q.sql, with vars substituted line by line. Its sink is
// the file's, a blackhole table in the reference.
func Query(dir, q string, vars map[string]string) (string, error) {
	ddl := "ddl_gen_v2.sql"
	if _, err := os.Stat(filepath.Join(dir, ddl)); errors.Is(err, fs.ErrNotExist) {
		ddl = "ddl_gen.sql"
	}
	var b strings.Builder
	for _, name := range []string{ddl, "ddl_views.sql", q + ".sql"} {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("nexmark reference query %s: %w (the folder should be a copy of nexmark-flink/src/main/resources/queries)", q, err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			for k, v := range vars {
				line = strings.ReplaceAll(line, "${"+k+"}", v)
			}
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// BlackholeOptions is the text of the options of the reference's sinks,
// which ReplaceSink swaps.
const BlackholeOptions = "'connector' = 'blackhole'"

// ReplaceSink returns script with the options of its blackhole sinks
// replaced by options, the text between the parentheses of a WITH clause
// (for example 'connector' = 'filesystem', 'path' = '/tmp/q5',
// 'format' = 'debezium-json').
func ReplaceSink(script, options string) string {
	return strings.ReplaceAll(script, BlackholeOptions, options)
}
