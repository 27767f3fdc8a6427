package mqtt_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

// checkpointed is the environment of the tests' jobs: checkpoints every
// 20 ms.
func checkpointed(t testing.TB, parallelism int, opts ...eddy.Option) *eddy.Environment {
	return eddy.NewEnvironment(append([]eddy.Option{eddy.WithParallelism(parallelism), eddy.WithCheckpointing(20 * time.Millisecond),
		eddy.WithCheckpointDir(t.TempDir()), eddy.WithLogger(quiet())}, opts...)...)
}

// TestReadsFilters reads two wildcard filters, two splits at parallelism
// 2, into an exactly-once sink: without failures each message arrives once,
// those of each topic in order, and none of the topics the filters do not
// match.
func TestReadsFilters(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			filters := []string{p + "/sensors/+/temp", p + "/alarms/#"}
			presubscribe(t, client, "", 0, filters...)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			src := openSource(t, map[string]string{"url": brokerURL, "topic": strings.Join(filters, ","), "client-id": client, "format": "json", "mqtt.version": version})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 2)
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
			j := startJob(t, env)
			topics := []string{p + "/sensors/a/temp", p + "/alarms", p + "/alarms/fire/3", p + "/sensors/a/humidity", p + "/other"}
			want := map[int64]bool{}
			for _, l := range pub.publishLines(func(n int) string { return topics[n%len(topics)] }, 0, 1500, len(topics)) {
				if l.Part < 3 {
					want[l.N] = true
				}
			}
			got := committedUntil(t, j, mem, time.Minute, "every matching message", func(got []line) bool { return len(got) >= len(want) })
			// Anything more would have arrived by a message published now.
			pub.publishLines(func(int) string { return topics[0] }, 100000, 100001, 1)
			got = committedUntil(t, j, mem, time.Minute, "the last message", func(got []line) bool { return counts(got)[100000] > 0 })
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			c := counts(got)
			for n := range want {
				if c[n] != 1 {
					t.Fatalf("message %d arrived %d times, want once", n, c[n])
				}
			}
			if len(got) != len(want)+1 {
				t.Fatalf("read %d messages, want %d: a filter matched a topic it should not", len(got), len(want)+1)
			}
			last := map[int]int64{}
			for _, l := range got {
				if prev, ok := last[l.Part]; ok && l.N < prev && l.N != 100000 {
					t.Fatalf("topic %s: message %d arrived after %d", topics[l.Part], l.N, prev)
				}
				last[l.Part] = l.N
			}
		})
	}
}

// TestQoS0 reads with QoS 0, in sessions that end with the connection:
// the source reads what is published while it is connected.
func TestQoS0(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			src := openSource(t, map[string]string{"url": brokerURL, "topic": p + "/+", "qos": "0", "client-id": client, "format": "json", "mqtt.version": version})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 1)
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
			j := startJob(t, env)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			// Nothing waits for a QoS 0 subscriber that is not connected:
			// publish until enough has arrived.
			sent := 0
			committedUntil(t, j, mem, time.Minute, "200 messages", func(got []line) bool {
				if len(got) >= 200 {
					return true
				}
				pub.publishLines(func(int) string { return p + "/x" }, sent, sent+20, 1)
				pub.publish(p+"/x/deeper", line{N: -1}.json(), 0, false)
				sent += 20
				return false
			})
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			last := int64(-1)
			for _, l := range mem.Committed() {
				if l.N < 0 {
					t.Fatalf("a message of a topic '%s/+' does not match arrived", p)
				}
				if l.N <= last {
					t.Fatalf("message %d arrived after %d", l.N, last)
				}
				last = l.N
			}
		})
	}
}

