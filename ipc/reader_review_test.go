package ipc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/stretchr/testify/require"
)

// flood writes frames to nc, back to back in large writes from a few
// goroutines (a net.Conn's Write is whole: frames are not interleaved), until
// stop is closed and nc closed (or a write fails); it returns a channel
// closed when it has stopped.
func flood(t *testing.T, nc net.Conn, frame []byte, stop <-chan struct{}) <-chan struct{} {
	t.Helper()
	buf := bytes.Repeat(frame, (64<<10)/len(frame)+1)
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		go func() { wg.Wait(); close(stopped) }()
	}()
	for range 3 {
		wg.Go(func() {
			floodOne(nc, buf, stop)
		})
	}
	return stopped
}

// floodOne writes buf to nc again and again until stop is closed or a
// write fails (closing nc ends a write that waits). Without a write
// deadline: one that expired within a write would cut a frame.
func floodOne(nc net.Conn, buf []byte, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := nc.Write(buf); err != nil {
			return
		}
	}
}

// serveTCP accepts one connection on loopback TCP (whose buffers are large
// enough for a flood to keep the socket from ever being empty) and wraps it
// in a Conn whose context is ctx.
func serveTCP(t *testing.T, ctx context.Context, opt ipc.ConnOptions) (*ipc.Conn, net.Conn) {
	t.Helper()
	l, err := ipc.Listen(context.Background(), "tcp:127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	client, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	nc, err := l.Accept()
	require.NoError(t, err)
	return ipc.NewConn(ctx, nc, codec(t), opt, ipc.NewInbox(16)), client
}

// A connection the server closes ends even while its client keeps sending
// frames that never reach the inbox (pongs here; pings, empty frames and
// undecodable frames alike): net.Conn.Close waits for a RawConn.Read in
// progress, so the reader must not stay inside one for as long as bytes keep
// coming once the connection is closing (Conn.closed). It ends within a few
// milliseconds; without that check it lasted as long as the flood. (Under
// -race the flood is slower and the reader finds the socket empty now and
// then, so there the test catches that less surely.)
func TestAConnectionClosesWhileItsClientFloods(t *testing.T) {
	pong := frameBytes(t, map[string]any{"type": "pong", "id": 1})
	t.Run("hello timeout", func(t *testing.T) {
		// A stranger that never says hello is dropped after HelloTimeout,
		// however much it sends.
		c, client := serveTCP(t, context.Background(), ipc.ConnOptions{HelloTimeout: 200 * time.Millisecond, PingInterval: time.Hour})
		go io.Copy(io.Discard, client)
		stop := make(chan struct{})
		stopped := flood(t, client, pong, stop)
		defer func() { close(stop); client.Close(); <-stopped }()
		select {
		case <-c.Done():
		case <-time.After(3 * time.Second):
			t.Fatal("the connection did not end within 3s of its hello timeout (200ms) while its client sent pongs")
		}
		require.ErrorContains(t, c.Err(), ipc.CodeUnauthorized)
	})
	t.Run("context cancelled", func(t *testing.T) {
		// A server that shuts down (cancels its connections' context)
		// ends every connection.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, client := serveTCP(t, ctx, ipc.ConnOptions{PingInterval: time.Hour})
		c.Admit()
		go io.Copy(io.Discard, client)
		stop := make(chan struct{})
		stopped := flood(t, client, pong, stop)
		defer func() { close(stop); client.Close(); <-stopped }()
		time.Sleep(100 * time.Millisecond) // the reader is reading the flood
		cancel()
		select {
		case <-c.Done():
		case <-time.After(3 * time.Second):
			t.Fatal("the connection did not end within 3s of its context being cancelled while its client sent pongs")
		}
	})
}

// dataWithEOF is a connection that is not a socket and whose Read returns
// the last bytes together with io.EOF, as io.Reader allows (crypto/tls's
// Conn does so when a close_notify follows the data).
type dataWithEOF struct {
	net.Conn
	r io.Reader
}

func (c dataWithEOF) Read(p []byte) (int, error) { return c.r.Read(p) }

// A Read that returns bytes with an error: the frames in those bytes are
// handed on before the error ends the connection, as bufio did before (a
// bye then ends it cleanly, not with an unexpected EOF).
func TestReaderHandsOnTheBytesThatCameWithAnError(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	in := ipc.NewInbox(16)
	c := ipc.NewConn(context.Background(), dataWithEOF{server, iotest.DataErrReader(server)}, codec(t), ipc.ConnOptions{}, in)
	c.Admit()
	inbox := drain(t, in)
	go func() {
		var b bytes.Buffer
		b.Write(frameBytes(t, map[string]any{"type": "decision", "tick": 1, "tool": "idle"}))
		b.Write(frameBytes(t, map[string]any{"type": "bye"}))
		client.Write(b.Bytes())
		client.Close()
	}()
	var got []any
	end := func() ipc.Incoming {
		for {
			select {
			case in := <-inbox:
				if in.Msg == nil {
					return in
				}
				got = append(got, in.Msg)
			case <-time.After(3 * time.Second):
				t.Fatal("no end")
			}
		}
	}()
	require.Len(t, got, 2, "the decision and the bye; the end: %v", end.Err)
	require.NoError(t, end.Err)
}

// A client that has not been admitted cannot make the reader hold more
// memory than MaxHelloFrame allows, however it announces lengths; and an
// admitted one that announces a huge frame and sends its bytes one at a time
// gets it handed on whole (the buffer grows only as the bytes arrive).
func TestReaderLimitsHoldBeforeAndAfterTheHello(t *testing.T) {
	t.Run("before hello", func(t *testing.T) {
		c, client, inbox := serve(t, ipc.ConnOptions{})
		_, err := client.Write(binary.BigEndian.AppendUint32(nil, ipc.DefaultMaxHelloFrame+1))
		require.NoError(t, err)
		e := recv(t, client)
		require.Equal(t, ipc.CodeFrameTooLarge, e["code"])
		require.Contains(t, e["message"], "before hello")
		<-c.Done()
		require.ErrorContains(t, waitEnd(t, inbox, 3*time.Second).Err, ipc.CodeFrameTooLarge)
	})
	t.Run("a length at MaxFrame+1, then nothing, after admission", func(t *testing.T) {
		c, client, inbox := serve(t, ipc.ConnOptions{MaxFrame: 1 << 16})
		c.Admit()
		_, err := client.Write(binary.BigEndian.AppendUint32(nil, 1<<16+1))
		require.NoError(t, err)
		require.Equal(t, ipc.CodeFrameTooLarge, recv(t, client)["code"])
		require.ErrorContains(t, waitEnd(t, inbox, 3*time.Second).Err, ipc.CodeFrameTooLarge)
	})
}

// Empty frames between and inside a burst are answered with a non-fatal
// BAD_MESSAGE each, and the frames after them are handed on.
func TestEmptyFramesInABurst(t *testing.T) {
	_, client, inbox := serve(t, ipc.ConnOptions{})
	var b []byte
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = append(b, frameBytes(t, map[string]any{"type": "decision", "tick": 1, "tool": "idle"})...)
	b = append(b, 0, 0, 0, 0)
	_, err := client.Write(b)
	require.NoError(t, err)
	for range 3 {
		e := recv(t, client)
		require.Equal(t, ipc.CodeBadMessage, e["code"])
		require.Equal(t, false, e["fatal"])
	}
	require.Equal(t, float64(1), (<-inbox).Msg.(*ipc.Decision).Tick)
}

// A length header with its top bit set (over any limit; negative as an int
// on a 32-bit platform) is a fatal FRAME_TOO_LARGE, never a crash.
func TestALengthWithItsTopBitSetIsTooLarge(t *testing.T) {
	c, client, inbox := serve(t, ipc.ConnOptions{})
	c.Admit()
	_, err := client.Write([]byte{0x80, 0, 0, 0, 1, 2, 3, 4})
	require.NoError(t, err)
	require.Equal(t, ipc.CodeFrameTooLarge, recv(t, client)["code"])
	require.ErrorContains(t, waitEnd(t, inbox, 3*time.Second).Err, ipc.CodeFrameTooLarge)
}

// A read that returns fewer bytes than asked has not always emptied the
// socket: a Unix socket's read stops after bytes that came with file
// descriptors (SCM_RIGHTS), whatever follows them. An awaited decision sent
// so, and a message right behind it, both already there when the reader
// reads: the message is handed on too, not left until the client next sends
// something (or the next ping, PingInterval later).
func TestAMessageBehindAnAwaitedDecisionThatCameWithDescriptors(t *testing.T) {
	sc, client := unixPair(t)
	in := ipc.NewInbox(2)
	c := ipc.NewConn(context.Background(), sc, codec(t), ipc.ConnOptions{PingInterval: time.Hour}, in)
	go io.Copy(io.Discard, client)
	decision := func(tick int) []byte {
		return frameBytes(t, map[string]any{"type": "decision", "tick": tick, "tool": "idle"})
	}
	// Ticks 0 and 1 fill the inbox; the reader holds tick 2, waiting for
	// room, and reads nothing meanwhile.
	_, err := client.Write(append(append(decision(0), decision(1)...), decision(2)...))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	// Meanwhile the awaited decision for tick 3 arrives with a descriptor,
	// and a query behind it.
	c.Await(3)
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	_, _, err = client.WriteMsgUnix(decision(3), syscall.UnixRights(int(f.Fd())), nil)
	require.NoError(t, err)
	_, err = client.Write(frameBytes(t, map[string]any{"type": "query", "id": 1, "tool": "query_inventory"}))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)

	var got []any
	deadline := time.Now().Add(3 * time.Second)
	for len(got) < 5 && time.Now().Before(deadline) {
		for _, m := range in.Take(nil) {
			got = append(got, m.Msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Len(t, got, 5, "ticks 0 to 3 and the query; got %v", got)
	_, ok := got[4].(*ipc.Query)
	require.True(t, ok, "the query, last: %#v", got[4])
}
