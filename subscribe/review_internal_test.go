package subscribe

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// waitForFrame waits until a goroutine's stack holds fn.
func waitForFrame(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn) {
			time.Sleep(20 * time.Millisecond) // let it reach the lock it waits for
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no goroutine reached %s", fn)
}

// TestServeNATSWhilePublishing serves a table over NATS (as the first
// writer of a 'publish' table with 'serve.nats-url' does) while another
// writer publishes the same table, both waiting for the hub (busy, say,
// connecting another table's service): neither may wait for the other
// for ever.
func TestServeNATSWhilePublishing(t *testing.T) {
	rt := types.MustRowType(types.F("id", types.BigInt()))
	h := NewHub()
	for i := range 3 {
		name := fmt.Sprintf("t%d", i)
		topic, err := h.Publish(name, rt, TopicOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h.mu.Lock() // the hub is busy
		published := make(chan error, 1)
		go func() {
			t2, err := h.Publish(name, rt, TopicOptions{})
			if err == nil {
				t2.Close()
			}
			published <- err
		}()
		waitForFrame(t, "subscribe.(*Hub).Publish(")
		served := make(chan error, 1)
		go func() { served <- topic.serveNATS("nats://127.0.0.1:1", "eddy") }()
		waitForFrame(t, "subscribe.(*Hub).ServeNATS(")
		h.mu.Unlock()
		timeout := time.After(time.Minute)
		for _, ch := range []chan error{published, served} {
			select {
			case <-ch:
			case <-timeout:
				t.Fatal("publishing and serving a table over NATS at once deadlocked")
			}
		}
		topic.Close()
	}
}

// TestKeepAliveAdvancesLastEventID subscribes over HTTP with a condition
// that the table's events do not meet, on a table that keeps only its
// last 5 events: the keep-alives carry the position the subscription has
// been checked through as their id, so a reconnecting EventSource resumes
// from there instead of from a position the table no longer keeps (which
// is refused, and a browser's EventSource does not retry a refusal).
func TestKeepAliveAdvancesLastEventID(t *testing.T) {
	defer func(d time.Duration) { keepAlive = d }(keepAlive)
	keepAlive = 20 * time.Millisecond
	rt := types.MustRowType(types.F("id", types.BigInt()), types.F("region", types.String()))
	h := NewHub()
	topic, err := h.Publish("orders", rt, TopicOptions{Retain: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer topic.Close()
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/subscriptions/orders/events?where=" + url.QueryEscape("region = 'us'"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	deadline := time.Now().Add(time.Minute)
	for topic.Subscribers() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := int64(1); i <= 20; i++ {
		w := types.NewRowWriter(rt, types.NewArena(0))
		w.SetInt64(0, i)
		w.SetString(1, "eu")
		if err := topic.Publish(changelog.Insert, w.Finish()); err != nil {
			t.Fatal(err)
		}
	}
	lines, done := make(chan string), make(chan struct{})
	defer close(done)
	go func() {
		defer close(lines)
		r := bufio.NewReader(resp.Body)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			select {
			case lines <- strings.TrimRight(l, "\n"):
			case <-done:
				return
			}
		}
	}()
	id := ""
	timeout := time.After(time.Minute)
	for id != "id: 20" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the event stream ended")
			}
			if strings.HasPrefix(l, "id: ") {
				id = l
			}
			if strings.HasPrefix(l, "event: ") {
				t.Fatalf("an event the condition does not hold for was sent: %s", l)
			}
		case <-timeout:
			t.Fatalf("no keep-alive said the subscription was checked through position 20 (last id line: %q)", id)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/subscriptions/orders/events?where="+url.QueryEscape("region = 'us'"), nil)
	req.Header.Set("Last-Event-ID", "20")
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusOK {
		t.Errorf("resuming after the keep-alive's id: status %d", again.StatusCode)
	}
}