// TestAtLeastOnceAcrossFailures reads QoS 1 messages through a map that
// fails three times: every message is committed at least once, though the
// job restarts from its last checkpoint each time and the broker delivers
// again what the failed run had read but not acknowledged.
func TestAtLeastOnceAcrossFailures(t *testing.T) {
	needBroker(t)
	const n = 6000
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			filters := []string{p + "/a/#", p + "/b/#"}
			presubscribe(t, client, "", 0, filters...)
			src := openSource(t, map[string]string{"url": brokerURL, "topic": strings.Join(filters, ","), "client-id": client, "format": "json", "mqtt.version": version})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 2, eddy.WithRestartStrategy(eddy.FixedDelayRestart(10, 20*time.Millisecond)))
			var mu sync.Mutex
			failAt := map[int64]bool{1000: true, 2500: true, 4500: true}
			s := eddy.Map(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), func(l line) line {
				mu.Lock()
				boom := failAt[l.N]
				delete(failAt, l.N)
				mu.Unlock()
				if boom {
					panic(fmt.Sprintf("injected failure at message %d", l.N))
				}
				return l
			})
			eddy.WriteTo(s, "memory", mem.Sink())
			j := startJob(t, env)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			topic := func(n int) string { return []string{p + "/a", p + "/b/c"}[n%2] }
			// Publish in steps the sessions' queues hold while the job
			// restarts (Mosquitto keeps 1000 messages for a disconnected
			// client).
			for from := 0; from < n; from += 400 {
				pub.publishLines(topic, from, from+400, 2)
				committedUntil(t, j, mem, time.Minute, fmt.Sprintf("messages up to %d", from), func(got []line) bool { return distinct(got) >= from+400-800 })
			}
			got := committedUntil(t, j, mem, 2*time.Minute, "every message", func(got []line) bool { return distinct(got) == n })
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			left := len(failAt)
			mu.Unlock()
			if left != 0 || env.Restarts() < 2 {
				t.Fatalf("%d injected failures never struck, and the job restarted %d times", left, env.Restarts())
			}
			dups := len(got) - n
			t.Logf("MQTT %s: %d messages committed, %d of them again after %d restarts", version, len(got), dups, env.Restarts())
		})
	}
}

// distinct counts the distinct messages among ls.
func distinct(ls []line) int { return len(counts(ls)) }

// TestAcknowledgesOnlyCheckpointedMessages reads messages in a job whose
// checkpoints never complete and stops it: the broker still holds every
// message for the session and delivers it again. A job whose checkpoint
// covering the messages completed leaves none.
func TestAcknowledgesOnlyCheckpointedMessages(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			n := 300
			if version == "3.1.1" {
				// A 3.1.1 session gets no more unacknowledged messages than
				// the broker's in-flight limit (Mosquitto's
				// max_inflight_messages, 20 by default).
				n = 20
			}
			p, client := unique(t), unique(t)
			presubscribe(t, client, "", 0, p+"/#")
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			pub.publishLines(func(int) string { return p + "/m" }, 0, n, 1)
			opts := map[string]string{"url": brokerURL, "topic": p + "/#", "client-id": client, "format": "json", "mqtt.version": version}
			read := func(env *eddy.Environment, until func(*eddy.Environment, []line) bool) {
				t.Helper()
				var mu sync.Mutex
				var seen []line
				s := eddy.Map(eddy.FromSource(env, "mqtt in", openSource(t, opts), eddy.NoWatermarks[line]()), func(l line) line {
					mu.Lock()
					seen = append(seen, l)
					mu.Unlock()
					return l
				})
				eddy.WriteTo(s, "discard", connectortest.NewMemorySink[line]().Sink())
				j := startJob(t, env)
				deadline := time.Now().Add(time.Minute)
				for {
					mu.Lock()
					got := append([]line(nil), seen...)
					mu.Unlock()
					if until(env, got) {
						break
					}
					if err := j.failed(); err != nil {
						t.Fatal(err)
					}
					if time.Now().After(deadline) {
						t.Fatalf("the job read %d of %d messages", distinct(got), n)
					}
					time.Sleep(5 * time.Millisecond)
				}
				if err := j.stop(); err != nil {
					t.Fatal(err)
				}
			}
			// Checkpointing, but with an interval no test waits for.
			slow := eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithCheckpointing(time.Hour), eddy.WithCheckpointDir(t.TempDir()), eddy.WithLogger(quiet()))
			read(slow, func(_ *eddy.Environment, got []line) bool { return distinct(got) == n })
			// The session holds every message, unacknowledged: the broker
			// delivers them to its next connection before anything newer.
			pub.publishLines(func(int) string { return p + "/m" }, n, n+1, 1)
			raw := dialRaw(t, client+"-0", false, 3600)
			got := raw.waitUntil(time.Minute, "the message published last", func(got []rawMsg) bool { return lastIs(got, int64(n)) })
			raw.close()
			if len(got) != n+1 {
				t.Fatalf("the broker delivered %d messages to the session after the job, want the %d the job read and the one published after", len(got), n+1)
			}
			for i, m := range got[:n] {
				var l line
				if err := json.Unmarshal(m.payload, &l); err != nil || l.N != int64(i) || !m.dup {
					t.Fatalf("message %d delivered again is %q (dup %v), want message %d, marked as a duplicate", i, m.payload, m.dup, i)
				}
			}
			// The raw client acknowledged them all. Now a job checkpoints
			// what it reads, and stops once the reader has heard of the
			// completion of a checkpoint taken after the last message.
			// Checkpoints go one at a time, and a source subtask hears of
			// one completing at the latest when it snapshots the one after
			// the next: so four more completions.
			pub.publishLines(func(int) string { return p + "/m" }, 1000, 1000+n, 1)
			after := int64(-1)
			read(checkpointed(t, 1), func(env *eddy.Environment, got []line) bool {
				if distinct(slices.DeleteFunc(got, func(l line) bool { return l.N < 1000 })) < n {
					return false
				}
				last := int64(0)
				for _, s := range env.CheckpointStats() {
					last = max(last, s.ID)
				}
				if after < 0 {
					after = last
				}
				return last >= after+4
			})
			pub.publishLines(func(int) string { return p + "/m" }, 5000, 5001, 1)
			raw = dialRaw(t, client+"-0", false, 3600)
			got = raw.waitUntil(time.Minute, "the message published last", func(got []rawMsg) bool { return lastIs(got, 5000) })
			raw.close()
			if len(got) != 1 {
				t.Fatalf("the broker delivered %d messages to the session after the checkpointed job, want only the one published after it", len(got))
			}
		})
	}
}

