package server_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/arena-sim/arena/rlarrays"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// arraysLayout is a small layout of foraging: the agent's position and
// tick, berries in sight, and the tools' mask.
func arraysLayout() *rlarrays.Layout {
	return &rlarrays.Layout{
		Self: []string{"x", "z", "tick"}, Inventory: []string{"berry"}, K: 2,
		Tools:  []string{"idle", "move_to", "collect"},
		Kinds:  []rlarrays.Kind{{Kind: "resources", Slots: 2, Features: []string{"amount"}, Types: []string{"berry"}}},
		Params: []rlarrays.Param{{Kind: "slot_resources"}}, CollectRange: 2,
	}
}

// TestObservationArraysOverTheWire: a client that says arrays in its hello
// gets no observation before its layout, then every observation with its
// arrays (their values read back from the observation), the final one in
// episode_end included; a layout the server cannot use is a BAD_MESSAGE
// that leaves the session playing, without arrays.
func TestObservationArraysOverTheWire(t *testing.T) {
	addr, done, _ := start(t, server.Options{Seed: 1, Agents: 2, Ticks: 5, DecisionTimeout: 5 * time.Second})
	good, bad := dial(t, addr), dial(t, addr)
	good.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001", "arrays": true})
	w, _ := good.recv()
	require.Equal(t, "welcome", w["type"], "%v", w)
	bad.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_002"})
	w, _ = bad.recv()
	require.Equal(t, "welcome", w["type"], "%v", w)
	// Both slots are in: the episode starts, but good's observation waits.
	m, _ := good.recv()
	require.Equal(t, "episode_start", m["type"])
	good.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var buf [1]byte
	_, err := good.nc.Read(buf[:])
	require.Error(t, err, "an observation was sent before the layout")
	bad.send(map[string]any{"type": "observation_arrays", "layout": map[string]any{"k": 0}})
	bad.send(map[string]any{"type": "observation_arrays", "layout": map[string]any{"k": 2, "self": []string{"password"}}})
	good.send(map[string]any{"type": "observation_arrays", "layout": arraysLayout()})

	type arraysMsg struct {
		Type        string             `cbor:"type"`
		Tick        int                `cbor:"tick"`
		Observation *world.Observation `cbor:"observation"`
		Arrays      *rlarrays.Arrays   `cbor:"arrays"`
		Code        string             `cbor:"code"`
		Message     string             `cbor:"message"`
		Fatal       bool               `cbor:"fatal"`
	}
	read := func(c *client) arraysMsg {
		first, raw := c.recv()
		if first["type"] == "episode_start" {
			_, raw = c.recv()
		}
		var m arraysMsg
		require.NoError(t, cbor.Unmarshal(raw, &m))
		return m
	}
	check := func(m arraysMsg) {
		require.NotNil(t, m.Arrays, "%s of tick %d without arrays", m.Type, m.Tick)
		o := m.Observation
		f := func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(m.Arrays.F32[4*i:])) }
		require.Len(t, m.Arrays.F32, 4*(3+1+2*5))
		require.Equal(t, []float32{float32(o.Position[0]), float32(o.Position[2]), float32(o.Tick), float32(o.Inventory["berry"])},
			[]float32{f(0), f(1), f(2), f(3)})
		require.Len(t, m.Arrays.I64, 8*(4+2))
		require.Len(t, m.Arrays.I8, 2)
		require.Len(t, m.Arrays.Mask, 3+2)
		seen := min(len(o.NearbyResources), 2)
		for i := range 2 {
			require.Equal(t, byte(min(1, max(0, seen-i))), m.Arrays.I8[i], "presence of slot %d", i)
		}
		require.Equal(t, []byte{1, 1}, m.Arrays.Mask[:2], "idle and move_to are always allowed")
	}

	errors, observations, ended := 0, 0, 0
	for ended < 2 {
		for _, c := range []*client{good, bad} {
			m := read(c)
			for m.Type == "error" {
				require.Equal(t, bad, c, "%+v", m)
				require.Equal(t, "BAD_MESSAGE", m.Code)
				require.False(t, m.Fatal)
				require.Contains(t, m.Message, "observation_arrays: ")
				errors++
				m = read(c)
			}
			if c == good {
				check(m)
			} else {
				require.Nil(t, m.Arrays)
			}
			if m.Type == "episode_end" {
				require.NotNil(t, m.Observation, "episode_end without the final observation")
				require.Equal(t, 5, m.Observation.Tick)
				ended++
				continue
			}
			require.Equal(t, "observation", m.Type, "%+v", m)
			if c == good {
				observations++
			}
			c.send(map[string]any{"type": "decision", "tick": m.Tick, "tool": "idle"})
		}
	}
	require.Equal(t, 2, errors)
	require.Equal(t, 5, observations)
	<-done
}

