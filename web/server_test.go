package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/eddystream/eddy"
)

func TestStatusAndSavepointErrors(t *testing.T) {
	env := eddy.NewEnvironment()
	eddy.Discard(eddy.FromSlice(env, []int{1, 2, 3}, eddy.NoWatermarks[int]()))
	if err := env.Execute(context.Background(), "tiny"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(env, "tiny"))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/jobs/current")
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Name      string
		Operators []struct {
			Name       string
			RecordsOut int64
		}
	}
	json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	var out int64
	for _, op := range status.Operators {
		out += op.RecordsOut
	}
	if status.Name != "tiny" || out != 3 {
		t.Fatalf("status %+v", status)
	}

	resp, err = http.Post(srv.URL+"/jobs/current/savepoints", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("savepoint without a directory: %s", resp.Status)
	}
	resp.Body.Close()
	resp, err = http.Post(srv.URL+"/jobs/current/savepoints", "application/json", strings.NewReader(`{"dir": "`+t.TempDir()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || answer.Error == "" {
		t.Fatalf("savepoint of a finished job: %s %+v", resp.Status, answer)
	}
}
