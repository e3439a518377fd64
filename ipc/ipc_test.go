package ipc_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/ipc"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

func codec(t testing.TB) *ipc.Codec {
	t.Helper()
	c, err := ipc.NewCodec(ipc.Limits{})
	require.NoError(t, err)
	return c
}

func requireProtocolError(t *testing.T, err error, code string, fatal bool, msg string) {
	t.Helper()
	var pe *ipc.ProtocolError
	require.True(t, errors.As(err, &pe), "want a protocol error, got %v", err)
	require.Equal(t, code, pe.Code)
	require.Equal(t, fatal, pe.Fatal)
	require.Contains(t, pe.Message, msg)
}

func TestFramesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, ipc.WriteFrame(&buf, []byte("one")))
	require.NoError(t, ipc.WriteFrame(&buf, []byte("second frame")))
	require.Equal(t, []byte{0, 0, 0, 3, 'o', 'n', 'e'}, buf.Bytes()[:7])
	f, err := ipc.ReadFrame(&buf, 64, nil)
	require.NoError(t, err)
	require.Equal(t, "one", string(f))
	f, err = ipc.ReadFrame(&buf, 64, f)
	require.NoError(t, err)
	require.Equal(t, "second frame", string(f))
	_, err = ipc.ReadFrame(&buf, 64, nil)
	require.ErrorIs(t, err, io.EOF)
}

func TestOversizedFrameIsRefusedBeforeAllocating(t *testing.T) {
	hdr := binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ipc.ReadFrame(bytes.NewReader(hdr), ipc.DefaultMaxFrame, nil)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "only the error is allocated, never the 4 GiB body")
	requireProtocolError(t, err, ipc.CodeFrameTooLarge, true, "4294967295 bytes is larger than the limit of 1048576")
}

func TestTruncatedAndEmptyFrames(t *testing.T) {
	_, err := ipc.ReadFrame(bytes.NewReader([]byte{0, 0, 0, 10, 1, 2, 3}), 64, nil)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = ipc.ReadFrame(bytes.NewReader([]byte{0, 0}), 64, nil)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = ipc.ReadFrame(bytes.NewReader([]byte{0, 0, 0, 0}), 64, nil)
	requireProtocolError(t, err, ipc.CodeBadMessage, false, "empty frame")
}

func TestDecodeClientMessages(t *testing.T) {
	c := codec(t)
	enc := func(v any) []byte {
		b, err := cbor.Marshal(v)
		require.NoError(t, err)
		return b
	}
	m, err := c.Decode(enc(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001", "token": "s3cret"}))
	require.NoError(t, err)
	require.Equal(t, &ipc.Hello{Type: "hello", Protocol: 1, Role: "agent", Agent: "agent_001", Token: "s3cret"}, m)

	m, err = c.Decode(enc(map[string]any{"type": "decision", "tick": 7, "tool": "move_to",
		"params": map[string]any{"target": []any{1.5, 0, -2}, "speed": 1}, "reasoning": "go"}))
	require.NoError(t, err)
	d := m.(*ipc.Decision)
	require.Equal(t, 7.0, d.Tick)
	require.Equal(t, "move_to", d.Tool)
	require.Equal(t, []any{1.5, uint64(0), int64(-2)}, d.Params["target"])

	m, err = c.Decode(enc(map[string]any{"type": "query", "id": "q1", "tool": "query_world", "params": map[string]any{"radius": 5}}))
	require.NoError(t, err)
	require.Equal(t, "query_world", m.(*ipc.Query).Tool)

	for _, typ := range []string{"ping", "bye"} {
		_, err = c.Decode(enc(map[string]any{"type": typ}))
		require.NoError(t, err, typ)
	}
}

func TestMalformedMessagesAreBadMessage(t *testing.T) {
	c := codec(t)
	mustHex := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		require.NoError(t, err)
		return b
	}
	deep := []byte{0xa2, 0x64, 't', 'y', 'p', 'e', 0x64, 'p', 'i', 'n', 'g', 0x62, 'i', 'd'}
	for i := 0; i < 40; i++ {
		deep = append(deep, 0x81) // [[[[...
	}
	deep = append(deep, 0x01)
	cases := []struct {
		name  string
		frame []byte
		msg   string
	}{
		{"not CBOR", []byte("hello there"), ""},
		{"truncated CBOR", mustHex("a2 64 74797065"), "unexpected EOF"},
		{"not a map", mustHex("83 01 02 03"), "must be a CBOR map"},
		{"map without type", mustHex("a1 62 6964 01"), `no "type"`},
		{"type not text", mustHex("a1 64 74797065 01"), `"type" must be a text string`},
		{"unknown type", mustHex("a1 64 74797065 63 666f6f"), `unknown message type "foo"`},
		{"duplicate keys", mustHex("a2 64 74797065 64 70696e67 64 74797065 64 70696e67"), "duplicate map key"},
		{"indefinite length", mustHex("bf 64 74797065 64 70696e67 ff"), "indefinite-length"},
		{"tag", mustHex("a1 64 74797065 c1 64 70696e67"), "tag"},
		{"deep nesting", deep, "exceeded max nested level"},
		{"unknown field", mustHex("a2 64 74797065 64 70696e67 63 666f6f 01"), "unknown field"},
		{"invalid UTF-8", mustHex("a1 64 74797065 62 ff fe"), "UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode(tc.frame)
			requireProtocolError(t, err, ipc.CodeBadMessage, false, tc.msg)
		})
	}
	// Wrong field type, named.
	b, err := cbor.Marshal(map[string]any{"type": "decision", "tick": "seven", "tool": "idle"})
	require.NoError(t, err)
	_, err = c.Decode(b)
	requireProtocolError(t, err, ipc.CodeBadMessage, false, `field "tick" must be a number, got CBOR UTF-8 text string`)
}

