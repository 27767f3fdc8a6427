package runtime

import (
	"strings"
	"testing"
	"time"
)

// TestConfigValidate checks that EnsureDefaults fills only the fields left
// zero, and that Validate names every field out of range.
func TestConfigValidate(t *testing.T) {
	var c Config
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
	if c.Parallelism != DefaultParallelism || c.MaxParallelism != 128 || c.BatchSize != DefaultBatchSize {
		t.Fatalf("defaults: %+v", c)
	}
	bad := Config{Parallelism: -3, MaxParallelism: 40000, BatchSize: -1, Linger: -time.Millisecond, ChannelCapacity: -2,
		Checkpoints: CheckpointConfig{Interval: -time.Second, Timeout: -time.Second, Retain: -1}}
	bad.EnsureDefaults()
	if bad.Parallelism != -3 || bad.BatchSize != -1 {
		t.Fatalf("EnsureDefaults replaced invalid values: %+v", bad)
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"Config.Parallelism is -3; it must be between 1 and 32768",
		"Config.MaxParallelism is 40000; it must be between 1 and 32768",
		"Config.BatchSize is -1; it must be at least 1",
		"Config.Linger is -1ms",
		"Config.ChannelCapacity is -2",
		"Config.Checkpoints.Interval is -1s",
		"Config.Checkpoints.Timeout is -1s",
		"Config.Checkpoints.Retain is -1",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := Compile(&Graph{}, Config{Parallelism: -1}); err == nil || !strings.Contains(err.Error(), "Config.Parallelism is -1") {
		t.Errorf("Compile: %v", err)
	}
}
