package ipc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// frameBytes is v's frame, length header included.
func frameBytes(t *testing.T, v any) []byte {
	t.Helper()
	b, err := cbor.Marshal(v)
	require.NoError(t, err)
	return ipc.AppendFrame(nil, b)
}

// waitEnd waits up to d for the connection's end to reach the inbox and
// returns it.
func waitEnd(t *testing.T, inbox <-chan ipc.Incoming, d time.Duration) ipc.Incoming {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case in := <-inbox:
			if in.Msg == nil {
				return in
			}
		case <-deadline:
			t.Fatalf("the connection's end was not reported within %v", d)
		}
	}
}

// The reader cuts frames out of the stream however its bytes arrive: a
// byte at a time, across the buffer's edge, many frames in one write, and
// frames larger than its buffer (which grows, and shrinks back after).
func TestReaderCutsFramesHoweverTheyArrive(t *testing.T) {
	sizes := []int{0, 1, 100, 4000, 4090, 4096, 5000, 20000, 3, 70000, 10}
	var stream []byte
	for i, n := range sizes {
		stream = append(stream, frameBytes(t, map[string]any{"type": "decision", "tick": i, "tool": "idle",
			"reasoning": strings.Repeat(string(rune('a'+i)), n)})...)
	}
	for _, chunk := range []int{1, 3, 4, 5, 4095, 4096, 4097, 65536, len(stream)} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			c, client, inbox := serve(t, ipc.ConnOptions{})
			c.Admit() // past the hello's limit on frames
			go func() {
				for b := stream; len(b) > 0; {
					n := min(chunk, len(b))
					if _, err := client.Write(b[:n]); err != nil {
						return
					}
					b = b[n:]
				}
			}()
			for i, n := range sizes {
				select {
				case in := <-inbox:
					d, ok := in.Msg.(*ipc.Decision)
					require.True(t, ok, "message %d: %+v", i, in)
					require.Equal(t, float64(i), d.Tick)
					require.Equal(t, strings.Repeat(string(rune('a'+i)), n), d.Reasoning)
				case <-time.After(10 * time.Second):
					t.Fatalf("decision %d did not arrive", i)
				}
			}
		})
	}
}

// Frames and an end of stream that are all there before the reader's first
// read: the frames are handed on and the end is noticed at once after any
// message but an awaited decision (none is awaited here; see readLoop), and
// within a frame it is an error.
func TestReaderNoticesAnEndThatCameWithTheBytes(t *testing.T) {
	cases := []struct {
		name    string
		stream  []byte
		msgs    int
		errText string
	}{
		{"after a decision", frameBytes(t, map[string]any{"type": "decision", "tick": 2, "tool": "idle"}), 1, ""},
		{"after a query", frameBytes(t, map[string]any{"type": "query", "id": 1, "tool": "query_inventory"}), 1, ""},
		{"within a frame", append(binary.BigEndian.AppendUint32(nil, 64), 0xa4, 0x64), 0, "unexpected EOF"},
		{"within a length", []byte{0, 0}, 0, "unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc, client := unixPair(t)
			_, err := client.Write(tc.stream)
			require.NoError(t, err)
			require.NoError(t, client.CloseWrite())
			in := ipc.NewInbox(16)
			// Pings would reveal the end after PingInterval: far off.
			ipc.NewConn(context.Background(), nc, codec(t), ipc.ConnOptions{PingInterval: time.Hour}, in)
			inbox := drain(t, in)
			for range tc.msgs {
				require.NotNil(t, (<-inbox).Msg)
			}
			end := waitEnd(t, inbox, 3*time.Second)
			if tc.errText == "" {
				require.NoError(t, end.Err)
			} else {
				require.ErrorContains(t, end.Err, tc.errText)
			}
		})
	}
}

// After an awaited decision that emptied the socket, the reader waits for
// new bytes instead of reading: one read system call per decision, not two.
// Other messages are each followed by a read that finds nothing.
func TestReaderSkipsTheEmptyReadAfterAnAwaitedDecision(t *testing.T) {
	c, client, inbox := serve(t, ipc.ConnOptions{})
	const n = 40
	start := c.SocketReads()
	for tick := range n {
		c.Await(tick)
		send(t, client, map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
		require.Equal(t, "idle", (<-inbox).Msg.(*ipc.Decision).Tool)
	}
	// Every read but a stray one (a report of bytes read already) brought a
	// decision.
	require.LessOrEqual(t, c.SocketReads()-start, int64(n+n/4), "reads for %d awaited decisions", n)

	start = c.SocketReads()
	for tick := range n {
		send(t, client, map[string]any{"type": "decision", "tick": n + tick, "tool": "idle"}) // not awaited
		require.Equal(t, "idle", (<-inbox).Msg.(*ipc.Decision).Tool)
	}
	require.Eventually(t, func() bool { return c.SocketReads()-start >= 2*n }, 5*time.Second, time.Millisecond,
		"each of %d decisions not awaited is followed by a read", n)
}

// A client that closes its connection right after its awaited decision is
// noticed when the next message is written to it; one that only shuts down
// its writing side, at the next ping.
func TestAnEndRightAfterAnAwaitedDecision(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		c, client, inbox := serve(t, ipc.ConnOptions{PingInterval: time.Hour})
		c.Await(5)
		_, err := client.Write(frameBytes(t, map[string]any{"type": "decision", "tick": 5, "tool": "idle"}))
		require.NoError(t, err)
		require.NoError(t, client.Close())
		require.Equal(t, "idle", (<-inbox).Msg.(*ipc.Decision).Tool)
		c.Send(ipc.Pong{Type: "pong"}) // the next observation, say
		waitEnd(t, inbox, 3*time.Second)
	})
	t.Run("half-closed", func(t *testing.T) {
		c, client, inbox := serve(t, ipc.ConnOptions{PingInterval: 300 * time.Millisecond, PongWait: time.Hour})
		c.Await(5)
		_, err := client.Write(frameBytes(t, map[string]any{"type": "decision", "tick": 5, "tool": "idle"}))
		require.NoError(t, err)
		require.NoError(t, client.(*net.UnixConn).CloseWrite())
		require.Equal(t, "idle", (<-inbox).Msg.(*ipc.Decision).Tool)
		waitEnd(t, inbox, 3*time.Second)
	})
}

