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
func serve(t *testing.T, opt ipc.ConnOptions) (*ipc.Conn, net.Conn, chan ipc.Incoming) {
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
	client, err := ipc.Dial(context.Background(), "unix:"+path)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	inbox := make(chan ipc.Incoming, 16)
	c := ipc.NewConn(context.Background(), <-accepted, codec(t), opt, inbox)
	return c, client, inbox
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