// lastIs says whether the last message of got is line n.
func lastIs(got []rawMsg, n int64) bool {
	if len(got) == 0 {
		return false
	}
	var l line
	return json.Unmarshal(got[len(got)-1].payload, &l) == nil && l.N == n
}

// TestSharedSubscription reads a filter as a shared subscription at
// parallelism 3: the broker divides the messages among the three sessions,
// and each arrives once.
func TestSharedSubscription(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client, group := unique(t), unique(t), unique(t)
			presubscribe(t, client, group, 3, p+"/+")
			src := openSource(t, map[string]string{"url": brokerURL, "topic": p + "/+", "client-id": client, "format": "json", "mqtt.version": version,
				"scan.shared-subscription.group": group})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 3)
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
			j := startJob(t, env)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			pub.publishLines(func(n int) string { return fmt.Sprintf("%s/%d", p, n%5) }, 0, 900, 5)
			got := committedUntil(t, j, mem, time.Minute, "every message", func(got []line) bool { return len(got) >= 900 })
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			c := counts(got)
			for i := int64(0); i < 900; i++ {
				if c[i] != 1 {
					t.Fatalf("message %d arrived %d times, want once", i, c[i])
				}
			}
		})
	}
}

// TestMalformedMessages sends a message that is not JSON: the job fails
// naming its topic, and the broker delivers it again to the next job,
// which, with dead letters, sets it aside and goes on.
func TestMalformedMessages(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			presubscribe(t, client, "", 0, p+"/#")
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			pub.publishLines(func(int) string { return p + "/ok" }, 0, 10, 1)
			pub.publish(p+"/bad", []byte("{not json"), 1, false)
			pub.publishLines(func(int) string { return p + "/ok" }, 10, 20, 1)
			opts := map[string]string{"url": brokerURL, "topic": p + "/#", "client-id": client, "format": "json", "mqtt.version": version}

			first := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 1, eddy.WithRestartStrategy(eddy.NoRestart()))
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", openSource(t, opts), eddy.NoWatermarks[line]()), "memory", first.Sink())
			j := startJob(t, env)
			select {
			case err := <-j.done:
				close(j.done)
				if err == nil || !strings.Contains(err.Error(), "topic "+p+"/bad") {
					t.Fatalf("reading a malformed message: %v, want an error naming topic %s/bad", err, p)
				}
			case <-time.After(time.Minute):
				t.Fatal("the job did not fail on the malformed message")
			}

			mem := connectortest.NewMemorySink[line]()
			dead := connectortest.NewMemorySink[connector.DeadLetter]()
			env = checkpointed(t, 1)
			s := eddy.FromSource(env, "mqtt in", openSource(t, opts), eddy.NoWatermarks[line](), eddy.OnBadRecord(eddy.DeadLetterBadRecords))
			eddy.WriteTo(s, "memory", mem.Sink())
			eddy.WriteTo(eddy.DeadLetters(s), "dead letters", dead.Sink())
			j = startJob(t, env)
			// The first job acknowledged what its checkpoints covered; the
			// broker delivers the rest again.
			committedUntil(t, j, mem, time.Minute, "20 messages in all", func(got []line) bool { return distinct(append(got, first.Committed()...)) == 20 })
			d := committedUntil(t, j, dead, time.Minute, "the dead letter", func(got []connector.DeadLetter) bool { return len(got) > 0 })
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			if d[0].Raw != "{not json" || !strings.Contains(d[0].Location, "topic "+p+"/bad") {
				t.Fatalf("dead letter %+v, want the malformed message of topic %s/bad", d[0], p)
			}
		})
	}
}

