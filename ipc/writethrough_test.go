package ipc_test

import (
	"bytes"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// Frames written through (at once, by the goroutine that sends them) and
// frames left to the writer goroutine (when the socket's buffer is full, or a
// frame is being written) must reach the client whole, each sender's in the
// order it sent them.
func TestFramesStayWholeAndInOrderWhenTheSocketFills(t *testing.T) {
	c, client, _ := serve(t, ipc.ConnOptions{QueueSize: 10000})
	const senders, each = 3, 150
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				pad := bytes.Repeat([]byte{byte(i)}, (i*7919+g*104729)%30000) // sizes up to 30 KB
				id, err := cbor.Marshal([]any{g, i, pad})
				require.NoError(t, err)
				require.NoError(t, c.Send(ipc.Pong{Type: "pong", ID: id}))
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // let the socket buffer fill up before reading
	next := make([]int, senders)
	for range senders * each {
		m := recv(t, client)
		id := m["id"].([]any)
		g, i, pad := int(id[0].(uint64)), int(id[1].(uint64)), id[2].([]byte)
		require.Equal(t, next[g], i, "sender %d", g)
		require.Len(t, pad, (i*7919+g*104729)%30000)
		if len(pad) > 0 {
			require.Equal(t, byte(i), pad[len(pad)-1])
		}
		next[g]++
	}
	wg.Wait()
}

// A client that reads slowly gets the newest observation, never an older one
// after a newer, and always the last one sent.
func TestSlowReaderGetsObservationsInOrderAndTheLastOne(t *testing.T) {
	c, client, _ := serve(t, ipc.ConnOptions{MaxSkipped: 1 << 20})
	const n = 400
	go func() {
		for tick := range n {
			pad := bytes.Repeat([]byte{1}, 20000)
			id, _ := cbor.Marshal([]any{tick, pad})
			c.SendLatest(ipc.Pong{Type: "pong", ID: id})
		}
	}()
	last := -1
	for last < n-1 {
		m := recv(t, client)
		tick := int(m["id"].([]any)[0].(uint64))
		require.Greater(t, tick, last)
		last = tick
		time.Sleep(time.Millisecond)
	}
}

// A Batch sends nothing until Send, then what was added, in order, as
// SendLatest would; a connection closed meanwhile does not keep the others
// from theirs.
func TestBatchSendsOnlyOnSendAndInOrder(t *testing.T) {
	c1, client1, _ := serve(t, ipc.ConnOptions{})
	c2, client2, _ := serve(t, ipc.ConnOptions{})
	c3, _, _ := serve(t, ipc.ConnOptions{})
	obs := func(tick int) *ipc.ObservationMsg {
		return &ipc.ObservationMsg{Type: "observation", Tick: tick, Observation: &world.Observation{Tick: tick, AgentID: "a"}}
	}
	tick := func(nc net.Conn) uint64 { return recv(t, nc)["tick"].(uint64) }
	var b ipc.Batch
	require.NoError(t, b.AddObservation(c1, obs(1)))
	require.NoError(t, b.AddObservation(c3, obs(2)))
	require.NoError(t, b.AddObservation(c2, obs(3)))
	require.NoError(t, b.AddObservation(c1, obs(4)))
	c3.Close()
	client1.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := ipc.ReadFrame(client1, ipc.DefaultMaxFrame, nil)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "nothing is sent before Send")
	b.Send()
	require.Equal(t, uint64(1), tick(client1))
	require.Equal(t, uint64(4), tick(client1))
	require.Equal(t, uint64(3), tick(client2))
	// Sent again, an emptied batch sends nothing more.
	b.Send()
	require.NoError(t, c1.SendLatest(*obs(5)))
	require.Equal(t, uint64(5), tick(client1))
}
