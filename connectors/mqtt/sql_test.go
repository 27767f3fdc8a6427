package mqtt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/eddystream/eddy/sql"
)

// TestSQLMQTTToMQTT runs INSERT INTO an MQTT table SELECT from another, in
// JSON, with metadata columns, in MQTT 5 and 3.1.1.
func TestSQLMQTTToMQTT(t *testing.T) {
	needBroker(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			p, client := unique(t), unique(t)
			presubscribe(t, client, "", 0, p+"/sensors/+")
			out := dialRaw(t, unique(t)+"-sub", true, 0)
			defer out.close()
			out.subscribe(1, p+"/alerts")
			pub := dialRaw(t, unique(t)+"-pub", true, 0)
			defer pub.close()
			const n = 400
			for i := 0; i < n; i++ {
				b := fmt.Sprintf(`{"sensor": "s%d", "celsius": %d}`, i, i%80)
				pub.publish(fmt.Sprintf("%s/sensors/%d", p, i%4), []byte(b), 1, false)
			}
			s := sql.NewSession(sql.WithParallelism(2))
			script := fmt.Sprintf(`
CREATE TABLE readings (
  sensor STRING, celsius INT,
  src STRING METADATA FROM 'topic', q INT METADATA FROM 'qos', arrived TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/sensors/+', 'client-id' = '%[3]s',
  'format' = 'json', 'mqtt.version' = '%[4]s');
CREATE TABLE alerts (sensor STRING, celsius INT, src STRING, q INT, late BOOLEAN) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/alerts', 'qos' = '2',
  'format' = 'json', 'mqtt.version' = '%[4]s');
INSERT INTO alerts SELECT UPPER(sensor), celsius, src, q, arrived < TIMESTAMP '2000-01-01 00:00:00' FROM readings WHERE celsius >= 40;
`, brokerURL, p, client, version)
			if _, err := s.Execute(script); err != nil {
				t.Fatal(err)
			}
			env := checkpointed(t, 2)
			if err := s.Build(env); err != nil {
				t.Fatal(err)
			}
			j := startJob(t, env)
			want := 0
			for i := 0; i < n; i++ {
				if i%80 >= 40 {
					want++
				}
			}
			got := out.waitUntil(time.Minute, "every alert", func(ms []rawMsg) bool {
				if err := j.failed(); err != nil {
					t.Fatalf("the job failed: %v", err)
				}
				return len(ms) >= want
			})
			if err := j.stop(); err != nil {
				t.Fatal(err)
			}
			type alert struct {
				Sensor  string `json:"sensor"`
				Celsius int    `json:"celsius"`
				Src     string `json:"src"`
				Q       int    `json:"q"`
				Late    bool   `json:"late"`
			}
			var rendered, expected []string
			for _, m := range got {
				var a alert
				if err := json.Unmarshal(m.payload, &a); err != nil {
					t.Fatalf("%q: %v", m.payload, err)
				}
				if a.Q != 1 || a.Late {
					t.Fatalf("alert %q: the metadata says QoS %d and an arrival before 2000", m.payload, a.Q)
				}
				rendered = append(rendered, fmt.Sprintf("%s %d %s", a.Sensor, a.Celsius, a.Src))
			}
			for i := 0; i < n; i++ {
				if i%80 >= 40 {
					expected = append(expected, fmt.Sprintf("S%d %d %s/sensors/%d", i, i%80, p, i%4))
				}
			}
			slices.Sort(rendered)
			slices.Sort(expected)
			if !slices.Equal(rendered, expected) {
				t.Fatalf("topic %s/alerts got %d messages, want %d; first: %v", p, len(rendered), len(expected), rendered[:min(5, len(rendered))])
			}
		})
	}
}

// TestSQLMQTT5Properties reads the content type and user properties of
// MQTT 5 messages as metadata columns.
func TestSQLMQTT5Properties(t *testing.T) {
	needBroker(t)
	p, client := unique(t), unique(t)
	presubscribe(t, client, "", 0, p+"/in")
	out := dialRaw(t, unique(t)+"-sub", true, 0)
	defer out.close()
	out.subscribe(1, p+"/out")
	pub := dialRaw(t, unique(t)+"-pub", true, 0)
	defer pub.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pub.cli.Publish(ctx, &paho.Publish{Topic: p + "/in", QoS: 1, Payload: []byte(`{"v": 1}`), Properties: &paho.PublishProperties{
		ContentType: "application/json", User: paho.UserProperties{{Key: "site", Value: "paris"}, {Key: "rack", Value: "7"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.cli.Publish(ctx, &paho.Publish{Topic: p + "/in", QoS: 1, Payload: []byte(`{"v": 2}`)}); err != nil {
		t.Fatal(err)
	}
	s := sql.NewSession(sql.WithParallelism(1))
	script := fmt.Sprintf(`
CREATE TABLE msgs (
  v INT, ct STRING METADATA FROM 'content-type', props MAP<STRING, STRING> METADATA FROM 'user-properties'
) WITH ('connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/in', 'client-id' = '%[3]s', 'format' = 'json');
CREATE TABLE copies (v INT, ct STRING, site STRING, n INT) WITH (
  'connector' = 'mqtt', 'url' = '%[1]s', 'topic' = '%[2]s/out', 'format' = 'json');
INSERT INTO copies SELECT v, ct, props['site'], CARDINALITY(props) FROM msgs;
`, brokerURL, p, client)
	if _, err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	env := checkpointed(t, 1)
	if err := s.Build(env); err != nil {
		t.Fatal(err)
	}
	j := startJob(t, env)
	got := out.waitUntil(time.Minute, "both copies", func(ms []rawMsg) bool {
		if err := j.failed(); err != nil {
			t.Fatalf("the job failed: %v", err)
		}
		return len(ms) >= 2
	})
	if err := j.stop(); err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, m := range got {
		rendered = append(rendered, string(m.payload))
	}
	slices.Sort(rendered)
	want := []string{`{"v":1,"ct":"application/json","site":"paris","n":2}`, `{"v":2,"ct":null,"site":null,"n":0}`}
	if !slices.Equal(rendered, want) {
		t.Fatalf("copies %q, want %q", rendered, want)
	}
}
