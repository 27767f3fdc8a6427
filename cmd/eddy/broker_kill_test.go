package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerRecords is the number of records each broker test moves.
const brokerRecords = 20000

// brokerCase is a broker for TestBrokerKill9: how to publish the input,
// the DDL of the job's tables, and how to read what the job wrote.
type brokerCase struct {
	// publish publishes the input records [from, to).
	publish func(t *testing.T, from, to int)
	// source and sink return the WITH options of the input table (bounded
	// or not) and of an output table named out.
	source func(bounded bool) string
	sink   func(out string) string
	// read returns the records committed to output out so far.
	read func(t *testing.T, out string) []string
}

// brokerInput is input record i, as JSON.
func brokerInput(i int) string {
	return fmt.Sprintf(`{"id": %d, "k": %d, "v": %d}`, i, i%7, i*3)
}

// TestBrokerKill9 runs `eddy run job.sql` copying a broker's stream into
// another of the same broker through the exactly-once source and sink,
// kills the process with SIGKILL five times (input arriving all the
// while) and restarts it on the same checkpoint directory each time; the
// output must equal, record for record, the output of a failure-free run
// of the same job over the same input: nothing lost, nothing twice. It
// runs against an embedded NATS server (JetStream) and franz-go's
// in-process Kafka cluster (kfake), both in the test's process, so the
// brokers outlive the killed job.
func TestBrokerKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the eddy binary")
	}
	bin := buildEddy(t)
	t.Run("jetstream", func(t *testing.T) { testBrokerKill9(t, bin, jetStreamCase(t)) })
	t.Run("kafka", func(t *testing.T) { testBrokerKill9(t, bin, kafkaCase(t)) })
}

func testBrokerKill9(t *testing.T, bin string, bc brokerCase) {
	dir := t.TempDir()
	script := func(out string, bounded bool) string {
		job := filepath.Join(dir, out+".sql")
		sql := fmt.Sprintf(`
CREATE TABLE src (id BIGINT, k INT, v BIGINT) WITH (%s);
CREATE TABLE dst (id BIGINT, k INT, w BIGINT) WITH (%s);
INSERT INTO dst SELECT id, k, v + id * 1000 FROM src WHERE k <> 3;
`, bc.source(bounded), bc.sink(out))
		if err := os.WriteFile(job, []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
		return job
	}
	bc.publish(t, 0, brokerRecords/2)

	// The killed runs: the rest of the input arrives while they run.
	runs := newKillRuns(t, bin, dir, "run", script("killed", false), "--parallelism", "2",
		"--checkpoint-dir", filepath.Join(dir, "checkpoints"), "--checkpoint-interval", "200ms")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for from := brokerRecords / 2; from < brokerRecords; from += 500 {
			time.Sleep(150 * time.Millisecond)
			bc.publish(t, from, from+500)
		}
	}()
	runs.killTimes(5, 23, 24, 700*time.Millisecond, 1500*time.Millisecond)
	wg.Wait()
	runs.startLast()

	// The failure-free run, over the whole input, ends by itself.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ref := exec.CommandContext(ctx, bin, "run", script("clean", true), "--parallelism", "2",
		"--checkpoint-dir", filepath.Join(dir, "clean-checkpoints"), "--checkpoint-interval", "200ms")
	if out, err := ref.CombinedOutput(); err != nil {
		t.Fatalf("the failure-free run failed: %v\n%s", err, out)
	}
	want := bc.read(t, "clean")
	wantN := brokerRecords - (brokerRecords+3)/7
	if len(want) != wantN {
		t.Fatalf("the failure-free run wrote %d records, want %d", len(want), wantN)
	}

	var got []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got = bc.read(t, "killed")
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	// A few more checkpoints: nothing more may arrive.
	time.Sleep(time.Second)
	got = bc.read(t, "killed")
	if !slices.Equal(got, want) {
		runs.dump()
		seen := map[string]int{}
		var dups []string
		for _, r := range got {
			if seen[r]++; seen[r] == 2 {
				dups = append(dups, r)
			}
		}
		missing := 0
		for _, r := range want {
			if seen[r] == 0 {
				missing++
			}
		}
		t.Fatalf("after the kills the output holds %d records (%d twice, e.g. %v; %d missing), the failure-free run's %d",
			len(got), len(dups), dups[:min(3, len(dups))], missing, len(want))
	}
	resumed := 0
	for _, l := range runs.logs {
		if b, _ := os.ReadFile(l); strings.Contains(string(b), "resuming from the latest checkpoint") {
			resumed++
		}
	}
	if resumed == 0 {
		runs.dump()
		t.Fatal("no run resumed from a checkpoint: the kills came before any checkpoint completed")
	}
	t.Logf("%d records, equal to the failure-free run's; %d of %d runs resumed from a checkpoint", len(got), resumed, len(runs.logs))
}

