package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ConnOptions tune a connection. Zero fields take the defaults in brackets.
type ConnOptions struct {
	MaxFrame int // largest accepted frame [DefaultMaxFrame]
	// MaxHelloFrame is the largest frame accepted before the server admits
	// the connection (Admit, once its hello is accepted): a stranger gets
	// no more memory than this until it has a slot [DefaultMaxHelloFrame].
	MaxHelloFrame int
	// HelloTimeout is how long a connection may go without being admitted;
	// then it is dropped with UNAUTHORIZED [10s].
	HelloTimeout time.Duration
	// PingInterval: a client that has sent nothing for this long is sent a
	// ping [5s]. PongWait: one that then sends nothing (its pong, or anything
	// else) for this long is disconnected [10s]. A quiet client that answers
	// pings is never dropped; a dead one goes within the sum of the two.
	PingInterval, PongWait time.Duration
	WriteTimeout           time.Duration // one frame must be written within this [10s]
	// QueueSize bounds the messages waiting to be written (results, errors,
	// welcomes...). A client whose queue fills up is disconnected with
	// SLOW_CONSUMER [64].
	QueueSize int
	// MaxSkipped is how many observations in a row may be replaced by a newer
	// one before the client is disconnected with SLOW_CONSUMER [8].
	MaxSkipped int
}

func (o ConnOptions) withDefaults() ConnOptions {
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	if o.MaxHelloFrame <= 0 {
		o.MaxHelloFrame = DefaultMaxHelloFrame
	}
	o.MaxHelloFrame = min(o.MaxHelloFrame, o.MaxFrame)
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = 10 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 5 * time.Second
	}
	if o.PongWait <= 0 {
		o.PongWait = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 64
	}
	if o.MaxSkipped <= 0 {
		o.MaxSkipped = 8
	}
	return o
}

// Incoming is one decoded client message, or the end of its connection (Msg nil,
// Err set), as the reader goroutine leaves it in the Inbox of whoever owns the
// game. The end of a connection is always delivered, unless the context given
// to NewConn is cancelled first.
type Incoming struct {
	Conn *Conn
	Msg  any
	Err  error
}

// Conn is one client connection. A reader goroutine decodes frames and leaves
// messages in the inbox; a writer goroutine writes what Send and SendLatest
// queue (a frame queued while the connection is idle is written at once,
// without blocking, by the goroutine that queues it: see writeThrough).
// Neither touches game state: they only move messages. Ping is answered by
// the reader directly. Protocol errors in what the client sends
// are answered with an error message; fatal ones close the connection.
type Conn struct {
	ctx   context.Context
	nc    net.Conn
	codec *Codec
	opt   ConnOptions
	inbox *Inbox

	mu      sync.Mutex
	queue   [][]byte // frames in order
	latest  []byte   // the newest unsent observation frame, if any
	skipped int      // observations replaced before being sent, in a row
	closing bool
	wake    chan struct{}
	done    chan struct{}
	closeMu sync.Once
	err     error

	admitted  chan struct{} // closed by Admit
	isAdmit   atomic.Bool   // set by Admit, read for every frame
	admitOnce sync.Once
	helloTime *time.Timer // drops the connection if it is not admitted in time

	// Write-through: a frame queued when nothing else waits and nothing is
	// being written is written at once by the goroutine that queues it, in
	// one non-blocking write; what the socket does not take then (a full
	// buffer, an error, an expired write deadline) is left to the writer
	// goroutine, first thing. Waking the writer instead costs a goroutine
	// hand-off, often to another processor, for every frame: in lockstep
	// that delayed the first observations of a tick by hundreds of
	// microseconds (docs/performance.md).
	raw     *throughWriter  // nil unless nc is a socket
	rawRead syscall.RawConn // nc's descriptor, for the reader; nil unless nc is a socket
	reads   atomic.Int64    // the reader's read system calls on rawRead (for tests)
	closed  atomic.Bool     // set as nc is closed: the reader stops reading
	writing bool            // a frame is being written, by either
	partial []byte          // the unwritten end of a frame written through

	// awaiting is 1 + the tick whose decision the owner awaits (Await), 0
	// for none; the reader takes it with the first decision for that tick.
	awaiting atomic.Int64

	// inInbox counts the connection's messages in its inbox (guarded by the
	// inbox's mu): a field, not a map of the inbox's, which cost a lookup
	// in a map of every connection for each message.
	inInbox int
}

// NewConn starts the reader and writer goroutines of a connection. Messages go
// to inbox; the connection's end is reported there too. Cancelling ctx closes
// the connection and stops its goroutines even if nobody reads the inbox.
func NewConn(ctx context.Context, nc net.Conn, codec *Codec, opt ConnOptions, inbox *Inbox) *Conn {
	c := &Conn{ctx: ctx, nc: nc, codec: codec, opt: opt.withDefaults(), inbox: inbox,
		wake: make(chan struct{}, 1), done: make(chan struct{}), admitted: make(chan struct{})}
	c.helloTime = time.AfterFunc(c.opt.HelloTimeout, func() {
		if !c.Admitted() {
			c.fail(&ProtocolError{Code: CodeUnauthorized, Fatal: true,
				Message: fmt.Sprintf("no hello was accepted within %v of connecting", c.opt.HelloTimeout)})
		}
	})
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.rawRead = newThroughWriter(raw), raw
		}
	}
	go c.readLoop()
	go c.writeLoop()
	go func() {
		select {
		case <-ctx.Done():
			c.shutdown()
		case <-c.done:
		}
	}()
	return c
}

