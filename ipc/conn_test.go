package ipc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// serve accepts one connection on a fresh Unix socket and wraps it in a Conn.
func serve(t *testing.T, opt ipc.ConnOptions) (*ipc.Conn, net.Conn, <-chan ipc.Incoming) {
	t.Helper()
	server, client := unixPair(t)
	inbox := ipc.NewInbox(16)
	c := ipc.NewConn(context.Background(), server, codec(t), opt, inbox)
	return c, client, drain(t, inbox)
}

// unixPair connects a client to a fresh Unix socket and returns both ends.
func unixPair(t *testing.T) (server, client *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arena.sock")
	l, err := ipc.Listen(context.Background(), "unix:"+path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the socket is private to its owner")
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := l.Accept()
		if err == nil {
			accepted <- nc
		}
	}()
	nc, err := ipc.Dial(context.Background(), "unix:"+path)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return (<-accepted).(*net.UnixConn), nc.(*net.UnixConn)
}

// drain hands what reaches the inbox over a channel, one message at a time.
func drain(t *testing.T, inbox *ipc.Inbox) <-chan ipc.Incoming {
	out := make(chan ipc.Incoming, 16)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		var batch []ipc.Incoming
		for {
			inbox.Arm(1)
			select {
			case <-inbox.Ready():
			case <-stop:
				return
			}
			batch = inbox.Take(batch[:0])
			for _, in := range batch {
				select {
				case out <- in:
				case <-stop:
					return
				}
			}
		}
	}()
	return out
}

func send(t *testing.T, nc net.Conn, v any) {
	t.Helper()
	b, err := cbor.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, ipc.WriteFrame(nc, b))
}

func recv(t *testing.T, nc net.Conn) map[string]any {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := ipc.ReadFrame(nc, ipc.DefaultMaxFrame, nil)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, cbor.Unmarshal(f, &m))
	return m
}

func TestConnMovesMessagesAndAnswersPing(t *testing.T) {
	c, client, inbox := serve(t, ipc.ConnOptions{})
	send(t, client, map[string]any{"type": "ping", "id": 42})
	pong := recv(t, client)
	require.Equal(t, "pong", pong["type"])
	require.Equal(t, uint64(42), pong["id"])

	send(t, client, map[string]any{"type": "decision", "tick": 3, "tool": "idle"})
	in := <-inbox
	require.Equal(t, c, in.Conn)
	require.Equal(t, "idle", in.Msg.(*ipc.Decision).Tool)

	require.NoError(t, c.Send(ipc.Pong{Type: "pong"}))
	require.Equal(t, "pong", recv(t, client)["type"])
}

func TestBadMessagesAreAnsweredAndTheSessionGoesOn(t *testing.T) {
	_, client, inbox := serve(t, ipc.ConnOptions{})
	require.NoError(t, ipc.WriteFrame(client, []byte("not cbor at all")))
	e := recv(t, client)
	require.Equal(t, "error", e["type"])
	require.Equal(t, ipc.CodeBadMessage, e["code"])
	require.Equal(t, false, e["fatal"])
	send(t, client, map[string]any{"tick": 1})
	require.Equal(t, ipc.CodeBadMessage, recv(t, client)["code"])
	send(t, client, map[string]any{"type": "bye"})
	in := <-inbox
	_, ok := in.Msg.(*ipc.Bye)
	require.True(t, ok)
}

func TestOversizedFrameClosesTheConnection(t *testing.T) {
	c, client, inbox := serve(t, ipc.ConnOptions{MaxFrame: 1024})
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 1<<30)
	_, err := client.Write(hdr[:])
	require.NoError(t, err)
	e := recv(t, client)
	require.Equal(t, ipc.CodeFrameTooLarge, e["code"])
	require.Equal(t, true, e["fatal"])
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed")
	}
	end := <-inbox
	require.Nil(t, end.Msg)
	require.ErrorContains(t, end.Err, ipc.CodeFrameTooLarge)
}

func TestAClientThatStopsReadingIsDisconnected(t *testing.T) {
	c, client, _ := serve(t, ipc.ConnOptions{MaxSkipped: 4, WriteTimeout: time.Second})
	_ = client // never read from
	big := ipc.Pong{Type: "pong", ID: cbor.RawMessage(append([]byte{0x5a, 0, 1, 0, 0}, bytes.Repeat([]byte{7}, 1<<16)...))}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := c.SendLatest(big); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("slow client not disconnected")
	}
	require.ErrorContains(t, c.Err(), ipc.CodeSlowConsumer)
}

