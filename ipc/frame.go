// Package ipc owns Arena's wire: length-prefixed frames, the hardened CBOR
// codec, the protocol's messages and error codes (see docs/protocol.md). It
// knows nothing about the world beyond the observation type it carries.
package ipc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// DefaultMaxFrame is the largest frame accepted unless a server says otherwise.
const DefaultMaxFrame = 1 << 20

// DefaultMaxHelloFrame is the largest frame accepted from a connection the
// server has not admitted yet (before its hello is accepted).
const DefaultMaxHelloFrame = 4 << 10

// Protocol error codes.
const (
	CodeFrameTooLarge       = "FRAME_TOO_LARGE"
	CodeBadMessage          = "BAD_MESSAGE"
	CodeUnsupportedProtocol = "UNSUPPORTED_PROTOCOL"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeNoSlot              = "NO_SLOT"
	CodeSlotTaken           = "SLOT_TAKEN"
	CodeNotReady            = "NOT_READY"
	CodeUnknownTick         = "UNKNOWN_TICK"
	CodeDuplicateDecision   = "DUPLICATE_DECISION"
	CodeSlowConsumer        = "SLOW_CONSUMER"
	CodeServerBusy          = "SERVER_BUSY"
	CodeServerError         = "SERVER_ERROR"
)

// ProtocolError is an error the server answers with an error message. Fatal
// errors are followed by closing the connection.
type ProtocolError struct {
	Code    string
	Message string
	Fatal   bool
}

func (e *ProtocolError) Error() string { return e.Code + ": " + e.Message }

// ReadFrame reads one frame: a 4-byte big-endian length N, then N bytes. The
// length is checked against max before anything is allocated; a frame over max
// is a fatal FRAME_TOO_LARGE and its body is not read. An empty frame is a
// BAD_MESSAGE. buf is reused when it is large enough; otherwise the body is
// read into a buffer that grows as its bytes arrive, so a large length costs
// memory only once its bytes have been sent. A stream that ends inside a frame
// returns io.ErrUnexpectedEOF; one that ends between frames, io.EOF.
func ReadFrame(r io.Reader, max int, buf []byte) ([]byte, error) {
	n, err := readLength(r)
	if err != nil {
		return nil, err
	}
	if err := checkLength(n, max, ""); err != nil {
		return nil, err
	}
	return readBody(r, n, buf)
}

// readLength reads a frame's 4-byte length. From a bufio.Reader (what the
// server and the clients read through) it peeks: the 4 bytes read into an
// array would escape to the heap through io.ReadFull, an allocation per
// frame.
func readLength(r io.Reader) (int, error) {
	if br, ok := r.(*bufio.Reader); ok {
		b, err := br.Peek(4)
		if len(b) == 4 {
			br.Discard(4)
			return int(binary.BigEndian.Uint32(b)), nil
		}
		// Fewer than 4 bytes before an error, which io.ReadFull reports
		// so: io.EOF only when nothing came.
		br.Discard(len(b))
		if len(b) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint32(hdr[:])), nil
}

// checkLength refuses a frame of n bytes over max (FRAME_TOO_LARGE, fatal;
// when says under what condition the limit applies, as " before hello") or
// empty (BAD_MESSAGE).
func checkLength(n, max int, when string) error {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	if n > max {
		return &ProtocolError{Code: CodeFrameTooLarge, Fatal: true,
			Message: fmt.Sprintf("frame of %d bytes is larger than the limit of %d bytes%s", n, max, when)}
	}
	if n == 0 {
		return &ProtocolError{Code: CodeBadMessage, Message: "empty frame: a frame holds one CBOR map"}
	}
	return nil
}

// firstChunk is the most readBody allocates before a frame's bytes arrive; it
// then doubles its buffer as they fill it.
const firstChunk = 16 << 10

// readBody reads a body of n bytes into buf, which it grows (doubling it) as
// the bytes arrive: it never allocates more than twice what was received,
// firstChunk at least.
func readBody(r io.Reader, n int, buf []byte) ([]byte, error) {
	if cap(buf) < min(n, firstChunk) {
		buf = make([]byte, 0, min(n, firstChunk))
	}
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n, 2*cap(buf))-len(buf))
		}
		m, err := r.Read(buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// AppendFrame appends the frame of payload (length header, then payload) to dst.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes payload as one frame, in a single Write.
func WriteFrame(w io.Writer, payload []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, 4+len(payload)), payload))
	return err
}