// Admit lifts the limits on a connection whose hello was accepted: frames up
// to MaxFrame instead of MaxHelloFrame, and no HelloTimeout.
func (c *Conn) Admit() {
	c.admitOnce.Do(func() {
		c.helloTime.Stop()
		c.isAdmit.Store(true)
		close(c.admitted)
	})
}

// Await tells the connection's reader that the owner awaits the client's
// decision for tick (the tick of the observation about to be sent): the
// first such decision, with a tool, then wakes the owner only with the others
// it awaits (Inbox.Arm). Anything else the client sends still wakes it at
// once, so that, say, a decision for the wrong tick is answered at once and
// can be put right. Call it before sending the observation.
func (c *Conn) Await(tick int) { c.awaiting.Store(int64(tick) + 1) }

// Admitted reports whether Admit was called.
func (c *Conn) Admitted() bool { return c.isAdmit.Load() }

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, once Done is closed.
func (c *Conn) Err() error {
	<-c.done
	return c.err
}

// Send queues a message after everything queued before it (an observation
// waiting in SendLatest's place included). It never blocks: a full queue
// disconnects the client with SLOW_CONSUMER and Send reports it.
func (c *Conn) Send(msg any) error {
	return c.enqueue(msg, func(frame []byte) string {
		if len(c.queue) >= c.opt.QueueSize {
			return fmt.Sprintf("%d messages were waiting to be sent", c.opt.QueueSize)
		}
		if c.latest != nil {
			c.queue, c.latest, c.skipped = append(c.queue, c.latest), nil, 0
		}
		c.queue = append(c.queue, frame)
		return ""
	})
}

// SendLatest queues an observation. An older one not yet written is replaced:
// a client that falls behind gets the newest observation, not a backlog. One
// that stays behind (MaxSkipped replacements in a row) is disconnected with
// SLOW_CONSUMER.
func (c *Conn) SendLatest(msg any) error {
	frame, err := c.codec.marshalFrame(msg)
	if err != nil {
		return err
	}
	return c.sendLatestFrame(frame)
}

// sendLatestFrame is SendLatest with msg encoded.
func (c *Conn) sendLatestFrame(frame []byte) error {
	return c.enqueueFrame(frame, func(frame []byte) string {
		if c.latest != nil {
			if c.skipped++; c.skipped >= c.opt.MaxSkipped {
				return fmt.Sprintf("%d observations in a row were replaced before they could be sent", c.skipped)
			}
		}
		c.latest = frame
		return ""
	})
}

// Batch holds observations encoded for several connections, to be sent
// together: a server encodes a run of observations back to back, then writes
// them back to back, which on a 2-core machine was faster than encoding and
// writing each in turn (docs/performance.md, "Where a lockstep tick goes,
// phase by phase").
// The zero value is ready to use; it is not safe for concurrent use.
type Batch struct {
	items []batched
}

type batched struct {
	c     *Conn
	frame []byte
}

// AddObservation encodes msg for c; Send sends it as SendLatest would.
func (b *Batch) AddObservation(c *Conn, msg *ObservationMsg) error {
	frame, err := c.codec.marshalObservation(msg)
	if err != nil {
		return err
	}
	b.items = append(b.items, batched{c, frame})
	return nil
}

// Send sends what was added, in the order it was added, and empties the
// batch.
func (b *Batch) Send() {
	for i, it := range b.items {
		it.c.sendLatestFrame(it.frame)
		b.items[i] = batched{}
	}
	b.items = b.items[:0]
}

// enqueue encodes msg and, under the lock, lets put store its frame. put
// returns why the client is too slow, or "" when the frame was stored.
func (c *Conn) enqueue(msg any, put func(frame []byte) string) error {
	frame, err := c.codec.marshalFrame(msg)
	if err != nil {
		return err
	}
	return c.enqueueFrame(frame, put)
}

// enqueueFrame is enqueue with msg encoded.
func (c *Conn) enqueueFrame(frame []byte, put func(frame []byte) string) error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return net.ErrClosed
	}
	if c.raw != nil && !c.writing && c.partial == nil && len(c.queue) == 0 && c.latest == nil {
		c.writeThrough(frame) // unlocks
		return nil
	}
	slow := put(frame)
	c.mu.Unlock()
	if slow != "" {
		c.fail(&ProtocolError{Code: CodeSlowConsumer, Fatal: true, Message: slow})
		return errSlow
	}
	c.signal()
	return nil
}

