// Package ipc owns Arena's wire: length-prefixed frames, the hardened CBOR
// codec, the protocol's messages and error codes (see docs/protocol.md). It
// knows nothing about the world beyond the observation type it carries.
package ipc

import (
	"encoding/binary"
	"fmt"
	"io"
)

// DefaultMaxFrame is the largest frame accepted unless a server says otherwise.
const DefaultMaxFrame = 1 << 20

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
// BAD_MESSAGE. buf is reused when it is large enough. A stream that ends inside
// a frame returns io.ErrUnexpectedEOF; one that ends between frames, io.EOF.
func ReadFrame(r io.Reader, max int, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if max <= 0 {
		max = DefaultMaxFrame
	}
	if uint64(n) > uint64(max) {
		return nil, &ProtocolError{Code: CodeFrameTooLarge, Fatal: true,
			Message: fmt.Sprintf("frame of %d bytes is larger than the limit of %d bytes", n, max)}
	}
	if n == 0 {
		return nil, &ProtocolError{Code: CodeBadMessage, Message: "empty frame: a frame holds one CBOR map"}
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
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
