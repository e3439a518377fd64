package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/eval"
	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
)

// scrape reads /metrics: each sample by name{label="value",...}, histograms
// as NAME_count and NAME_sum.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[name+"_count"] = float64(m.Histogram.GetSampleCount())
				out[name+"_sum"] = m.Histogram.GetSampleSum()
			}
		}
	}
	return out
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func TestMetricsAreScrapedWhileAgentsPlay(t *testing.T) {
	const seed = 3
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	srv, err := server.New(server.Options{Scenario: sc, Seed: seed, Metrics: server.NewMetrics()})
	require.NoError(t, err)
	admin := httptest.NewServer(srv.AdminHandler())
	defer admin.Close()
	addr, l := listen(t)
	served := make(chan []*engine.Results, 1)
	go func() {
		all, err := srv.Serve(context.Background(), l)
		require.NoError(t, err)
		served <- all
	}()

	code, body := get(t, admin.URL+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok", body)
	code, body = get(t, admin.URL+"/readyz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "2 agent slots free", body)

	// A session that breaks the protocol, counted by its error code.
	early := dial(t, addr)
	early.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	m, _ := early.recv()
	require.Equal(t, ipc.CodeNotReady, m["code"])

	var players sync.WaitGroup
	defer players.Wait() // before the cleanups close their connections
	for range 2 {
		players.Go(func() { play(t, addr, seed) })
	}
	// Mid-episode: both agents connected, no slot free, ticks going up.
	var mid map[string]float64
	require.Eventually(t, func() bool {
		mid = scrape(t, admin.URL)
		return mid["arena_ticks_total"] >= 20
	}, 30*time.Second, 5*time.Millisecond)
	require.Equal(t, 2.0, mid[`arena_sessions{role="agent"}`])
	require.Equal(t, 0.0, mid["arena_slots_free"])
	require.Equal(t, 1.0, mid["arena_episode"])
	code, body = get(t, admin.URL+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "no free agent slot", body)

	var all []*engine.Results
	select {
	case all = <-served:
	case <-time.After(60 * time.Second):
		t.Fatal("the episode did not end")
	}
	res := all[0]
	require.Less(t, mid["arena_ticks_total"], float64(res.Ticks), "the first scrape was mid-episode")

	// The truth: the same episode in process, counting its decisions.
	decisions := 0
	local, err := eval.Episode(context.Background(), eval.Config{Scenario: sc, Seed: seed}, 1, func(rec *engine.TickRecord) {
		decisions += len(rec.Decisions)
	})
	require.NoError(t, err)
	require.Equal(t, local.FinalStateHash, res.FinalStateHash)

	end := scrape(t, admin.URL)
	require.Equal(t, float64(res.Ticks), end["arena_ticks_total"])
	require.Equal(t, float64(res.Ticks), end["arena_tick_duration_seconds_count"], "every tick is timed")
	require.Positive(t, end["arena_tick_duration_seconds_sum"])
	require.Equal(t, float64(decisions), end["arena_decisions_total"])
	require.Equal(t, 0.0, end["arena_decision_timeouts_total"])
	require.Equal(t, 1.0, end[`arena_episodes_total{end_reason="completed"}`])
	require.Equal(t, 1.0, end[`arena_errors_total{code="NOT_READY",source="protocol"}`])
	require.Positive(t, end["arena_bytes_in_total"])
	require.Greater(t, end["arena_bytes_out_total"], end["arena_bytes_in_total"], "observations outweigh decisions")
	require.Equal(t, 0.0, end["arena_draining"])
	require.Contains(t, end, "go_goroutines", "the runtime's collectors")
}

func TestMetricsCountTimeoutsAndToolErrors(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	metrics := server.NewMetrics()
	srv, err := server.New(server.Options{Scenario: sc, Seed: 1, Agents: 1, Ticks: 3, DecisionTimeout: 50 * time.Millisecond, Metrics: metrics})
	require.NoError(t, err)
	admin := httptest.NewServer(srv.AdminHandler())
	defer admin.Close()
	addr, l := listen(t)
	served := make(chan struct{})
	go func() {
		_, err := srv.Serve(context.Background(), l)
		require.NoError(t, err)
		close(served)
	}()
	c := dial(t, addr)
	c.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent"})
	// Tick 0: a tool the world refuses; ticks 1 and 2: nothing, timed out.
	for {
		m, _ := c.recv()
		if m["type"] == "observation" && m["tick"] == uint64(0) {
			c.send(map[string]any{"type": "decision", "tick": 0, "tool": "collect", "params": map[string]any{"target_name": "Nowhere"}})
		}
		if m["type"] == "episode_end" {
			break
		}
	}
	<-served
	got := scrape(t, admin.URL)
	require.Equal(t, 3.0, got["arena_ticks_total"])
	require.Equal(t, 3.0, got["arena_decisions_total"])
	require.Equal(t, 2.0, got["arena_decision_timeouts_total"])
	require.Equal(t, 1.0, got[`arena_errors_total{code="NOT_FOUND",source="tool"}`])
	require.Equal(t, 1.0, got[`arena_episodes_total{end_reason="time_limit"}`])
}

func TestDrainFinishesTheEpisodeAndStartsNoOther(t *testing.T) {
	const seed = 3
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	srv, err := server.New(server.Options{Scenario: sc, Seed: seed, Episodes: 3, Metrics: server.NewMetrics()})
	require.NoError(t, err)
	admin := httptest.NewServer(srv.AdminHandler())
	defer admin.Close()
	addr, l := listen(t)
	served := make(chan []*engine.Results, 1)
	go func() {
		all, err := srv.Serve(context.Background(), l)
		require.NoError(t, err)
		served <- all
	}()
	notices := make(chan map[string]any, 2)
	var players sync.WaitGroup
	defer players.Wait() // before the cleanups close their connections
	for range 2 {
		players.Go(func() { playNoting(t, addr, seed, notices) })
	}
	require.Eventually(t, func() bool { return scrape(t, admin.URL)["arena_ticks_total"] >= 10 }, 30*time.Second, 5*time.Millisecond)
	srv.Drain()
	srv.Drain() // twice is once
	code, body := get(t, admin.URL+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "draining", body)
	for range 2 {
		select {
		case n := <-notices:
			require.Equal(t, server.CodeDraining, n["code"])
		case <-time.After(10 * time.Second):
			t.Fatal("no drain notice")
		}
	}
	_, err = ipc.Dial(context.Background(), addr)
	require.Error(t, err, "a draining server accepts no connection")

	all := <-served
	require.Len(t, all, 1, "no episode after the drained one")
	require.Equal(t, "completed", all[0].EndReason, "the episode under way finished by itself")
	require.Equal(t, 1.0, scrape(t, admin.URL)["arena_draining"])
}

func TestDrainBeforeTheFirstEpisodeStopsAtOnce(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	srv, err := server.New(server.Options{Scenario: sc, Seed: 1})
	require.NoError(t, err)
	_, l := listen(t)
	served := make(chan error, 1)
	go func() {
		_, err := srv.Serve(context.Background(), l)
		served <- err
	}()
	srv.Drain()
	select {
	case err := <-served:
		require.ErrorIs(t, err, server.ErrDrained)
	case <-time.After(10 * time.Second):
		t.Fatal("a server waiting for agents did not stop on drain")
	}
}
