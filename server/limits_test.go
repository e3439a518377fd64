package server_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/scenarios"
	"github.com/arena-sim/arena/server"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// liveHeap is the heap still in use once the garbage is collected (twice:
// pooled buffers survive one collection).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

const mib = 1 << 20

// countingListener counts the bytes the server has read from its
// connections, so that a test knows when the server has seen what a client
// sent even when the server does not answer it.
type countingListener struct {
	net.Listener
	read atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: nc, read: &l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// waitRead waits until the server has read n bytes in all.
func (l *countingListener) waitRead(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for l.read.Load() < n {
		require.True(t, time.Now().Before(deadline), "the server read %d bytes of %d", l.read.Load(), n)
		time.Sleep(5 * time.Millisecond)
	}
}

// serveCounting serves foraging with opt on a counting listener.
func serveCounting(t *testing.T, opt server.Options) (string, *countingListener) {
	t.Helper()
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	addr, l := listen(t)
	cl := &countingListener{Listener: l}
	serveOn(t, sc, opt, cl)
	return addr, cl
}

// Fixed (ipc/conn.go, readFrame): a frame's buffer was allocated, at the full
// declared length, as soon as the 4-byte length arrived, before the client
// had said hello: 1,000 strangers each sending a length of 1 MiB − 1 cost
// 1 GiB. Before hello a frame is now limited to MaxHelloFrame (4 KiB), and a
// larger length is refused at once, with nothing allocated.
func TestHugeLengthsBeforeHelloAreRefusedWithoutMemory(t *testing.T) {
	const conns = 200
	addr, l := serveCounting(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1, MaxUnauthenticated: conns})
	before := liveHeap()
	cs := make([]*client, conns)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].writeRaw(concat(lengthHeader(mib-1), make([]byte, 100)))
	}
	// The server has read every length (and perhaps the bytes after it).
	l.waitRead(t, conns*4)
	grown := liveHeap() - before
	t.Logf("heap grew by %.1f MiB for %d connections", float64(grown)/mib, conns)
	require.Less(t, grown, int64(conns*mib/8), "the declared lengths were allocated")
	for _, c := range cs {
		c.expectError(ipc.CodeFrameTooLarge, true, "frame of 1048575 bytes is larger than the limit of 4096 bytes before hello")
		c.expectClosed()
	}
}

// Fixed (ipc/frame.go, readBody): even after hello, a frame's body is read
// into a buffer that grows as its bytes arrive, so a length of 1 MiB − 1
// followed by a trickle costs about the trickle, not 1 MiB.
func TestALargeLengthCostsOnlyTheBytesThatArrive(t *testing.T) {
	const conns = 200
	addr, l := serveCounting(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1})
	cs := make([]*client, conns)
	for i := range cs {
		cs[i] = dial(t, addr)
		cs[i].send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
		m, _ := cs[i].recv()
		require.Equal(t, "welcome", m["type"], "%v", m)
	}
	read := l.read.Load()
	before := liveHeap()
	const trickle = 1000
	for _, c := range cs {
		c.writeRaw(concat(lengthHeader(mib-1), make([]byte, trickle)))
	}
	l.waitRead(t, read+conns*(4+trickle))
	grown := liveHeap() - before
	t.Logf("heap grew by %.1f MiB for %d connections, each %d bytes into a frame of 1 MiB", float64(grown)/mib, conns, trickle)
	require.Less(t, grown, int64(conns*mib/8), "the declared lengths were allocated")
	// Each session is still served: the frame is finished (zeros: CBOR 0
	// and extraneous data) and refused, and the session goes on.
	for _, c := range cs[:3] {
		c.writeRaw(make([]byte, mib-1-trickle))
		for _, m := range c.pingThrough("after") {
			if m["type"] == "error" {
				c.requireError(m, ipc.CodeBadMessage, false, "extraneous data")
			}
		}
	}
}