// jetStreamCase is a JetStream stream IN copied into OUT_<name>, on an
// embedded NATS server.
func jetStreamCase(t *testing.T) brokerCase {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(ns.Shutdown)
	url := ns.ClientURL()
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, subj := range map[string]string{"IN": "in.>", "OUT_killed": "out.killed", "OUT_clean": "out.clean"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj}, Duplicates: 10 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	return brokerCase{
		publish: func(t *testing.T, from, to int) {
			var acks []jetstream.PubAckFuture
			for i := from; i < to; i++ {
				f, err := js.PublishAsync(fmt.Sprintf("in.%d", i%3), []byte(brokerInput(i)))
				if err != nil {
					t.Error(err)
					return
				}
				acks = append(acks, f)
			}
			for _, f := range acks {
				select {
				case <-f.Ok():
				case err := <-f.Err():
					t.Error(err)
					return
				case <-time.After(time.Minute):
					t.Error("JetStream did not acknowledge a publication")
					return
				}
			}
		},
		source: func(bounded bool) string {
			o := fmt.Sprintf(`'connector' = 'nats', 'url' = '%s', 'stream' = 'IN', 'subject' = 'in.0,in.1,in.2', 'format' = 'json'`, url)
			if bounded {
				o += `, 'scan.bounded.mode' = 'latest-offset'`
			}
			return o
		},
		sink: func(out string) string {
			return fmt.Sprintf(`'connector' = 'nats', 'url' = '%s', 'stream' = 'OUT_%s', 'subject' = 'out.%s', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once'`, url, out, out)
		},
		read: func(t *testing.T, out string) []string {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := js.Stream(ctx, "OUT_"+out)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := int(info.State.Msgs)
			var msgs []string
			if n == 0 {
				return nil
			}
			c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			for len(msgs) < n {
				batch, err := c.Fetch(n-len(msgs), jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for m := range batch.Messages() {
					msgs = append(msgs, string(m.Data()))
				}
				if err := batch.Error(); err != nil {
					t.Fatal(err)
				}
				if ctx.Err() != nil {
					t.Fatalf("reading stream OUT_%s: %d of %d messages", out, len(msgs), n)
				}
			}
			slices.Sort(msgs)
			return msgs
		},
	}
}

// kafkaCase is a topic "in" of three partitions copied into "out-<name>"
// with transactions, on franz-go's in-process cluster, read back with
// read_committed.
func kafkaCase(t *testing.T) brokerCase {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "in"), kfake.SeedTopics(2, "out-killed", "out-clean"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := strings.Join(c.ListenAddrs(), ",")
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return brokerCase{
		publish: func(t *testing.T, from, to int) {
			var recs []*kgo.Record
			for i := from; i < to; i++ {
				recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(brokerInput(i))})
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Error(err)
			}
		},
		source: func(bounded bool) string {
			o := fmt.Sprintf(`'connector' = 'kafka', 'properties.bootstrap.servers' = '%s', 'topic' = 'in', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset'`, addr)
			if bounded {
				o += `, 'scan.bounded.mode' = 'latest-offset'`
			}
			return o
		},
		sink: func(out string) string {
			return fmt.Sprintf(`'connector' = 'kafka', 'properties.bootstrap.servers' = '%s', 'topic' = 'out-%s', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'kill9-%s'`, addr, out, out)
		},
		read: func(t *testing.T, out string) []string {
			// Everything committed so far: up to the last stable offsets,
			// with read_committed.
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("out-"+out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			var msgs []string
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				fs := cl.PollFetches(ctx)
				cancel()
				n := 0
				fs.EachRecord(func(r *kgo.Record) {
					msgs = append(msgs, string(r.Value))
					n++
				})
				if n == 0 {
					break
				}
			}
			slices.Sort(msgs)
			return msgs
		},
	}
}
