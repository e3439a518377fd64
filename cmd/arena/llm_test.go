package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunWithLLMAgents plays a short foraging episode with every agent an
// llm.Agent talking to a fake OpenAI-compatible server that always answers
// with a move.
func TestRunWithLLMAgents(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"explore",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"move_to","arguments":"{\"target\":[1,0,1]}"}}]}}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, _, err := arena(t, "run", "--scenario", "foraging", "--agents", "2", "--ticks", "20", "--out", dir, "--quiet",
		"--agent", "llm", "--model", "fake", "--base-url", srv.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 || !strings.Contains(out, "mean score") {
		t.Fatalf("%d calls; output:\n%s", calls.Load(), out)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "transcripts"))
	if err != nil || len(ents) != 2 {
		t.Fatalf("transcripts: %v %v", ents, err)
	}
	if _, _, err := arena(t, "run", "--agent", "llm", "--out", dir, "--quiet", "--ticks", "1", "--base-url", srv.URL); err == nil && os.Getenv("ARENA_MODEL") == "" {
		t.Error("--agent llm without a model accepted")
	}
}

// TestServeWithLLMBots fills every slot of `arena serve` with language-model
// agents (--bots with --agent llm), so the episode starts at once and plays
// against the fake model.
func TestServeWithLLMBots(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"wait",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"idle","arguments":"{}"}}]}}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, _, err := arena(t, "serve", "--scenario", "foraging", "--agents", "2", "--bots", "2", "--ticks", "5",
		"--listen", "unix:"+filepath.Join(dir, "a.sock"), "--out", dir, "--agent", "llm", "--model", "fake", "--base-url", srv.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 10 || !strings.Contains(out, "ended: time_limit after 5 ticks") {
		t.Fatalf("%d model calls (want 2 agents × 5 ticks); output:\n%s", calls.Load(), out)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "transcripts")); err != nil || len(ents) != 2 {
		t.Fatalf("transcripts: %v %v", ents, err)
	}
}