// TestRetainedMessages reads a topic with a retained message: 'include'
// reads it, 'exclude' leaves it out.
func TestRetainedMessages(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p := unique(t)
			pub := dialRaw(t, unique(t)+"-pub", true, 0)
			defer pub.close()
			pub.publish(p+"/state", line{N: -7}.json(), 1, true)
			t.Cleanup(func() { clearRetained(t, p+"/state") })
			for _, policy := range []string{"include", "exclude"} {
				client := unique(t)
				t.Cleanup(func() { dropSession(t, client+"-0") })
				src := openSource(t, map[string]string{"url": brokerURL, "topic": p + "/+", "client-id": client, "format": "json", "mqtt.version": version,
					"scan.retained-messages": policy})
				mem := connectortest.NewMemorySink[line]()
				env := checkpointed(t, 1)
				eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
				j := startJob(t, env)
				// The live message comes after the retained one, which the
				// broker sends when the source subscribes.
				sent := 0
				got := committedUntil(t, j, mem, time.Minute, "a live message", func(got []line) bool {
					for _, l := range got {
						if l.N >= 0 {
							return true
						}
					}
					pub.publish(p+"/live", line{N: int64(sent)}.json(), 1, false)
					sent++
					time.Sleep(20 * time.Millisecond)
					return false
				})
				if err := j.stop(); err != nil {
					t.Fatal(err)
				}
				retained := slices.ContainsFunc(got, func(l line) bool { return l.N == -7 })
				if retained != (policy == "include") {
					t.Fatalf("with 'scan.retained-messages' = '%s' the retained message was read: %v", policy, retained)
				}
			}
		})
	}
}

// TestSessionTakenOver has another client connect, again and again, with
// the client id of a reader's session, as a second job with the same
// 'client-id' would: the job fails, naming 'client-id', instead of taking
// the session back and forth for ever.
func TestSessionTakenOver(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			presubscribe(t, client, "", 0, p+"/#")
			src := openSource(t, map[string]string{"url": brokerURL, "topic": p + "/#", "client-id": client, "format": "json", "mqtt.version": version})
			mem := connectortest.NewMemorySink[line]()
			env := checkpointed(t, 1, eddy.WithRestartStrategy(eddy.NoRestart()))
			eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", mem.Sink())
			j := startJob(t, env)
			pub := dialRaw(t, client+"-pub", true, 0)
			defer pub.close()
			pub.publishLines(func(int) string { return p + "/x" }, 0, 1, 1)
			committedUntil(t, j, mem, time.Minute, "the reader to read", func(got []line) bool { return len(got) > 0 })
			deadline := time.After(time.Minute)
			for {
				intruder := dialRaw(t, client+"-0", false, 3600)
				select {
				case err := <-j.done:
					close(j.done)
					intruder.close()
					if err == nil || !strings.Contains(err.Error(), "takes the session over") || !strings.Contains(err.Error(), "'client-id'") {
						t.Fatalf("the job ended with %v, want an error saying another client takes the session over, naming 'client-id'", err)
					}
					return
				case <-deadline:
					t.Fatal("the job goes on though another client keeps taking its session over")
				case <-time.After(200 * time.Millisecond):
				}
			}
		})
	}
}
