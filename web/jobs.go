package web

import (
	"math"
	"sync"
	"time"

	"github.com/eddystream/eddy"
)

// Jobs is the set of jobs a server shows: a process runs one job at a time
// (a rescale replaces it with a new execution of the same name).
type Jobs struct {
	mu   sync.Mutex
	jobs []*job
}

// job is one job the server shows, with the rates of its subtasks.
type job struct {
	name string
	env  *eddy.Environment

	mu    sync.Mutex
	last  time.Time
	prev  map[subtaskKey]eddy.OperatorMetrics
	rates map[subtaskKey]Rates
}

type subtaskKey struct {
	operator int // eddy.OperatorMetrics.OperatorID
	subtask  int
}

// Rates are the per-second rates of one operator subtask over the latest
// sampling interval, with Flink's names.
type Rates struct {
	RecordsInPerSecond           float64 `json:"recordsInPerSecond"`
	RecordsOutPerSecond          float64 `json:"recordsOutPerSecond"`
	BytesInPerSecond             float64 `json:"bytesInPerSecond"`
	BytesOutPerSecond            float64 `json:"bytesOutPerSecond"`
	BusyTimeMsPerSecond          float64 `json:"busyTimeMsPerSecond"`
	IdleTimeMsPerSecond          float64 `json:"idleTimeMsPerSecond"`
	BackPressuredTimeMsPerSecond float64 `json:"backPressuredTimeMsPerSecond"`
}

// Set shows env as the job called name, replacing a job of that name.
func (js *Jobs) Set(name string, env *eddy.Environment) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j := &job{name: name, env: env}
	for i, o := range js.jobs {
		if o.name == name {
			js.jobs[i] = j
			return
		}
	}
	js.jobs = append(js.jobs, j)
}

// list returns the jobs in the order they were set.
func (js *Jobs) list() []*job {
	js.mu.Lock()
	defer js.mu.Unlock()
	return append([]*job(nil), js.jobs...)
}

// get returns the job called name; "current" is the latest set.
func (js *Jobs) get(name string) *job {
	js.mu.Lock()
	defer js.mu.Unlock()
	if name == "current" && len(js.jobs) > 0 {
		return js.jobs[len(js.jobs)-1]
	}
	for _, j := range js.jobs {
		if j.name == name {
			return j
		}
	}
	return nil
}

// sampleAll samples every job's metrics.
func (js *Jobs) sampleAll(now time.Time) {
	for _, j := range js.list() {
		j.sample(now)
	}
}

// run samples the jobs every interval until stop is closed.
func (js *Jobs) run(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	js.sampleAll(time.Now())
	for {
		select {
		case now := <-t.C:
			js.sampleAll(now)
		case <-stop:
			return
		}
	}
}

// sample reads the job's counters and computes each subtask's rates since
// the previous sample.
func (j *job) sample(now time.Time) {
	ms := j.env.Metrics()
	j.mu.Lock()
	defer j.mu.Unlock()
	cur := make(map[subtaskKey]eddy.OperatorMetrics, len(ms))
	rates := make(map[subtaskKey]Rates, len(ms))
	for _, m := range ms {
		k := subtaskKey{m.OperatorID, m.Subtask}
		cur[k] = m
		p, ok := j.prev[k]
		if !ok || !p.Started.Equal(m.Started) || j.last.IsZero() {
			continue // no earlier sample of this execution of the subtask
		}
		secs := now.Sub(j.last).Seconds()
		if secs <= 0 {
			continue
		}
		ms := func(d time.Duration) float64 {
			return math.Min(1000, math.Max(0, float64(d)/float64(time.Millisecond)/secs))
		}
		rates[k] = Rates{
			RecordsInPerSecond:           math.Max(0, float64(m.RecordsIn-p.RecordsIn)/secs),
			RecordsOutPerSecond:          math.Max(0, float64(m.RecordsOut-p.RecordsOut)/secs),
			BytesInPerSecond:             math.Max(0, float64(m.BytesIn-p.BytesIn)/secs),
			BytesOutPerSecond:            math.Max(0, float64(m.BytesOut-p.BytesOut)/secs),
			BusyTimeMsPerSecond:          ms(m.BusyTime - p.BusyTime),
			IdleTimeMsPerSecond:          ms(m.IdleTime - p.IdleTime),
			BackPressuredTimeMsPerSecond: ms(m.BackPressuredTime - p.BackPressuredTime),
		}
	}
	j.prev, j.rates, j.last = cur, rates, now
}

// ratesOf returns the latest rates of the subtask (zero before two
// samples).
func (j *job) ratesOf(operator, subtask int) Rates {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rates[subtaskKey{operator, subtask}]
}
