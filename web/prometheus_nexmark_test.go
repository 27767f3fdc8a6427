//go:build unix

package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/nexmark/queries"
)

// BenchmarkNexmarkWithScrape runs Nexmark q0 and q5 at full speed without
// metrics and with a sample of the rates and a scrape of /metrics every
// second, and reports events/s per core of each: the cost of the metrics.
// EDDY_NEXMARK_EVENTS sets the events per run (default 20 000 000).
func BenchmarkNexmarkWithScrape(b *testing.B) {
	events := int64(20_000_000)
	if s := os.Getenv("EDDY_NEXMARK_EVENTS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("EDDY_NEXMARK_EVENTS=%q: want a positive number of events", s)
		}
		events = n
	}
	for _, query := range []string{"q0", "q5"} {
		for _, scraped := range []bool{false, true} {
			name := query + "/none"
			if scraped {
				name = query + "/scrape-1s"
			}
			b.Run(name, func(b *testing.B) {
				var wall, cpu time.Duration
				for b.Loop() {
					w, c := runNexmarkScraped(b, query, events, scraped)
					wall += w
					cpu += c
				}
				n := float64(events) * float64(b.N)
				b.ReportMetric(n/wall.Seconds(), "events/s")
				b.ReportMetric(n/cpu.Seconds(), "events/s/core")
			})
		}
	}
}

// runNexmarkScraped runs query over events and returns its wall and CPU
// time; with scraped, a goroutine samples the rates and scrapes the
// metrics every second while it runs.
func runNexmarkScraped(b *testing.B, query string, events int64, scraped bool) (wall, cpu time.Duration) {
	b.Helper()
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = events
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	q, _ := queries.Lookup(query)
	if _, err := q.Build(env, cfg, queries.Options{Sink: queries.Blackhole}); err != nil {
		b.Fatalf("%s: %v", query, err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	scrapes := 0
	if scraped {
		js := &Jobs{}
		js.Set("nexmark "+query, env)
		h := prometheusHandler(js)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case now := <-t.C:
					js.sampleAll(now)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
					if rec.Code != http.StatusOK {
						panic(fmt.Sprintf("GET /metrics: status %d", rec.Code))
					}
					scrapes++
				case <-stop:
					return
				}
			}
		}()
	}
	cpu0, wall0 := processCPU(), time.Now()
	err := env.Execute(context.Background(), "nexmark "+query)
	wall, cpu = time.Since(wall0), processCPU()-cpu0
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatalf("%s: %v", query, err)
	}
	if scraped && wall > 2*time.Second && scrapes == 0 {
		b.Fatalf("%s ran %v without a scrape", query, wall)
	}
	return wall, cpu
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