func TestTCPBindsToLoopbackByDefault(t *testing.T) {
	l, err := ipc.Listen(context.Background(), "tcp::0")
	require.NoError(t, err)
	defer l.Close()
	require.True(t, l.Addr().(*net.TCPAddr).IP.IsLoopback())
	_, err = ipc.Listen(context.Background(), "udp:1.2.3.4:5")
	require.ErrorContains(t, err, "not unix or tcp")
}

// A client is pinged once it has sent nothing for PingInterval, measured
// from the last thing it sent (the reader does not move its deadline after
// every read, but must behave as if it did), and again PingInterval after it
// answers.
func TestPingComesAnIntervalAfterTheLastMessage(t *testing.T) {
	const interval = 150 * time.Millisecond
	_, client, inbox := serve(t, ipc.ConnOptions{PingInterval: interval, PongWait: 10 * time.Second})
	go func() {
		for range inbox {
		}
	}()
	// Talk for three intervals, a message every third of one: no ping.
	pinged := make(chan time.Time, 4)
	go func() {
		for {
			client.SetReadDeadline(time.Now().Add(10 * time.Second))
			f, err := ipc.ReadFrame(client, ipc.DefaultMaxFrame, nil)
			if err != nil {
				return
			}
			var m map[string]any
			if cbor.Unmarshal(f, &m) == nil && m["type"] == "ping" {
				pinged <- time.Now()
				// Not send(t, …): the test may have ended, and the
				// client closed, once the second ping is in.
				b, err := cbor.Marshal(map[string]any{"type": "pong", "id": m["id"]})
				if err != nil || ipc.WriteFrame(client, b) != nil {
					return
				}
			}
		}
	}()
	nextPing := func() time.Time {
		t.Helper()
		select {
		case at := <-pinged:
			return at
		case <-time.After(20 * interval):
			t.Fatal("no ping")
			return time.Time{}
		}
	}
	var last time.Time
	for range 9 {
		// Taken before the send: the server hears the message after it,
		// however late this goroutine runs again once the send returns.
		last = time.Now()
		send(t, client, map[string]any{"type": "decision", "tick": 1, "tool": "idle"})
		select {
		case at := <-pinged:
			t.Fatalf("pinged %v after the last message, while the client talks", at.Sub(last))
		case <-time.After(interval / 3):
		}
	}
	first := nextPing()
	require.GreaterOrEqual(t, first.Sub(last), interval, "the first ping came too early")
	second := nextPing()
	require.GreaterOrEqual(t, second.Sub(first), interval, "the next ping came too early after the pong")
	require.Less(t, second.Sub(first), 5*interval)
}

// A decision for the tick the owner awaits (Await) wakes it only with the
// others it awaits; a decision for another tick, a second one, or one
// without a tool wakes it at once, to be answered.
func TestAwaitedDecisionsWakeTheOwnerTogether(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arena.sock")
	l, err := ipc.Listen(context.Background(), "unix:"+path)
	require.NoError(t, err)
	defer l.Close()
	inbox := ipc.NewInbox(16)
	var clients []net.Conn
	var conns []*ipc.Conn
	for range 2 {
		client, err := ipc.Dial(context.Background(), "unix:"+path)
		require.NoError(t, err)
		defer client.Close()
		nc, err := l.Accept()
		require.NoError(t, err)
		c := ipc.NewConn(context.Background(), nc, codec(t), ipc.ConnOptions{}, inbox)
		c.Await(7)
		clients, conns = append(clients, client), append(conns, c)
	}
	woken := func() bool {
		select {
		case <-inbox.Ready():
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}
	inbox.Arm(2)
	send(t, clients[0], map[string]any{"type": "decision", "tick": 7, "tool": "idle"})
	require.False(t, woken(), "one of the two awaited decisions")
	send(t, clients[0], map[string]any{"type": "decision", "tick": 7, "tool": "idle"})
	require.True(t, woken(), "a second decision for the tick")
	require.Len(t, inbox.Take(nil), 2)

	inbox.Arm(1)
	send(t, clients[1], map[string]any{"type": "decision", "tick": 8, "tool": "idle"})
	require.True(t, woken(), "a decision for another tick")
	inbox.Take(nil)
	inbox.Arm(1)
	send(t, clients[1], map[string]any{"type": "decision", "tick": 7, "tool": ""})
	require.True(t, woken(), "a decision without a tool")
	inbox.Take(nil)
	inbox.Arm(1)
	send(t, clients[1], map[string]any{"type": "decision", "tick": 7, "tool": "idle"})
	require.True(t, woken(), "the awaited decision, all that was awaited")
	got := inbox.Take(nil)
	require.Len(t, got, 1)
	require.Equal(t, conns[1], got[0].Conn)
}
