package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// readBufSize is what a connection's reader reads into at once, so that a
// frame usually takes one read system call; a larger frame grows the
// buffer as its bytes arrive, and the buffer goes back to this size once
// every byte read is handed on.
const readBufSize = 4096

// errWouldBlock: the socket has nothing to read now.
var errWouldBlock = errors.New("would block")

// readLoop reads the connection's frames and hands their messages to the
// inbox until the connection ends.
//
// A socket is read through its descriptor (Conn.rawRead), from inside one
// syscall.RawConn.Read for as long as frames keep coming. After an awaited
// decision that emptied the socket (the read that brought it returned fewer
// bytes than it asked for, with no file descriptors attached, and nothing
// follows it; see readSocket), the reader waits for the
// poller to report new bytes instead of reading, failing with EAGAIN and
// then waiting, as net.Conn's Read does: in lockstep the client sends
// nothing more until its next observation, and that read is a system call
// per decision saved (nginx's recv does the same after a short read). The
// poller is edge-triggered: bytes that arrive after the emptying read are
// reported; a report of bytes read already costs one read that finds none.
// A new RawConn.Read drops the reports that came before it, so each one
// reads first.
//
// What the wait can miss is an end of stream that arrived with the decision
// (one report for both): a client that closes the connection right after
// its decision is noticed when the next observation is written to it (a
// closed Unix socket fails the write; TCP's reset wakes the reader), and
// one that only shuts down its writing side, at the next ping, within
// PingInterval. TCP's urgent data also ends a read early: a client that
// sends it right after its decision has its next messages read at its next
// ping. Any other message, or a decision that is not the one awaited, is
// followed by a read as before.
//
// Close waits for a RawConn.Read to return, so nothing inside it waits on
// anything but the socket, and it returns once the connection is closing
// (Conn.closed), however fast the client sends: a message the inbox has no
// room for, or a large frame that waits for the verdict on a hello, ends it
// and is waited for outside.
func (c *Conn) readLoop() {
	fr := &frameReader{c: c, live: liveReader{c: c, last: time.Now()}, base: make([]byte, readBufSize), need: 4}
	fr.buf = fr.base
	_, fr.unix = c.nc.(*net.UnixConn)
	fr.msg.Iov, fr.msg.Iovlen = &fr.iov, 1
	fr.readFD, fr.readConn = fr.readSocket, fr.live.Read
	fr.pump = func(fd uintptr) bool {
		fr.fd = int(fd)
		return fr.run(fr.readFD)
	}
	c.nc.SetReadDeadline(fr.live.last.Add(c.opt.PingInterval))
	for !fr.over {
		if c.rawRead != nil {
			fr.skipRead = false
			if err := c.rawRead.Read(fr.pump); err != nil { // a deadline, or closed
				if err = fr.live.expired(err); err != nil {
					fr.stop(err)
				}
				continue
			}
		} else {
			fr.run(fr.readConn)
		}
		fr.waitOn()
	}
	if err := fr.err; err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			c.fail(pe)
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.setErr(fmt.Errorf("read from %s: %w", c.nc.RemoteAddr(), err))
		}
	}
	c.Close()
	<-c.done
	c.notifyEnd()
}

// frameReader cuts a connection's frames out of the bytes its reader reads
// and hands on their messages.
type frameReader struct {
	c    *Conn
	live liveReader
	// buf[lo:hi] is read and not handed on; need is how many bytes from lo
	// the frame there takes (4 until its length is read).
	buf, base    []byte
	lo, hi, need int
	hello        bool // a hello was handed on
	// short: the last read returned fewer bytes than it asked for (and
	// was not cut short by descriptors), so it emptied the socket;
	// skipRead: wait for the poller before reading.
	short, skipRead bool
	// wait, when set, is what the reader waits for outside the socket's
	// read (waitOn): room in the inbox for pending, or a verdict on a hello.
	wait     <-chan struct{}
	pending  Incoming
	awaited  bool // pending is an awaited decision
	over     bool // reading is over; err says why (nil: a bye)
	err      error
	readErr  error // a read's error, for once the bytes that came with it are handed on
	fd       int
	unix     bool // a Unix socket (see readSocket)
	msg      syscall.Msghdr
	iov      syscall.Iovec
	readFD   func([]byte) (int, error) // readSocket and live.Read, bound once
	readConn func([]byte) (int, error)
	pump     func(fd uintptr) bool
}