// TestObservationBytesOverTheWire: two servers play the same episode, one
// client asking for observation_bytes and one not. Every observation_cbor
// holds exactly the other's observation map without agent_ids (the roster
// the client holds), with the map's score and alive beside it, and the
// same arrays.
func TestObservationBytesOverTheWire(t *testing.T) {
	opt := server.Options{Seed: 3, SecretSeed: 3, Agents: 2, Ticks: 6, DecisionTimeout: 5 * time.Second}
	addrA, doneA, _ := start(t, opt)
	addrB, doneB, _ := start(t, opt)
	var clients [2][2]*client // [server][agent]
	for i, addr := range []string{addrA, addrB} {
		for j, id := range []string{"agent_001", "agent_002"} {
			c := dial(t, addr)
			c.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": id, "arrays": true})
			w, _ := c.recv()
			require.Equal(t, "welcome", w["type"], "%v", w)
			c.send(map[string]any{"type": "observation_arrays", "layout": arraysLayout(), "observation_bytes": i == 0})
			clients[i][j] = c
		}
	}
	next := func(c *client) map[string]any {
		for {
			m, _ := c.recv()
			if m["type"] != "episode_start" {
				return m
			}
		}
	}
	observations := 0
	for {
		ended := false
		for j := range 2 {
			embedded, plain := next(clients[0][j]), next(clients[1][j])
			require.Equal(t, plain["type"], embedded["type"], "%v / %v", embedded, plain)
			if plain["type"] == "episode_end" {
				require.Equal(t, plain["observation"], embedded["observation"], "episode_end carries the map either way")
				require.NotNil(t, plain["observation"])
				require.Equal(t, plain["arrays"], embedded["arrays"])
				ended = true
				continue
			}
			require.Equal(t, "observation", plain["type"], "%v", plain)
			require.NotContains(t, embedded, "observation")
			blob, ok := embedded["observation_cbor"].([]byte)
			require.True(t, ok, "observation_cbor is %T", embedded["observation_cbor"])
			var inner map[any]any
			require.NoError(t, cbor.Unmarshal(blob, &inner))
			want := map[any]any{}
			for k, v := range plain["observation"].(map[any]any) {
				want[k] = v
			}
			require.NotContains(t, inner, "agent_ids", "the roster goes beside the map, if at all")
			delete(want, "agent_ids")
			require.Equal(t, want, inner)
			require.Equal(t, want["score"], embedded["score"])
			require.Equal(t, want["alive"], embedded["alive"])
			require.Equal(t, plain["arrays"], embedded["arrays"])
			require.Equal(t, plain["tick"], embedded["tick"])
			observations++
			for i := range 2 {
				clients[i][j].send(map[string]any{"type": "decision", "tick": plain["tick"], "tool": "move_to",
					"params": map[string]any{"target": []float64{float64(3 * j), 0, float64(observations)}}})
			}
		}
		if ended {
			break
		}
	}
	require.Equal(t, 12, observations)
	<-doneA
	<-doneB
}
