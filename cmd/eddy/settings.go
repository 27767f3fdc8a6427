package main

import (
	"fmt"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
)

// checkpointSettings returns the options of the checkpoint settings a SQL
// script or session SET: 'execution.checkpointing.interval' (unless
// withInterval is false: a flag gave it) and
// 'execution.checkpointing.min-pause'.
func checkpointSettings(set map[string]string, withInterval bool) ([]eddy.Option, error) {
	var opts []eddy.Option
	if v, ok := set["execution.checkpointing.interval"]; ok && withInterval {
		d, err := connector.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("SET 'execution.checkpointing.interval' = '%s': %w", v, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("SET 'execution.checkpointing.interval' = '%s': want a positive duration such as '10 s'", v)
		}
		opts = append(opts, eddy.WithCheckpointing(d))
	}
	if v, ok := set["execution.checkpointing.min-pause"]; ok {
		d, err := connector.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("SET 'execution.checkpointing.min-pause' = '%s': %w", v, err)
		}
		if d < 0 {
			return nil, fmt.Errorf("SET 'execution.checkpointing.min-pause' = '%s': want a duration such as '0 s' or '500 ms'", v)
		}
		opts = append(opts, eddy.WithMinPauseBetweenCheckpoints(d))
	}
	return opts, nil
}