// Fixed (ipc/conn.go, readLoop): the reader kept the largest frame it had read
// for the connection's life (buf = frame), so 300 sessions that had each sent
// one large frame, then only pings, held 340 MiB. Buffers now go back to a
// pool after each frame, and the pool keeps none larger than 64 KiB.
func TestAConnectionKeepsNoBufferBetweenFrames(t *testing.T) {
	const conns = 100
	const size = 512 << 10
	addr, _ := serveCounting(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1})
	before := liveHeap()
	big := wire(make([]byte, size)) // CBOR 0, then extraneous zeros: BAD_MESSAGE
	for i := 0; i < conns; i++ {
		c := dial(t, addr)
		c.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
		c.writeRaw(big)
		got := c.pingThrough("p")
		require.Equal(t, "welcome", got[0]["type"])
		c.requireError(got[len(got)-1], ipc.CodeBadMessage, false, fmt.Sprintf("%d bytes of extraneous data", size-1))
	}
	grown := liveHeap() - before
	t.Logf("heap grew by %.1f MiB for %d idle sessions that each sent a frame of %d KiB", float64(grown)/mib, conns, size>>10)
	require.Less(t, grown, int64(conns*size/4), "the sessions kept their frames' buffers")
}

// A hello may be followed at once by a large frame: the reader waits for the
// verdict on the hello before it applies the limit of strangers.
func TestALargeFrameRightAfterHelloWaitsForTheVerdict(t *testing.T) {
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1})
	defer cancel()
	hello := func(protocol int) []byte {
		return wire(clientCBOR(map[string]any{"type": "hello", "protocol": protocol, "role": "spectator"}))
	}
	big := wire(make([]byte, 100_000))

	ok := dial(t, addr)
	ok.writeRaw(concat(hello(1), big))
	got := ok.pingThrough("p")
	require.Equal(t, "welcome", got[0]["type"])
	ok.requireError(got[len(got)-1], ipc.CodeBadMessage, false, "99999 bytes of extraneous data")

	refused := dial(t, addr)
	refused.writeRaw(concat(hello(2), big))
	refused.expectError(ipc.CodeUnsupportedProtocol, true)
	refused.expectClosed()
}

// Fixed (server/server.go, acceptLoop): connections were not limited at all.
// Over MaxUnauthenticated connections that have not said hello, or over
// MaxConns in all, a connection is refused with SERVER_BUSY, and is accepted
// again once there is room.
func TestConnectionsOverTheLimitsAreRefused(t *testing.T) {
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1, MaxConns: 5, MaxUnauthenticated: 3, Log: log.logger()})
	defer cancel()
	served := func(c *client) { c.pingThrough("p") } // pings are answered before hello
	busy := func(want string) {
		c := dial(t, addr)
		c.expectError(ipc.CodeServerBusy, true, want)
		c.expectClosed()
	}
	var strangers, others []*client
	for i := 0; i < 3; i++ {
		c := dial(t, addr)
		served(c)
		strangers = append(strangers, c)
	}
	busy("3 connections have not said hello yet, the server's limit; try again later")
	log.wait(t, "connection refused")

	// Two strangers say hello: two more may connect, up to 5 in all.
	for _, c := range strangers[:2] {
		c.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
		m, _ := c.recv()
		require.Equal(t, "welcome", m["type"])
	}
	for i := 0; i < 2; i++ {
		c := dial(t, addr)
		served(c)
		others = append(others, c)
	}
	busy("the server has 5 connections open, its limit; try again later")

	// A stranger leaves: there is room again (once the server has seen it go).
	others[0].nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := dial(t, addr)
		ipc.WriteFrame(c.nc, clientCBOR(map[string]any{"type": "ping", "id": "p"})) // refused: may fail
		m, _ := c.recv()
		if m["type"] == "pong" {
			break
		}
		c.requireError(m, ipc.CodeServerBusy, true)
		require.True(t, time.Now().Before(deadline), "the connection that left still counts")
		time.Sleep(10 * time.Millisecond)
	}
}