// run hands on the frames read, reading more with read, until reading is
// over or waits for something else than bytes (true), or the socket is
// empty (false).
func (fr *frameReader) run(read func([]byte) (int, error)) bool {
	for {
		if fr.handOn() {
			return true
		}
		switch {
		case fr.readErr != nil: // after the frames that came with it
			fr.stop(fr.readErr)
			return true
		case fr.c.closed.Load():
			// Close waits for the socket's read to return: a client that
			// never lets the socket empty must not hold it open.
			fr.stop(net.ErrClosed)
			return true
		case fr.skipRead:
			fr.skipRead = false
			return false
		}
		n, err := read(fr.space())
		fr.hi += n
		switch {
		case err == errWouldBlock:
			return false
		case err != nil:
			fr.readErr = err
		}
	}
}

// readSocket reads from the descriptor. A Unix socket is read with recvmsg
// and no room for ancillary data: a read stops after bytes that came with
// file descriptors (which the kernel then closes), whatever follows them,
// and MSG_CTRUNC tells it did, so that such a short read is not taken for
// one that emptied the socket.
func (fr *frameReader) readSocket(p []byte) (int, error) {
	for {
		var n int
		var err error
		ctrunc := false
		if fr.unix {
			fr.iov.Base = &p[0]
			fr.iov.SetLen(len(p))
			fr.msg.Flags = 0
			r, _, e := syscall.Syscall(syscall.SYS_RECVMSG, uintptr(fr.fd), uintptr(unsafe.Pointer(&fr.msg)), 0)
			n, ctrunc = int(r), fr.msg.Flags&syscall.MSG_CTRUNC != 0
			if e != 0 {
				n, err = -1, e
			}
		} else {
			n, err = syscall.Read(fr.fd, p)
		}
		fr.c.reads.Add(1)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, errWouldBlock
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n <= 0:
			return 0, io.EOF
		}
		fr.live.heard()
		fr.short = n < len(p) && !ctrunc
		return n, nil
	}
}

// stop ends reading with err (nil: after a bye).
func (fr *frameReader) stop(err error) {
	if err == io.EOF && fr.hi > fr.lo {
		err = io.ErrUnexpectedEOF // within a frame
	}
	fr.over, fr.err = true, err
}

// handOn hands on every whole frame read. It reports true when reading is
// over or must wait (fr.wait).
func (fr *frameReader) handOn() bool {
	c := fr.c
	for fr.hi-fr.lo >= 4 {
		n := int(binary.BigEndian.Uint32(fr.buf[fr.lo:]))
		if n > c.opt.MaxHelloFrame && fr.hello && !c.Admitted() {
			// Until the hello's verdict, its limit is MaxHelloFrame.
			fr.wait = c.admitted
			return true
		}
		limit, when := c.opt.MaxFrame, ""
		if !c.Admitted() {
			limit, when = c.opt.MaxHelloFrame, " before hello"
		}
		if err := checkLength(n, limit, when); err != nil {
			if pe := err.(*ProtocolError); !pe.Fatal { // an empty frame
				fr.lo += 4
				c.Send(NewError(pe))
				continue
			}
			fr.stop(err)
			return true
		}
		if fr.hi-fr.lo < 4+n {
			fr.need = 4 + n
			return false
		}
		frame := fr.buf[fr.lo+4 : fr.lo+4+n]
		fr.lo += 4 + n
		if fr.deliver(frame) {
			return true
		}
	}
	fr.need = 4
	return false
}

// deliver decodes a frame (its message holds none of its bytes) and hands
// the message on. It reports true when reading is over or must wait.
func (fr *frameReader) deliver(frame []byte) bool {
	c := fr.c
	msg, err := c.codec.Decode(frame)
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			c.Send(NewError(pe))
		} else {
			slog.Warn("decode", "remote", c.nc.RemoteAddr(), "err", err)
		}
		return false
	}
	switch m := msg.(type) {
	case *Ping:
		c.Send(Pong{Type: "pong", ID: m.ID})
		return false
	case *Pong: // an answer to our ping: it has done its work by arriving
		return false
	case *Hello:
		fr.hello = true
	}
	awaited := false
	if d, ok := msg.(*Decision); ok && d.Tool != "" && d.Tick >= 0 && d.Tick < 1<<53 && d.Tick == math.Trunc(d.Tick) {
		awaited = c.awaiting.CompareAndSwap(int64(d.Tick)+1, 0)
	}
	in := Incoming{Conn: c, Msg: msg}
	if wait := c.inbox.offer(in, awaited); wait != nil {
		fr.wait, fr.pending, fr.awaited = wait, in, awaited
		return true
	}
	// Awaited, and the last bytes of a read that emptied the socket.
	fr.skipRead = awaited && fr.short && fr.lo == fr.hi
	return fr.handedOn(msg)
}