func TestEncodingIsCoreDeterministic(t *testing.T) {
	c := codec(t)
	b, err := c.Marshal(ipc.ErrorMsg{Type: "error", Code: ipc.CodeBadMessage, Message: "x", Fatal: false})
	require.NoError(t, err)
	// Core Deterministic: keys sorted by their encoded bytes, so the length byte
	// puts shorter keys first: code, type, fatal, message.
	require.Equal(t, "a4"+"64636f6465"+"6b4241445f4d455353414745"+"6474797065"+"656572726f72"+"65666174616c"+"f4"+"676d657373616765"+"6178",
		hex.EncodeToString(b))
}

func TestObservationsUseTheProtocolFieldNames(t *testing.T) {
	c := codec(t)
	w := testutil.World(t, testutil.Config())
	b, err := c.Marshal(ipc.ObservationMsg{Type: "observation", Tick: 0, Observation: w.Observe(w.Agent("a1"))})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, cbor.Unmarshal(b, &m))
	obs := m["observation"].(map[any]any)
	for _, k := range []string{"tick", "agent_id", "position", "velocity", "health", "max_health", "alive", "inventory",
		"nearby_resources", "nearby_hazards", "nearby_stations", "nearby_agents", "available_recipes", "messages",
		"last_action_result", "objective", "current_progress", "score", "agent_ids"} {
		require.Contains(t, obs, k)
	}
	// Encoding twice gives the same bytes.
	b2, err := c.Marshal(ipc.ObservationMsg{Type: "observation", Tick: 0, Observation: w.Observe(w.Agent("a1"))})
	require.NoError(t, err)
	require.Equal(t, b, b2)
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 'a', 'b', 'c'}, false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, false)
	f.Add([]byte{0, 0, 0, 0}, true)
	f.Add([]byte{0, 0, 1}, true)
	f.Fuzz(func(t *testing.T, b []byte, oneByte bool) {
		var r io.Reader = bytes.NewReader(b)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		// The same stream through a bufio.Reader (whose lengths are
		// peeked, not read) gives the same frames and the same errors.
		var br io.Reader = bytes.NewReader(b)
		if oneByte {
			br = iotest.OneByteReader(br)
		}
		br = bufio.NewReaderSize(br, 16)
		off := 0
		for {
			frame, err := ipc.ReadFrame(r, 1024, nil)
			bframe, berr := ipc.ReadFrame(br, 1024, nil)
			if !bytes.Equal(frame, bframe) || fmt.Sprint(err) != fmt.Sprint(berr) || errors.Is(err, io.EOF) != errors.Is(berr, io.EOF) {
				t.Fatalf("at %d: %x, %v read plainly; %x, %v through bufio", off, frame, err, bframe, berr)
			}
			if err != nil {
				var pe *ipc.ProtocolError
				if errors.As(err, &pe) && !pe.Fatal {
					off += 4
					continue // an empty frame: the stream goes on
				}
				return
			}
			if len(frame) == 0 || len(frame) > 1024 {
				t.Fatalf("frame of %d bytes", len(frame))
			}
			if !bytes.Equal(frame, b[off+4:off+4+len(frame)]) {
				t.Fatalf("frame at %d: got %x", off, frame)
			}
			off += 4 + len(frame)
		}
	})
}