// A connection that is not a socket (a pipe here) is read through its Read,
// frames of every size alike.
func TestReaderReadsAConnThatIsNotASocket(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	in := ipc.NewInbox(16)
	c := ipc.NewConn(context.Background(), server, codec(t), ipc.ConnOptions{}, in)
	c.Admit()
	inbox := drain(t, in)
	big := strings.Repeat("x", 50000)
	go func() {
		var b bytes.Buffer
		b.Write(frameBytes(t, map[string]any{"type": "decision", "tick": 1, "tool": "idle", "reasoning": big}))
		b.Write(frameBytes(t, map[string]any{"type": "decision", "tick": 2, "tool": "idle"}))
		io.Copy(client, &b)
		client.Close()
	}()
	require.Equal(t, big, (<-inbox).Msg.(*ipc.Decision).Reasoning)
	require.Equal(t, float64(2), (<-inbox).Msg.(*ipc.Decision).Tick)
	waitEnd(t, inbox, 3*time.Second)
	require.Zero(t, c.SocketReads())
}

// FuzzReaderHandsOnWhatReadFrameReads: whatever bytes a client sends, in
// whatever pieces, the reader hands on the messages that reading the same
// bytes with ReadFrame and decoding them gives (pings answered, not handed
// on), stopping where ReadFrame stops, for the same reason.
func FuzzReaderHandsOnWhatReadFrameReads(f *testing.F) {
	frame := func(v any) []byte {
		b, err := cbor.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		return ipc.AppendFrame(nil, b)
	}
	decision := frame(map[string]any{"type": "decision", "tick": 1, "tool": "idle"})
	f.Add(decision, uint16(1))
	f.Add(append(append(decision, frame(map[string]any{"type": "ping", "id": 7})...), decision...), uint16(5))
	f.Add(append(decision, 0, 0, 0), uint16(4096))
	f.Add(append([]byte{0, 0, 0, 0}, decision...), uint16(3))
	f.Add(append(decision, 0, 1, 0, 1), uint16(2))
	f.Add(append(frame(map[string]any{"type": "bye"}), decision...), uint16(7))
	f.Add(append(binary.BigEndian.AppendUint32(nil, 5), []byte("hello")...), uint16(9))
	f.Add(frame(map[string]any{"type": "decision", "tick": 2, "tool": "say", "reasoning": strings.Repeat("x", 9000)}), uint16(1000))
	const maxFrame = 1 << 16
	c := codec(f)
	f.Fuzz(func(t *testing.T, stream []byte, split uint16) {
		// What ReadFrame and Decode make of the stream.
		var want []any
		wantEnd := ""
		for r := bytes.NewReader(stream); ; {
			fr, err := ipc.ReadFrame(r, maxFrame, nil)
			var pe *ipc.ProtocolError
			if errors.As(err, &pe) && !pe.Fatal {
				continue // an empty frame
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					wantEnd = err.Error()
				}
				break
			}
			msg, err := c.Decode(fr)
			if err != nil {
				continue
			}
			if _, ping := msg.(*ipc.Ping); ping {
				continue
			}
			if _, pong := msg.(*ipc.Pong); pong {
				continue
			}
			want = append(want, msg)
			if _, bye := msg.(*ipc.Bye); bye {
				break
			}
		}

		conn, client, inbox := serve(t, ipc.ConnOptions{MaxFrame: maxFrame, PingInterval: time.Hour})
		conn.Admit()
		go io.Copy(io.Discard, client) // the answers to errors and pings
		go func() {
			step := max(int(split), 1)
			for b := stream; len(b) > 0; b = b[min(step, len(b)):] {
				if _, err := client.Write(b[:min(step, len(b))]); err != nil {
					return
				}
			}
			client.(*net.UnixConn).CloseWrite()
		}()
		var got []any
		for {
			select {
			case in := <-inbox:
				if in.Msg != nil {
					got = append(got, in.Msg)
					continue
				}
				require.Equal(t, want, got)
				if wantEnd == "" {
					require.NoError(t, in.Err)
				} else {
					require.ErrorContains(t, in.Err, wantEnd)
				}
				return
			case <-time.After(10 * time.Second):
				t.Fatalf("no end; got %d messages of %d", len(got), len(want))
			}
		}
	})
}