// handedOn ends reading after a bye, which the inbox has (and then the
// connection closes).
func (fr *frameReader) handedOn(msg any) bool {
	if _, bye := msg.(*Bye); bye {
		fr.stop(nil)
		return true
	}
	return false
}

// waitOn waits for what the reader waits for, if anything, and hands on the
// message that waited for room.
func (fr *frameReader) waitOn() {
	c := fr.c
	for fr.wait != nil {
		select {
		case <-fr.wait:
		case <-c.done:
			fr.wait = nil
			fr.stop(net.ErrClosed)
			return
		}
		fr.wait = nil
		if fr.pending.Conn == nil {
			continue
		}
		if fr.wait = c.inbox.offer(fr.pending, fr.awaited); fr.wait == nil {
			msg := fr.pending.Msg
			fr.pending = Incoming{}
			fr.handedOn(msg)
		}
	}
}

// space returns where the next read goes: after the bytes read, moved to the
// buffer's start when the frame they begin would not fit after them, and in
// a buffer grown (doubling, never past the frame) when it does not fit at
// all, so that memory follows the bytes that arrived.
func (fr *frameReader) space() []byte {
	if fr.lo == fr.hi {
		fr.lo, fr.hi = 0, 0
		fr.buf = fr.base
	}
	if fr.lo > 0 && fr.lo+fr.need > len(fr.buf) {
		fr.hi = copy(fr.buf, fr.buf[fr.lo:fr.hi])
		fr.lo = 0
	}
	if fr.hi == len(fr.buf) {
		b := make([]byte, min(fr.need, 2*len(fr.buf)))
		copy(b, fr.buf[:fr.hi])
		fr.buf = b
	}
	return fr.buf[fr.hi:]
}

// liveReader checks that the client is alive: when nothing has arrived for
// PingInterval it sends the client a ping, and when nothing arrives for
// PongWait after that, it gives up.
//
// The read deadline is not moved after every read (that cost a timer update
// per message): a read notes the time, and a deadline that expires less than
// PingInterval after the last read is moved to PingInterval after it.
type liveReader struct {
	c      *Conn
	pinged bool
	pings  uint64    // the id of the last ping sent
	last   time.Time // when something was last read (or the reader started)
}

// Read reads from the connection (not a socket), as long as the client is
// alive.
func (r *liveReader) Read(p []byte) (int, error) {
	for {
		n, err := r.c.nc.Read(p)
		if n > 0 || err == nil {
			r.heard()
			return n, err
		}
		if err = r.expired(err); err != nil {
			return n, err
		}
	}
}

// heard notes that bytes arrived.
func (r *liveReader) heard() {
	r.last = time.Now()
	if r.pinged { // the deadline was the ping's answer's
		r.pinged = false
		r.c.nc.SetReadDeadline(r.last.Add(r.c.opt.PingInterval))
	}
}

// expired handles a read's error: a deadline that passed moves, with a ping
// sent if the client has been silent for PingInterval (nil: read again); any
// other error, or no answer to a ping, is returned.
func (r *liveReader) expired(err error) error {
	c := r.c
	var ne net.Error
	switch {
	case !errors.As(err, &ne) || !ne.Timeout():
		return err
	case r.pinged:
		return fmt.Errorf("no answer to a ping within %v: %w", c.opt.PongWait, err)
	}
	if due := r.last.Add(c.opt.PingInterval); time.Now().Before(due) {
		c.nc.SetReadDeadline(due) // the client spoke since the deadline was set
		return nil
	}
	r.pinged = true
	r.pings++
	id, _ := c.codec.Marshal(r.pings)
	c.Send(Ping{Type: "ping", ID: id})
	c.nc.SetReadDeadline(time.Now().Add(c.opt.PongWait))
	return nil
}