// Fixed (ipc/conn.go, NewConn): a connection could stay for ever without
// saying hello, as long as it pinged. It is now dropped HelloTimeout after it
// connected; one that said hello is not.
func TestAConnectionWithoutHelloIsDroppedInTime(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 2, Conn: ipc.ConnOptions{HelloTimeout: timeout}})
	defer cancel()
	agent := dial(t, addr)
	agent.helloAgent("", "")
	stranger := dial(t, addr)
	began := time.Now()
	for {
		ipc.WriteFrame(stranger.nc, clientCBOR(map[string]any{"type": "ping"})) // dropped: may fail
		m, _ := stranger.recv()
		if m["type"] == "pong" {
			require.Less(t, time.Since(began), 20*timeout, "a stranger that pings stays for ever")
			time.Sleep(timeout / 10)
			continue
		}
		stranger.requireError(m, ipc.CodeUnauthorized, true, "no hello was accepted within 300ms of connecting")
		break
	}
	require.GreaterOrEqual(t, time.Since(began), timeout)
	stranger.expectClosed()
	agent.pingThrough("still here")
}

// flakyListener fails its first Accept calls with errs, then accepts.
type flakyListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// Fixed (server/server.go, acceptLoop): the accept loop returned on any
// error, so after one EMFILE no client was ever accepted again, and nothing
// was logged. It now logs the error and tries again after a pause.
func TestTheAcceptLoopSurvivesErrors(t *testing.T) {
	sc, err := scenarios.Load("foraging")
	require.NoError(t, err)
	addr, l := listen(t)
	emfile := &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	enfile := &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.ENFILE)}
	flaky := &flakyListener{Listener: l, errs: []error{emfile, emfile, enfile, errors.New("something else")}}
	log := newServerLog()
	serveOn(t, sc, server.Options{OpenSpectators: true, Seed: 1, Agents: 1, Ticks: 2, Log: log.logger()}, flaky)
	log.wait(t, "accept failed; retrying")

	c := dial(t, addr)
	require.Equal(t, "agent_001", c.helloAgent("", "")["agent_id"])
	tick, _ := c.observe()
	require.Equal(t, 0, tick)
	flaky.mu.Lock()
	require.Empty(t, flaky.errs, "every error was retried")
	flaky.mu.Unlock()
}

// Fixed (server/handle.go, hello; ipc/codec.go, badMessage): what a client
// sent came back unclipped in error messages (a 250 kB agent name made a
// 1 MB reply). Every echoed field is clipped to 64 characters, and every
// error message to 1 KiB.
func TestEchoedFieldsAreClipped(t *testing.T) {
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 1})
	defer cancel()
	long := string(bytes.Repeat([]byte("é\x01"), 1300)) // 3,900 bytes, %q makes it 8,000
	for _, tc := range []struct {
		hello map[string]any
		code  string
	}{
		{map[string]any{"type": "hello", "protocol": 1, "agent": long}, ipc.CodeNoSlot},
		{map[string]any{"type": "hello", "protocol": 1, "role": long}, ipc.CodeBadMessage},
	} {
		c := dial(t, addr)
		c.send(tc.hello)
		m, raw := c.recv()
		c.requireError(m, tc.code, true, "…")
		require.Less(t, len(raw), 400, "%v", m)
	}

	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	key := bytes.Repeat([]byte("k"), 250_000)
	text := func(b []byte) []byte {
		return concat([]byte{0x7a}, binary.BigEndian.AppendUint32(nil, uint32(len(b))), b)
	}
	// {"type": "ping", key: 1, key: 1}
	spec.writeRaw(wire(concat(hexCBOR("a3 "+cborTypePing), text(key), []byte{1}, text(key), []byte{1})))
	for _, m := range spec.pingThrough("p") {
		if m["type"] == "error" {
			spec.requireError(m, ipc.CodeBadMessage, false)
			require.Less(t, len(m["message"].(string)), 200, "%.300v", m)
			return
		}
	}
	t.Fatal("no error for a duplicate key")
}

