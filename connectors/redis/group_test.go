package redis_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// noAcks hides the readers' CheckpointListener, so that no entry is ever
// acknowledged: a job that fails between a checkpoint and its
// acknowledgements, for ever.
type noAcks struct{ connector.Source[line] }

func (s noAcks) NewReader(ctx connector.ReaderContext) (connector.Reader[line], error) {
	r, err := s.Source.NewReader(ctx)
	return noAckReader{r}, err
}

type noAckReader struct{ connector.Reader[line] }

func (r noAckReader) HandleEvent(e []byte) error {
	return r.Reader.(connector.ReaderEventHandler).HandleEvent(e)
}

// job runs a job reading src into mem at parallelism p, checkpointing into
// dir, in the background; stop cancels it and waits.
func job(t *testing.T, src connector.Source[line], mem *connectortest.MemorySink[line], p int, dir string) (stop func()) {
	t.Helper()
	env := eddy.NewEnvironment(eddy.WithParallelism(p), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(dir),
		eddy.WithRestartStrategy(eddy.NoRestart()))
	eddy.WriteTo(eddy.FromSource(env, "redis in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "group") }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("the job failed: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitFor waits until mem has committed n records.
func waitFor(t *testing.T, mem *connectortest.MemorySink[line], n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := mem.WaitFor(ctx, n); err != nil {
		t.Fatalf("waiting for %d records (%d committed): %v", n, len(mem.Committed()), err)
	}
}

// checkOnce checks that got holds the records numbered in want, each
// once.
func checkOnce(t *testing.T, got []line, want []int64) {
	t.Helper()
	ns := make([]int64, len(got))
	for i, l := range got {
		ns[i] = l.N
	}
	slices.Sort(ns)
	slices.Sort(want)
	if !slices.Equal(ns, want) {
		seen := map[int64]int{}
		var dups []int64
		for _, n := range ns {
			if seen[n]++; seen[n] == 2 {
				dups = append(dups, n)
			}
		}
		t.Fatalf("the job emitted %d records (duplicates: %v), want %d: %v", len(ns), dups[:min(10, len(dups))], len(want), ns[:min(20, len(ns))])
	}
}

func numbers(from, to int) []int64 {
	var out []int64
	for n := from; n < to; n++ {
		out = append(out, int64(n))
	}
	return out
}

func pendingCount(t *testing.T, cli *goredis.Client, stream, group string) int64 {
	t.Helper()
	p, err := cli.XPending(context.Background(), stream, group).Result()
	if err != nil {
		t.Fatal(err)
	}
	return p.Count
}

// TestRestoreBeforeAcknowledgements stops a job after a checkpoint whose
// entries were never acknowledged (as when a job fails between a
// checkpoint and its completion's notification), and restores it: the
// entries the checkpoint covers are not emitted again, the others are,
// and the restored job acknowledges them all.
func TestRestoreBeforeAcknowledgements(t *testing.T) {
	cli := server(t)
	stream, group := freshStream(t, cli), "g-"+random()
	addLines(t, cli, stream, 0, 1000, 4)
	opts := func() map[string]string {
		return map[string]string{"stream": stream, "format": "json", "group": group, "scan.fetch-size": "64"}
	}
	dir := t.TempDir()
	mem := connectortest.NewMemorySink[line]()
	stop := job(t, noAcks{openSource(t, opts())}, mem, 2, dir)
	waitFor(t, mem, 1000)
	stop()
	if n := pendingCount(t, cli, stream, group); n != 1000 {
		t.Fatalf("the group has %d pending entries after a job that never acknowledged, want 1000", n)
	}
	addLines(t, cli, stream, 1000, 1500, 4)
	stop = job(t, openSource(t, opts()), mem, 3, dir)
	waitFor(t, mem, 1500)
	deadline := time.Now().Add(time.Minute)
	for pendingCount(t, cli, stream, group) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the restored job left %d entries pending", pendingCount(t, cli, stream, group))
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	checkOnce(t, mem.Committed(), numbers(0, 1500))
}

// TestGroupOffsets starts a job on a group another consumer read part of,
// acknowledging some of it: the job reads the other consumer's pending
// entries and what the group has not delivered, nothing it acknowledged;
// a job restored from a checkpoint taken before any acknowledgement reads
// the rest exactly once.
func TestGroupOffsets(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream, group := freshStream(t, cli), "g-"+random()
	addLines(t, cli, stream, 0, 100, 1)
	if err := cli.XGroupCreate(ctx, stream, group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := cli.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: group, Consumer: "legacy", Streams: []string{stream, ">"}, Count: 60, Block: -1}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	for i, m := range res[0].Messages {
		if i < 30 || (i >= 40 && i < 50) {
			acked = append(acked, m.ID)
		}
	}
	if err := cli.XAck(ctx, stream, group, acked...).Err(); err != nil {
		t.Fatal(err)
	}
	// Pending: 30-39 and 50-59; delivered up to 59.
	want := append(append(numbers(30, 40), numbers(50, 60)...), numbers(60, 100)...)
	dir := t.TempDir()
	mem := connectortest.NewMemorySink[line]()
	stop := job(t, noAcks{openSource(t, map[string]string{"stream": stream, "format": "json", "group": group, "scan.fetch-size": "7"})}, mem, 2, dir)
	waitFor(t, mem, len(want))
	stop()
	checkOnce(t, mem.Committed(), want)
	legacy, err := cli.XPendingExt(ctx, &goredis.XPendingExtArgs{Stream: stream, Group: group, Start: "-", End: "+", Count: 100, Consumer: "legacy"}).Result()
	if err != nil || len(legacy) != 0 {
		t.Fatalf("the legacy consumer still has %d pending entries (%v); the job should have claimed them", len(legacy), err)
	}
	addLines(t, cli, stream, 100, 150, 1)
	stop = job(t, openSource(t, map[string]string{"stream": stream, "format": "json", "group": group, "scan.fetch-size": "7"}), mem, 1, dir)
	waitFor(t, mem, len(want)+50)
	stop()
	checkOnce(t, mem.Committed(), append(want, numbers(100, 150)...))
}

// TestGroupWithoutCheckpoints reads a group in a job that takes no
// checkpoints: entries are acknowledged as soon as they are emitted.
func TestGroupWithoutCheckpoints(t *testing.T) {
	cli := server(t)
	stream, group := freshStream(t, cli), "g-"+random()
	addLines(t, cli, stream, 0, 500, 1)
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	got := make(chan line, 1000)
	s := eddy.FromSource(env, "redis in", openSource(t, map[string]string{"stream": stream, "format": "json", "group": group}), eddy.NoWatermarks[line]())
	eddy.WriteTo(eddy.Map(s, func(l line) line { got <- l; return l }), "memory", mem.Sink())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, "no checkpoints") }()
	var ls []line
	for len(ls) < 500 {
		select {
		case l := <-got:
			ls = append(ls, l)
		case err := <-done:
			t.Fatalf("the job ended: %v", err)
		case <-ctx.Done():
			t.Fatalf("the job emitted %d records of 500", len(ls))
		}
	}
	for pendingCount(t, cli, stream, group) != 0 {
		if ctx.Err() != nil {
			t.Fatalf("%d entries stay pending in a job without checkpoints", pendingCount(t, cli, stream, group))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	checkOnce(t, ls, numbers(0, 500))
}

// TestGroupStartupModes starts a group at each position.
func TestGroupStartupModes(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream := freshStream(t, cli)
	addLines(t, cli, stream, 0, 5, 1)
	time.Sleep(5 * time.Millisecond)
	at := time.Now().UnixMilli()
	time.Sleep(5 * time.Millisecond)
	addLines(t, cli, stream, 5, 10, 1)
	ids, err := cli.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts map[string]string
		want []int64
	}{
		{map[string]string{}, numbers(0, 15)},
		{map[string]string{"scan.startup.mode": "earliest-offset"}, numbers(0, 15)},
		{map[string]string{"scan.startup.mode": "latest-offset"}, numbers(10, 15)},
		{map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset": ids[7].ID}, numbers(7, 15)},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(at)}, numbers(5, 15)},
	} {
		group := "g-" + random()
		opts := map[string]string{"stream": stream, "format": "json", "group": group}
		for k, v := range c.opts {
			opts[k] = v
		}
		mem := connectortest.NewMemorySink[line]()
		stop := job(t, openSource(t, opts), mem, 1, t.TempDir())
		// Add 10-14 once the group is set up.
		for {
			gs, _ := cli.XInfoGroups(ctx, stream).Result()
			if slices.ContainsFunc(gs, func(g goredis.XInfoGroup) bool { return g.Name == group }) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		tail := freshCopy(t, cli, stream, 10, 15)
		waitFor(t, mem, len(c.want))
		stop()
		checkOnce(t, mem.Committed(), c.want)
		cli.XDel(ctx, stream, tail...)
	}
}

// freshCopy adds lines [from, to) and returns their ids.
func freshCopy(t *testing.T, cli *goredis.Client, stream string, from, to int) []string {
	t.Helper()
	before, err := cli.XRevRangeN(context.Background(), stream, "+", "-", 1).Result()
	if err != nil {
		t.Fatal(err)
	}
	addLines(t, cli, stream, from, to, 1)
	added, err := cli.XRange(context.Background(), stream, "("+before[0].ID, "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range added {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestStartupModes reads a stream without a group from each position.
func TestStartupModes(t *testing.T) {
	cli := server(t)
	stream := freshStream(t, cli)
	addLines(t, cli, stream, 0, 5, 1)
	time.Sleep(5 * time.Millisecond)
	at := time.Now().UnixMilli()
	time.Sleep(5 * time.Millisecond)
	addLines(t, cli, stream, 5, 10, 1)
	ids, err := cli.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts map[string]string
		want []int64
	}{
		{map[string]string{}, numbers(0, 10)},
		{map[string]string{"scan.startup.mode": "latest-offset"}, nil},
		{map[string]string{"scan.startup.mode": "specific-offset", "scan.startup.specific-offset": ids[7].ID}, numbers(7, 10)},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(at)}, numbers(5, 10)},
		{map[string]string{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())}, nil},
	} {
		opts := map[string]string{"stream": stream, "format": "json", "scan.bounded.mode": "latest-offset"}
		for k, v := range c.opts {
			opts[k] = v
		}
		mem := connectortest.NewMemorySink[line]()
		env := eddy.NewEnvironment(eddy.WithParallelism(1))
		eddy.WriteTo(eddy.FromSource(env, "modes", openSource(t, opts), eddy.NoWatermarks[line]()), "memory", mem.Sink())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := env.Execute(ctx, "modes"); err != nil {
			t.Fatalf("%v: %v", c.opts, err)
		}
		cancel()
		checkOnce(t, mem.Committed(), c.want)
	}
}

// TestReadsSurviveLostConnections kills the readers' connections while a
// group is read (a network cut, a server closing idle clients): the
// readers retry, read their consumers' pending entries whose delivery the
// cut may have lost, and the job emits every entry once without
// restarting.
func TestReadsSurviveLostConnections(t *testing.T) {
	cli := server(t)
	ctx := context.Background()
	stream, group := freshStream(t, cli), "g-"+random()
	addLines(t, cli, stream, 0, 3000, 2)
	mem := connectortest.NewMemorySink[line]()
	env := eddy.NewEnvironment(eddy.WithParallelism(2), eddy.WithCheckpointing(20*time.Millisecond), eddy.WithCheckpointDir(t.TempDir()),
		eddy.WithRestartStrategy(eddy.NoRestart()))
	src := openSource(t, map[string]string{"stream": stream, "format": "json", "group": group, "scan.fetch-size": "10"})
	// Slow the job down, so that many reads are cut.
	slow := eddy.Map(eddy.FromSource(env, "redis in", src, eddy.NoWatermarks[line]()), func(l line) line {
		if l.N%10 == 0 {
			time.Sleep(time.Millisecond)
		}
		return l
	})
	eddy.WriteTo(slow, "memory", mem.Sink())
	jctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- env.Execute(jctx, "cuts") }()
	kills := 0
	for len(mem.Committed()) < 3000 {
		select {
		case err := <-done:
			t.Fatalf("the job ended after %d kills: %v", kills, err)
		case <-jctx.Done():
			t.Fatalf("the job committed %d records of 3000 after %d kills", len(mem.Committed()), kills)
		case <-time.After(5 * time.Millisecond):
		}
		list, err := cli.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(list, "\n") {
			if !strings.Contains(l, " name=eddy ") || !strings.Contains(l, " cmd=xreadgroup") {
				continue
			}
			f := strings.Fields(l)
			if len(f) > 0 && strings.HasPrefix(f[0], "id=") {
				if cli.ClientKillByFilter(ctx, "ID", strings.TrimPrefix(f[0], "id=")).Err() == nil {
					kills++
				}
			}
		}
	}
	cancel()
	<-done
	if kills == 0 {
		t.Fatal("no reader connection was killed")
	}
	t.Logf("%d reader connections killed", kills)
	if r := env.Restarts(); r != 0 {
		t.Fatalf("the job restarted %d times", r)
	}
	checkOnce(t, mem.Committed(), numbers(0, 3000))
}