// writeThrough writes a frame while nothing else is queued or being written;
// it is called with c.mu held and unlocks it. Nothing being queued, a
// frame that SendLatest would store replaces nothing, so it is not a skip.
func (c *Conn) writeThrough(frame []byte) {
	c.writing = true
	c.mu.Unlock()
	n := c.raw.try(frame)
	c.mu.Lock()
	c.writing = false
	if n < len(frame) {
		c.partial = frame[n:]
	}
	wake := c.partial != nil || len(c.queue) > 0 || c.latest != nil || c.closing
	c.mu.Unlock()
	if n == len(frame) {
		releaseFrame(frame)
	}
	if wake {
		c.signal()
	}
}

var errSlow = errors.New("client too slow: disconnected with " + CodeSlowConsumer)

func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Close sends nothing more and closes the connection once what is queued has
// been written (or the write timeout has passed).
func (c *Conn) Close() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.signal()
}

// fail sends a fatal error (best effort, past any queue) and closes.
func (c *Conn) fail(pe *ProtocolError) {
	c.mu.Lock()
	if !c.closing {
		if b, err := c.codec.Marshal(NewError(pe)); err == nil {
			c.queue = append(c.queue, AppendFrame(nil, b))
		}
		c.latest = nil
		c.closing = true
	}
	c.mu.Unlock()
	c.setErr(pe)
	c.signal()
}

func (c *Conn) setErr(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *Conn) shutdown() {
	c.closeMu.Do(func() {
		c.helloTime.Stop()
		c.closed.Store(true)
		c.nc.Close()
		close(c.done)
	})
}

func (c *Conn) writeLoop() {
	defer c.shutdown()
	for {
		c.mu.Lock()
		var frame []byte
		obs, part := false, false
		switch {
		case c.writing: // a write-through; it wakes us if there is more
		case c.partial != nil: // its end goes before anything else
			frame, c.partial, part = c.partial, nil, true
		case len(c.queue) > 0:
			frame = c.queue[0]
			c.queue = c.queue[1:]
		case c.latest != nil:
			frame, c.latest, obs = c.latest, nil, true
		}
		closing := c.closing && !c.writing
		if frame != nil {
			c.writing = true
		}
		c.mu.Unlock()
		if frame == nil {
			if closing {
				return
			}
			select {
			case <-c.wake:
			case <-c.done:
				return
			}
			continue
		}
		c.nc.SetWriteDeadline(time.Now().Add(c.opt.WriteTimeout))
		if _, err := c.nc.Write(frame); err != nil {
			c.setErr(fmt.Errorf("write to %s: %w", c.nc.RemoteAddr(), err))
			return
		}
		c.mu.Lock()
		c.writing = false
		if obs {
			c.skipped = 0
		}
		c.mu.Unlock()
		if !part {
			releaseFrame(frame)
		}
	}
}

// notifyEnd tells the inbox's owner the connection has ended. It waits as long
// as it takes (a slow tick must not leave a slot marked as taken), unless the
// connection's context is cancelled.
func (c *Conn) notifyEnd() {
	c.inbox.Put(Incoming{Conn: c, Err: c.Err()}, c.ctx.Done())
}

// Refuse tells a connection that the server will not serve it (pe, a fatal
// error) and closes it, within half a second. Meanwhile it waits for the
// client to close first, reading and dropping what it sends, so that the
// connection is not reset before the client has read the error.
func Refuse(nc net.Conn, codec *Codec, pe *ProtocolError) {
	defer nc.Close()
	b, err := codec.Marshal(NewError(pe))
	if err != nil {
		return
	}
	nc.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := nc.Write(AppendFrame(nil, b)); err != nil {
		return
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
	}
}

// Listen opens a listener from an address "unix:PATH" or "tcp:HOST:PORT". A Unix
// socket is created with mode 0600. A stale socket file at PATH is replaced,
// but not one a live server answers on; closing the listener removes the
// socket file only if it is still the one it created. TCP on an empty host
// binds to loopback only.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	network, rest, ok := cut(addr)
	if !ok {
		return nil, fmt.Errorf("listen %q: want unix:PATH or tcp:HOST:PORT", addr)
	}
	var lc net.ListenConfig
	switch network {
	case "unix":
		if rest == "" {
			return nil, fmt.Errorf("listen %q: empty socket path", addr)
		}
		l, err := listenUnix(ctx, &lc, rest)
		if err != nil {
			return nil, fmt.Errorf("listen %q: %w", addr, err)
		}
		return l, nil
	case "tcp":
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("listen %q: %w", addr, err)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		l, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, fmt.Errorf("listen %q: %w", addr, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("listen %q: network %q is not unix or tcp", addr, network)
}

// Dial connects to "unix:PATH" or "tcp:HOST:PORT".
func Dial(ctx context.Context, addr string) (net.Conn, error) {
	network, rest, ok := cut(addr)
	if !ok || (network != "unix" && network != "tcp") {
		return nil, fmt.Errorf("dial %q: want unix:PATH or tcp:HOST:PORT", addr)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, rest)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", addr, err)
	}
	return nc, nil
}

func cut(addr string) (string, string, bool) {
	for i := 0; i < len(addr); i++ {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], true
		}
	}
	return "", "", false
}