// Fixed (server/handle.go, failAuth): failed authentications were neither
// logged nor slowed down. Each is logged, and a host's failures are answered
// later and later (the first at once, then after 250 ms, 500 ms, 1 s, …), so
// that tokens cannot be guessed quickly; a right token is answered at once.
func TestFailedAuthenticationsAreLoggedAndSlowedDown(t *testing.T) {
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 2, Log: log.logger(),
		Tokens: map[string]string{"agent_001": "right", "agent_002": "other", "spectator": "eye"}})
	defer cancel()
	var took []time.Duration
	for i := 0; i < 4; i++ {
		c := dial(t, addr)
		hello := map[string]any{"type": "hello", "protocol": 1, "token": "wrong"}
		if i%2 == 1 {
			hello["role"] = "spectator"
		}
		began := time.Now()
		c.send(hello)
		c.expectError(ipc.CodeUnauthorized, true)
		took = append(took, time.Since(began))
		c.expectClosed()
		log.wait(t, "authentication failed")
	}
	t.Logf("answers took %v", took)
	require.GreaterOrEqual(t, took[2], 500*time.Millisecond, "the third failure is answered after 500 ms")
	require.GreaterOrEqual(t, took[3], time.Second, "the fourth after 1 s")

	// Messages sent while the refusal waits are not handled.
	c := dial(t, addr)
	c.send(map[string]any{"type": "hello", "protocol": 1, "token": "wrong"})
	c.send(map[string]any{"type": "hello", "protocol": 1, "token": "right"})
	c.expectError(ipc.CodeUnauthorized, true)
	c.expectClosed()

	ok := dial(t, addr)
	require.Equal(t, "agent_001", ok.helloAgent("", "right")["agent_id"])
}

// Fixed (ipc/conn.go, liveReader): the server never pinged, so a dead peer
// (a pulled cable: no close ever arrives) held its slot for the 30-second
// idle time-out, while a healthy agent that was quiet that long was
// dropped. Now a quiet session is pinged after PingInterval, and dropped if
// nothing arrives within PongWait after: a client that answers pings stays
// however quiet it is, and a dead one goes within the sum of the two.
func TestQuietSessionsArePingedAndDeadOnesDropped(t *testing.T) {
	const interval, wait = 50 * time.Millisecond, 100 * time.Millisecond
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 2, Log: log.logger(),
		Conn: ipc.ConnOptions{PingInterval: interval, PongWait: wait}})
	defer cancel()
	quiet := dial(t, addr)
	quiet.helloAgent("agent_001", "")
	dead := dial(t, addr)
	dead.helloAgent("agent_002", "")

	// quiet answers the server's pings, and nothing else, for 10 times what
	// would drop it otherwise; dead sends nothing more and reads nothing.
	pings := 0
	for began := time.Now(); time.Since(began) < 10*(interval+wait); {
		m, raw := quiet.recv()
		if m["type"] != "ping" {
			continue
		}
		pings++
		var p ipc.Ping
		require.NoError(t, cbor.Unmarshal(raw, &p))
		require.NotEmpty(t, p.ID, "a server ping has an id")
		quiet.writeRaw(wire(clientCBOR(ipc.Pong{Type: "pong", ID: p.ID})))
	}
	require.Greater(t, pings, 5)
	quiet.pingThrough("still here")
	timeout := time.After(10 * time.Second)
	for e := ""; e != "agent disconnected agent_002"; {
		select {
		case e = <-log:
			require.NotEqual(t, "agent disconnected agent_001", e, "a quiet agent that answers pings was dropped")
		case <-timeout:
			t.Fatal("the dead agent was never dropped")
		}
	}
	// dead's slot is free again.
	back := dial(t, addr)
	back.helloAgent("agent_002", "")
}