// A body is read into a buffer that grows as its bytes arrive, whatever the
// reads' sizes; a buffer large enough is reused; a stream that ends inside
// a frame is io.ErrUnexpectedEOF.
func TestReadFrameGrowsItsBufferAsBytesArrive(t *testing.T) {
	for _, n := range []int{1, 100, 16<<10 - 1, 16 << 10, 16<<10 + 1, 100_000, 1 << 20} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(i * 7)
		}
		wire := ipc.AppendFrame(nil, body)
		for name, r := range map[string]io.Reader{
			"whole": bytes.NewReader(wire), "one byte": iotest.OneByteReader(bytes.NewReader(wire)),
			"halves": iotest.HalfReader(bytes.NewReader(wire)),
		} {
			got, err := ipc.ReadFrame(r, 1<<20, nil)
			require.NoError(t, err, "%d bytes, %s", n, name)
			require.Equal(t, body, got, "%d bytes, %s", n, name)
			require.LessOrEqual(t, cap(got), max(2*n, 16<<10), "%d bytes, %s", n, name)
		}
		buf := make([]byte, n+5)
		got, err := ipc.ReadFrame(bytes.NewReader(wire), 1<<20, buf)
		require.NoError(t, err)
		require.Equal(t, body, got)
		require.Same(t, &buf[0], &got[0], "a buffer large enough is reused")

		_, err = ipc.ReadFrame(bytes.NewReader(wire[:len(wire)-1]), 1<<20, nil)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%d bytes", n)
	}
	// A length alone costs the first chunk (16 KiB), not the 1 MiB declared.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ipc.ReadFrame(bytes.NewReader(binary.BigEndian.AppendUint32(nil, 1<<20)), 1<<20, nil)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Nil(t, got)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10))
}

func FuzzDecode(f *testing.F) {
	c := codec(f)
	for _, v := range []any{
		map[string]any{"type": "hello", "protocol": 1, "role": "agent"},
		map[string]any{"type": "decision", "tick": 3, "tool": "move_to", "params": map[string]any{"target": []any{1, 2, 3}}},
		map[string]any{"type": "query", "id": 1, "tool": "query_world"},
		map[string]any{"type": "ping", "id": "x"},
	} {
		b, err := cbor.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := c.Decode(b)
		if err != nil {
			var pe *ipc.ProtocolError
			if !errors.As(err, &pe) || pe.Code != ipc.CodeBadMessage || pe.Fatal || pe.Message == "" {
				t.Fatalf("want a non-fatal BAD_MESSAGE with a message, got %#v", err)
			}
			return
		}
		if m == nil {
			t.Fatal("no message and no error")
		}
	})
}

// A frame read through a bufio.Reader into a buffer large enough allocates
// nothing: its length is peeked (read into an array, it escaped to the
// heap through io.ReadFull, one allocation per frame on every connection).
func TestReadFrameFromBufioAllocatesNothing(t *testing.T) {
	frame := ipc.AppendFrame(nil, []byte("\xa1\x64type\x64idle"))
	stream := bytes.Repeat(frame, 200)
	src := bytes.NewReader(stream)
	br := bufio.NewReader(src)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		f, err := ipc.ReadFrame(br, 1024, buf)
		if err != nil || !bytes.Equal(f, frame[4:]) {
			t.Fatalf("read %x, %v", f, err)
		}
	})
	require.Zero(t, allocs)
}
