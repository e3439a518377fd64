package ipc

import (
	"context"
	"fmt"
	"testing"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/internal/benchworld"
	"github.com/arena-sim/arena/rlarrays"
	"github.com/stretchr/testify/require"
)

// endOf plays a bench world of n agents for a few ticks and returns its
// episode end as the server sends it to agent sessions, with the first
// agent's observation.
func endOf(t testing.TB, n int) EpisodeEnd {
	w, ctrls, err := benchworld.New(benchworld.Options{Seed: 4, Agents: n, Size: 64})
	require.NoError(t, err)
	r := &engine.Runner{World: w, Controllers: ctrls, MaxTicks: 5}
	res, err := r.Run(context.Background())
	require.NoError(t, err)
	a := w.Agents()[0]
	obs := w.Observe(a)
	return EpisodeEnd{Type: "episode_end", Episode: 2, Tick: w.Tick(), Reason: res.EndReason, Final: true,
		Results: res.ForAgents(), Observation: obs,
		Arrays: &rlarrays.Arrays{F32: []byte{0, 0, 128, 63}, I64: make([]byte, 8), I8: []byte{3}, Mask: []byte{1, 0}}}
}

// TestSharedResultsEncodeAlike sends episode ends with their results
// encoded once (ShareResults) and encoded with each message: the frames are
// the same bytes, for the first send and the next, for copies given other
// observations, and without results or arrays; and the results were encoded
// once.
func TestSharedResultsEncodeAlike(t *testing.T) {
	c, err := NewCodec(Limits{})
	require.NoError(t, err)
	full := endOf(t, 20)
	noArrays := full
	noArrays.Arrays = nil
	spectator := full
	spectator.Observation, spectator.Arrays = nil, nil
	noResults := full
	noResults.Results = nil
	for name, end := range map[string]EpisodeEnd{"agent": full, "no arrays": noArrays, "spectator": spectator, "no results": noResults} {
		t.Run(name, func(t *testing.T) {
			want, err := c.marshalFrame(end)
			require.NoError(t, err)
			shared := end
			shared.ShareResults()
			for range 2 {
				got, err := c.marshalFrame(shared)
				require.NoError(t, err)
				require.Equal(t, want, got)
			}
			// A copy for another session, with another observation.
			other := shared
			other.Observation = nil
			want, err = c.marshalFrame(EpisodeEnd{Type: other.Type, Episode: other.Episode, Tick: other.Tick,
				Reason: other.Reason, Final: other.Final, Results: other.Results, Arrays: other.Arrays})
			require.NoError(t, err)
			got, err := c.marshalFrame(other)
			require.NoError(t, err)
			require.Equal(t, want, got)
			kept := 0
			if end.Results != nil {
				kept = 1
			}
			require.Len(t, shared.shared.m, kept, "the results' encodings kept")
		})
	}
}

// BenchmarkEpisodeEnd encodes the episode end of n agents for each of
// their sessions, its results encoded for each or once (ShareResults).
func BenchmarkEpisodeEnd(b *testing.B) {
	c, err := NewCodec(Limits{})
	require.NoError(b, err)
	for _, n := range []int{100, 1000} {
		end := endOf(b, n)
		end.Arrays = nil
		for _, shared := range []bool{false, true} {
			b.Run(fmt.Sprintf("agents=%d/shared=%v", n, shared), func(b *testing.B) {
				for b.Loop() {
					e := end
					if shared {
						e.ShareResults()
					}
					for range n {
						f, err := c.marshalFrame(e)
						require.NoError(b, err)
						releaseFrame(f)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/session")
			})
		}
	}
}
