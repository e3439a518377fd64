package server_test

// Malformed traffic over a real Unix socket to a real lockstep server: each
// case gets the documented error, the session goes on after a non-fatal one,
// and the well-behaved agents playing alongside lose nothing (an observation
// for every tick, every decision applied, results at the end).

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arena-sim/arena/ipc"
	"github.com/arena-sim/arena/server"
	"github.com/arena-sim/arena/world"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// hexCBOR is CBOR written by hand, as hex with spaces for reading.
func hexCBOR(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// Hand-written CBOR pieces.
const (
	cborTypePing     = "64 74797065 64 70696e67"               // "type": "ping"
	cborTypeDecision = "64 74797065 68 6465636973696f6e"       // "type": "decision"
	cborToolIdle     = "64 746f6f6c 64 69646c65"               // "tool": "idle"
	cborTick         = "64 7469636b"                           // "tick"
	cborParams       = "66 706172616d73"                       // "params"
	cborID           = "62 6964"                               // "id"
	cborDupA         = "a2 6161 01 6161 02"                    // {"a": 1, "a": 2}
	cborPing0        = "a2 64 74797065 64 70696e67 62 6964 00" // {"type": "ping", "id": 0}
)

// concat concatenates byte slices.
func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// clientCBOR is v as a client's CBOR library encodes it.
func clientCBOR(v any) []byte {
	b, err := cbor.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// wire is payload as one frame on the wire, length header included.
func wire(payload []byte) []byte { return ipc.AppendFrame(nil, payload) }

// lengthHeader is a bare length header announcing n bytes.
func lengthHeader(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// nestedArrays is n nested one-element arrays around 1: [[[...1...]]].
func nestedArrays(n int) []byte { return append(bytes.Repeat([]byte{0x81}, n), 0x01) }

// decisionWithParams is a decision {type, tick, tool: "idle", params} whose
// params are raw CBOR.
func decisionWithParams(tick int, params []byte) []byte {
	return concat(hexCBOR("a4 "+cborTypeDecision+cborTick), clientCBOR(tick), hexCBOR(cborToolIdle+cborParams), params)
}

// pingWithID is a ping whose id is raw CBOR.
func pingWithID(id []byte) []byte { return concat(hexCBOR("a2 "+cborTypePing+cborID), id) }

// writeRaw puts bytes on the wire exactly as they are.
func (c *client) writeRaw(b []byte) {
	c.t.Helper()
	_, err := c.nc.Write(b)
	require.NoError(c.t, err)
}

// expectError requires the next message to be the protocol error code, fatal
// or not, with a message that contains each of want.
func (c *client) expectError(code string, fatal bool, want ...string) {
	c.t.Helper()
	m, _ := c.recv()
	c.requireError(m, code, fatal, want...)
}

func (c *client) requireError(m map[string]any, code string, fatal bool, want ...string) {
	c.t.Helper()
	require.Equal(c.t, "error", m["type"], "%v", m)
	require.Equal(c.t, code, m["code"], "%v", m)
	require.Equal(c.t, fatal, m["fatal"], "%v", m)
	msg, _ := m["message"].(string)
	for _, w := range want {
		require.Contains(c.t, msg, w)
	}
}

// expectClosed requires the server to have closed the connection: nothing
// more to read, and no time-out.
func (c *client) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := ipc.ReadFrame(c.nc, 1<<30, nil)
	require.Error(c.t, err, "a frame after the end: %x", f)
	var ne net.Error
	require.False(c.t, errors.As(err, &ne) && ne.Timeout(), "the server did not close the connection")
}

// pingThrough sends a ping and returns what arrived before its pong. Pings are
// answered by the connection's reader: the pong proves the session is
// served, and that the server has read everything sent before the ping.
func (c *client) pingThrough(id string) []map[string]any {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "id": id})
	var before []map[string]any
	for {
		m, _ := c.recv()
		if m["type"] == "pong" && m["id"] == id {
			return before
		}
		before = append(before, m)
	}
}

// received is one message read, decoded and raw.
type received struct {
	m   map[string]any
	raw []byte
}

// queryBarrier sends a query and returns the messages that arrived before its
// result. The world's goroutine handles a session's messages in order, so the
// result proves that everything sent before it has been handled.
func (c *client) queryBarrier(id string) []received {
	c.t.Helper()
	c.send(map[string]any{"type": "query", "id": id, "tool": "query_inventory"})
	var before []received
	for {
		m, raw := c.recv()
		if m["type"] == "result" && m["id"] == id {
			return before
		}
		before = append(before, received{m, raw})
	}
}

// helloAgent says hello as an agent (slot and token optional) and reads the welcome.
func (c *client) helloAgent(agent, token string) map[string]any {
	c.t.Helper()
	h := map[string]any{"type": "hello", "protocol": 1, "role": "agent"}
	if agent != "" {
		h["agent"] = agent
	}
	if token != "" {
		h["token"] = token
	}
	c.send(h)
	m, _ := c.recv()
	require.Equal(c.t, "welcome", m["type"], "%v", m)
	return m
}

// handAgent is an agent the test plays by hand. It checks that nothing owed to
// it is lost: each decision it sends comes back, applied, as the
// last_action_result of its next observation.
type handAgent struct {
	*client
	t       *testing.T
	id      string
	decided int    // the tick of the last decision sent, -1 before
	tool    string // that decision's tool
	seen    []int  // the ticks of the observations received
}

func newHandAgent(t *testing.T, addr, agent, token string) *handAgent {
	t.Helper()
	p := &handAgent{t: t, id: agent, decided: -1}
	p.rejoin(addr, token)
	return p
}

// rejoin gives the agent a new connection to its slot.
func (p *handAgent) rejoin(addr, token string) {
	c := dial(p.t, addr)
	require.Equal(c.t, p.id, c.helloAgent(p.id, token)["agent_id"])
	p.client = c
}

// next reads the agent's next observation and checks it reports the
// agent's last decision as applied.
func (p *handAgent) next() (int, world.Observation) {
	p.t.Helper()
	tick, obs := p.observe()
	p.seen = append(p.seen, tick)
	if p.decided >= 0 {
		r := obs.LastActionResult
		require.NotNil(p.t, r, "%s, tick %d: the decision for tick %d has no result", p.id, tick, p.decided)
		require.Equal(p.t, world.ActionResult{Tool: p.tool, Success: true, Tick: p.decided, Data: r.Data}, *r,
			"%s, tick %d: last_action_result is not that of the decision for tick %d (%s)", p.id, tick, p.decided, p.tool)
	}
	return tick, obs
}

// quietTool is a decision that changes nothing in the world, so that every
// last_action_result is the decision's own (a move could fail later and
// replace it), and that differs from one tick to the next.
func quietTool(tick int) string {
	if tick%2 == 0 {
		return "idle"
	}
	return "query_inventory"
}

func otherQuietTool(tool string) string {
	if tool == "idle" {
		return "query_inventory"
	}
	return "idle"
}

func (p *handAgent) decide(tick int) { p.decideWith(tick, quietTool(tick)) }

func (p *handAgent) decideWith(tick int, tool string) {
	p.send(map[string]any{"type": "decision", "tick": tick, "tool": tool})
	p.decided, p.tool = tick, tool
}

// play requires the next observation to be that of tick, and answers it.
func (p *handAgent) play(tick int) {
	p.t.Helper()
	got, _ := p.next()
	require.Equal(p.t, tick, got, "%s", p.id)
	p.decide(tick)
}

// end requires the next message to be the end of an episode of ticks ticks,
// with results for every agent.
func (p *handAgent) end(ticks int, agents ...string) {
	p.t.Helper()
	m, raw := p.recv()
	require.Equal(p.t, "episode_end", m["type"], "%s: %v", p.id, m)
	var end struct {
		Tick    int    `cbor:"tick"`
		Reason  string `cbor:"reason"`
		Results *struct {
			Ticks  int `cbor:"ticks"`
			Agents []struct {
				ID string `cbor:"id"`
			} `cbor:"agents"`
		} `cbor:"results"`
	}
	require.NoError(p.t, cbor.Unmarshal(raw, &end))
	require.Equal(p.t, ticks, end.Tick)
	require.Equal(p.t, "time_limit", end.Reason)
	require.NotNil(p.t, end.Results, "episode_end carries the results")
	require.Equal(p.t, ticks, end.Results.Ticks)
	var ids []string
	for _, a := range end.Results.Agents {
		ids = append(ids, a.ID)
	}
	require.Equal(p.t, agents, ids)
}

// requireEveryTick checks that the agent saw the observation of every tick
// from 0 to ticks-1, in order.
func (p *handAgent) requireEveryTick(ticks int) {
	p.t.Helper()
	want := make([]int, ticks)
	for i := range want {
		want[i] = i
	}
	require.Equal(p.t, want, p.seen, "%s missed an observation", p.id)
}

// serverLog is a slog.Handler that passes a server's log records on as
// "message agent" strings ("agent disconnected agent_002"). The server logs
// "agent disconnected" on its own goroutine as it handles the connection's
// end, so the record proves that the slot is free and that lockstep no
// longer waits for it.
type serverLog chan string

func newServerLog() serverLog { return make(serverLog, 256) }

func (l serverLog) logger() *slog.Logger                     { return slog.New(l) }
func (l serverLog) Enabled(context.Context, slog.Level) bool { return true }
func (l serverLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l serverLog) WithGroup(string) slog.Handler            { return l }
func (l serverLog) Handle(_ context.Context, r slog.Record) error {
	event := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "agent" {
			event += " " + a.Value.String()
		}
		return true
	})
	select {
	case l <- event:
	default: // never hold the server up
	}
	return nil
}

// wait reads records up to event.
func (l serverLog) wait(t *testing.T, event string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-l:
			if e == event {
				return
			}
		case <-timeout:
			t.Fatalf("the server never logged %q", event)
		}
	}
}

// malformed is one bad message sent by an agent in the middle of an
// episode, with the error it must get.
type malformed struct {
	name string
	sent func(tick int) []byte // the bytes written, length headers included
	code string
	want func(tick int) []string // parts of the error message
	// decideFirst sends the agent's valid decision before the bad message
	// (to show that, of two decisions, the first stands).
	decideFirst bool
}

func sameBytes(b []byte) func(int) []byte { return func(int) []byte { return b } }

func mentions(parts ...string) func(int) []string { return func(int) []string { return parts } }

// frameOfHex is hand-written CBOR as one frame.
func frameOfHex(s string) func(int) []byte { return sameBytes(wire(hexCBOR(s))) }

func malformedCases() []malformed {
	itoa := strconv.Itoa
	bad := ipc.CodeBadMessage
	many := map[string]any{}
	for i := 0; i < 1025; i++ {
		many["k"+itoa(i)] = i
	}
	return []malformed{
		// Framing.
		{name: "an empty frame", sent: sameBytes(lengthHeader(0)), code: bad,
			want: mentions("empty frame: a frame holds one CBOR map")},
		// Bytes that are not CBOR, or not one CBOR item.
		{name: "text, not CBOR", sent: sameBytes(wire([]byte("hello there"))), code: bad,
			want: mentions("2 bytes of extraneous data starting at index 9")},
		{name: "a lone break code", sent: frameOfHex("ff"), code: bad, want: mentions(`unexpected "break" code`)},
		{name: "reserved additional information", sent: frameOfHex("1c"), code: bad,
			want: mentions("invalid additional information 28 for type positive integer")},
		{name: "a CBOR item cut short inside a whole frame", sent: frameOfHex("a2 64 74797065"), code: bad,
			want: mentions("unexpected EOF")},
		{name: "a map and one more byte", sent: frameOfHex("a1 " + cborTypePing + " 00"), code: bad,
			want: mentions("1 bytes of extraneous data starting at index 11")},
		// CBOR that is not a map, or a map without a (text) type.
		{name: "an array", sent: frameOfHex("83 01 02 03"), code: bad,
			want: mentions("a message must be a CBOR map with text keys, got CBOR array")},
		{name: "a text string", sent: frameOfHex("62 6869"), code: bad,
			want: mentions("a message must be a CBOR map with text keys, got CBOR UTF-8 text string")},
		{name: "an integer", sent: frameOfHex("01"), code: bad,
			want: mentions("a message must be a CBOR map with text keys, got CBOR positive integer")},
		{name: "a map with an integer key", sent: frameOfHex("a1 01 02"), code: bad,
			want: mentions("cannot unmarshal positive integer into Go value of type string")},
		{name: "a map without type", sent: frameOfHex("a1 " + cborID + " 01"), code: bad,
			want: mentions(`message has no "type"`)},
		{name: "type is not text", sent: frameOfHex("a1 64 74797065 01"), code: bad,
			want: mentions(`"type" must be a text string`, "positive integer")},
		{name: "type is unknown (names are case-sensitive)", sent: sameBytes(wire(clientCBOR(map[string]any{"type": "Ping"}))), code: bad,
			want: mentions(`unknown message type "Ping" (hello, decision, query, ping, pong, bye, control, observation_arrays)`)},
		{name: "an unknown field", sent: frameOfHex("a2 " + cborTypePing + " 63 666f6f 01"), code: bad,
			want: mentions("unknown field", "index 1")},
		// Fields of the wrong type.
		{name: "tick is text", code: bad,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "decision", "tick": "seven", "tool": "idle"}))),
			want: mentions(`field "tick" must be`, "got CBOR UTF-8 text string")},
		{name: "tool is a byte string", code: bad,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": []byte("idle")}))
			},
			want: mentions(`field "tool" must be a text string, got CBOR byte string`)},
		{name: "params is an array", code: bad,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": "idle", "params": []int{1}}))
			},
			want: mentions(`field "params" must be a map, got CBOR array`)},
		{name: "reasoning is a number", code: bad,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": "idle", "reasoning": 7}))
			},
			want: mentions(`field "reasoning" must be a text string, got CBOR positive integer`)},
		{name: "hello's protocol is text", code: bad,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "hello", "protocol": "1", "role": "agent"}))),
			want: mentions(`field "protocol" must be`, "got CBOR UTF-8 text string")},
		{name: "a query's tool is a map", code: bad,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "query", "id": 1, "tool": map[string]any{}}))),
			want: mentions(`field "tool" must be a text string, got CBOR map`)},
		// Duplicate keys, indefinite lengths, deep nesting and the other limits.
		{name: "duplicate keys", sent: frameOfHex("a2 " + cborTypePing + cborTypePing), code: bad,
			want: mentions("duplicate map key type")},
		{name: "duplicate keys with different values", sent: frameOfHex("a2 " + cborTypePing + cborTypeDecision), code: bad,
			want: mentions("duplicate map key type")},
		{name: "duplicate keys in a decision's params", code: bad,
			sent: func(tick int) []byte { return wire(decisionWithParams(tick, hexCBOR(cborDupA))) },
			want: mentions("duplicate map key a")},
		{name: "an indefinite-length map", sent: frameOfHex("bf " + cborTypePing + " ff"), code: bad,
			want: mentions("indefinite-length map isn't allowed")},
		{name: "an indefinite-length array", sent: sameBytes(wire(pingWithID(hexCBOR("9f 01 ff")))), code: bad,
			want: mentions("indefinite-length array isn't allowed")},
		{name: "an indefinite-length text string", sent: frameOfHex("a1 64 74797065 7f 62 7069 62 6e67 ff"), code: bad,
			want: mentions("indefinite-length UTF-8 text string isn't allowed")},
		{name: "an indefinite-length byte string", sent: sameBytes(wire(pingWithID(hexCBOR("5f 41 01 ff")))), code: bad,
			want: mentions("indefinite-length byte string isn't allowed")},
		{name: "a ping id 20 arrays deep", sent: sameBytes(wire(pingWithID(nestedArrays(20)))), code: bad,
			want: mentions("exceeded max nested level 16")},
		{name: "a decision's params 20 levels deep", code: bad,
			sent: func(tick int) []byte {
				return wire(decisionWithParams(tick, concat(hexCBOR("a1 6161"), nestedArrays(19))))
			},
			want: mentions("exceeded max nested level 16")},
		{name: "a tag", sent: frameOfHex("a1 64 74797065 c1 64 70696e67"), code: bad,
			want: mentions("CBOR tag isn't allowed")},
		{name: "invalid UTF-8", sent: frameOfHex("a1 64 74797065 62 fffe"), code: bad,
			want: mentions(`"type" must be a text string: invalid UTF-8 string`)},
		{name: "an array of 4097 elements", code: bad,
			sent: sameBytes(wire(pingWithID(concat(hexCBOR("99 1001"), bytes.Repeat([]byte{1}, 4097))))),
			want: mentions("exceeded max number of elements 4096 for CBOR array")},
		{name: "params with 1025 pairs", code: bad,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": "idle", "params": many}))
			},
			want: mentions("exceeded max number of key-value pairs 1024 for CBOR map")},
		// Well-formed messages the session may not send now.
		{name: "a second hello", code: bad,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "hello", "protocol": 1, "role": "agent"}))),
			want: mentions("this session has already said hello")},
		{name: "a decision for a tick not sent yet", code: ipc.CodeUnknownTick,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick + 5, "tool": "idle"}))
			},
			want: func(tick int) []string {
				return []string{"tick " + itoa(tick+5) + " is not the tick of an observation you were sent (the latest is " + itoa(tick) + ")"}
			}},
		{name: "a decision for a negative tick", code: ipc.CodeUnknownTick,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "decision", "tick": -1, "tool": "idle"}))),
			want: mentions("tick -1 is not the tick of an observation you were sent")},
		{name: "a decision for tick 1e300", code: ipc.CodeUnknownTick,
			sent: sameBytes(wire(clientCBOR(map[string]any{"type": "decision", "tick": 1e300, "tool": "idle"}))),
			want: mentions("tick 1e+300 is not a tick number")},
		{name: "a second decision for the tick (the first stands)", code: ipc.CodeDuplicateDecision, decideFirst: true,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": otherQuietTool(quietTool(tick))}))
			},
			want: func(tick int) []string {
				return []string{"a decision for tick " + itoa(tick) + " was already received; the first one stands"}
			}},
		{name: "a decision for the previous tick, already applied", code: ipc.CodeDuplicateDecision,
			sent: func(tick int) []byte {
				return wire(clientCBOR(map[string]any{"type": "decision", "tick": tick - 1, "tool": "idle"}))
			},
			want: func(tick int) []string {
				return []string{"a decision for tick " + itoa(tick-1) + " was already received; the first one stands"}
			}},
	}
}

// An agent sends one malformed or untimely message per tick, in the middle
// of an episode: each gets its non-fatal error, the same session then sends
// a valid decision that is applied, and the other agent loses nothing.
func TestMalformedMessagesMidEpisodeGetTheirErrorAndTheSessionGoesOn(t *testing.T) {
	cases := malformedCases()
	ticks := len(cases) + 1
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 2, Ticks: ticks, DecisionTimeout: 5 * time.Second})
	defer cancel()
	good := newHandAgent(t, addr, "agent_001", "")
	bad := newHandAgent(t, addr, "agent_002", "")
	for tick, tc := range cases {
		good.next()
		got, _ := bad.next()
		require.Equal(t, tick, got)
		// The world waits for both decisions (good's comes last), so nothing
		// but the answer to the bad message can reach bad meanwhile.
		if tc.decideFirst {
			bad.decide(tick)
		}
		bad.writeRaw(tc.sent(tick))
		m, _ := bad.recv()
		require.Equal(t, "error", m["type"], "%s: %v", tc.name, m)
		require.Equal(t, tc.code, m["code"], "%s: %v", tc.name, m)
		require.Equal(t, false, m["fatal"], "%s: %v", tc.name, m)
		for _, w := range tc.want(tick) {
			require.Contains(t, m["message"], w, tc.name)
		}
		if !tc.decideFirst {
			bad.decide(tick)
		}
		good.decide(tick)
	}
	good.play(ticks - 1)
	bad.play(ticks - 1)
	good.end(ticks, "agent_001", "agent_002")
	bad.end(ticks, "agent_001", "agent_002")
	good.requireEveryTick(ticks)
	bad.requireEveryTick(ticks)
}

// Sessions that break the protocol before or instead of hello, that ask for
// a slot they may not have, or whose framing is broken, are answered as
// documented (fatal errors close them) while two agents play; one of them
// breaks its framing twice, is dropped, its agent idles, and it comes back.
func TestBadSessionsDoNotDisturbTheEpisode(t *testing.T) {
	const ticks, maxFrame = 12, 4096
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 2, Ticks: ticks, DecisionTimeout: 5 * time.Second,
		Tokens: map[string]string{"agent_001": "good-token", "agent_002": "bad-token", "spectator": "eye"},
		Conn:   ipc.ConnOptions{MaxFrame: maxFrame}, Log: log.logger()})
	defer cancel()
	good := newHandAgent(t, addr, "agent_001", "good-token")
	bad := newHandAgent(t, addr, "agent_002", "bad-token")

	// Tick 0: a session that never says hello.
	good.next()
	bad.next()
	stray := dial(t, addr)
	stray.writeRaw(wire([]byte("hello there")))
	stray.expectError(ipc.CodeBadMessage, false, "extraneous data")
	stray.writeRaw(wire(hexCBOR("83 01 02 03")))
	stray.expectError(ipc.CodeBadMessage, false, "got CBOR array")
	stray.send(map[string]any{"type": "decision", "tick": 0, "tool": "idle"})
	stray.expectError(ipc.CodeNotReady, false, "send hello as an agent before decisions")
	stray.send(map[string]any{"type": "query", "id": 1, "tool": "query_inventory"})
	stray.expectError(ipc.CodeNotReady, false, "send hello as an agent before queries")
	require.Empty(t, stray.pingThrough("still there"), "after non-fatal errors the session is served")
	stray.writeRaw(wire(pingWithID(nestedArrays(15)))) // 16 levels with the message map: the limit
	m, _ := stray.recv()
	require.Equal(t, "pong", m["type"], "%v", m)
	stray.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "nope"})
	stray.expectError(ipc.CodeUnauthorized, true, "the token does not match an agent slot")
	stray.expectClosed()
	bad.decide(0)
	good.decide(0)

	// Tick 1: sessions that want a slot that is not theirs, and a spectator
	// that tries to play.
	good.next()
	bad.next()
	thief := dial(t, addr)
	thief.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_001", "token": "bad-token"})
	thief.expectError(ipc.CodeUnauthorized, true, "the token does not match an agent slot")
	thief.expectClosed()
	twin := dial(t, addr)
	twin.send(map[string]any{"type": "hello", "protocol": 1, "role": "agent", "token": "good-token"})
	twin.expectError(ipc.CodeSlotTaken, true, `slot "agent_001" already has a connected client`)
	twin.expectClosed()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	spec.send(map[string]any{"type": "decision", "tick": 1, "tool": "idle"})
	spec.send(map[string]any{"type": "query", "id": 1, "tool": "query_inventory"})
	var errs []map[string]any
	for len(errs) < 2 {
		m, _ := spec.recv()
		if m["type"] == "error" {
			errs = append(errs, m)
			continue
		}
		require.Contains(t, []any{"welcome", "episode_start", "frame"}, m["type"], "%v", m)
	}
	spec.requireError(errs[0], ipc.CodeNotReady, false, "send hello as an agent before decisions")
	spec.requireError(errs[1], ipc.CodeNotReady, false, "send hello as an agent before queries")
	spec.nc.Close()
	bad.decide(1)
	good.decide(1)

	// Tick 2: lengths over the cap, before hello; a frame of exactly the cap
	// is fine.
	good.next()
	bad.next()
	for _, n := range []uint32{maxFrame + 1, 1 << 31, 1<<32 - 1} {
		big := dial(t, addr)
		big.writeRaw(concat(lengthHeader(n), []byte{0xa1}))
		big.expectError(ipc.CodeFrameTooLarge, true, "frame of "+strconv.FormatUint(uint64(n), 10)+" bytes is larger than the limit of 4096 bytes")
		big.expectClosed()
	}
	edge := dial(t, addr)
	id := bytes.Repeat([]byte{7}, maxFrame-17)
	ping := pingWithID(concat([]byte{0x59}, binary.BigEndian.AppendUint16(nil, uint16(len(id))), id))
	require.Len(t, ping, maxFrame)
	edge.writeRaw(wire(ping))
	m, _ = edge.recv()
	require.Equal(t, "pong", m["type"])
	require.Equal(t, id, m["id"])
	bad.decide(2)
	good.decide(2)

	// Tick 3: truncated frames. One whose stream then ends: the session is
	// dropped without an answer. Others followed by more traffic: the reader
	// takes the N bytes the header announced, so the next frame's bytes
	// complete the short one; that is one BAD_MESSAGE, after which the stream
	// is in step again if the lengths happen to line up...
	good.next()
	bad.next()
	cut := dial(t, addr)
	cut.writeRaw(concat(lengthHeader(100), hexCBOR(cborPing0)))
	require.NoError(t, cut.nc.(*net.UnixConn).CloseWrite())
	cut.expectClosed()

	glued := dial(t, addr)
	short := hexCBOR(cborPing0) // a whole ping, under a header 19 bytes too long
	swallowed := wire(clientCBOR(map[string]any{"type": "ping", "id": 1}))
	require.Len(t, swallowed, 19)
	glued.writeRaw(concat(lengthHeader(uint32(len(short)+len(swallowed))), short, swallowed))
	glued.expectError(ipc.CodeBadMessage, false, "19 bytes of extraneous data starting at index 15")
	require.Empty(t, glued.pingThrough("2"), "ping 1 was swallowed, unanswered; ping 2 is read as a frame of its own")
	// ... and out of step if they do not: here the last 16 bytes of a ping
	// frame are read as a new frame, whose length 0x0fa26474 is over the cap.
	glued.writeRaw(concat(lengthHeader(uint32(len(short)+3)), short, wire(hexCBOR(cborPing0))))
	glued.expectError(ipc.CodeBadMessage, false, "3 bytes of extraneous data starting at index 15")
	glued.expectError(ipc.CodeFrameTooLarge, true, "frame of 262300788 bytes is larger than the limit of 4096 bytes")
	glued.expectClosed()
	bad.decide(3)
	good.decide(3)

	// Tick 4: the agent playing agent_002 sends a length over the cap: it is
	// dropped, and its agent idles while the episode goes on.
	good.next()
	bad.next()
	bad.writeRaw(lengthHeader(1 << 20))
	bad.expectError(ipc.CodeFrameTooLarge, true, "frame of 1048576 bytes is larger than the limit of 4096 bytes")
	bad.expectClosed()
	log.wait(t, "agent disconnected agent_002")
	good.decide(4)
	good.play(5)

	// Tick 6: it comes back. Its observation shows no result for the ticks
	// it missed (no TIMEOUT: nobody was connected) but its last decision's;
	// the observation it never answered can no longer be answered.
	good.next()
	bad.rejoin(addr, "bad-token")
	got, obs := bad.next()
	require.Equal(t, 6, got)
	require.Equal(t, 3, obs.LastActionResult.Tick)
	bad.send(map[string]any{"type": "decision", "tick": 4, "tool": "idle"})
	bad.expectError(ipc.CodeUnknownTick, false, "the decision for tick 4 arrived after the world moved on; answer the observation of tick 6")
	bad.decide(6)
	good.decide(6)

	// Tick 7: it sends a truncated frame and ends its stream: dropped
	// without an answer; back at tick 9.
	good.next()
	bad.next()
	bad.writeRaw(concat(lengthHeader(64), hexCBOR("a4 64 74797065")))
	require.NoError(t, bad.nc.(*net.UnixConn).CloseWrite())
	bad.expectClosed()
	log.wait(t, "agent disconnected agent_002")
	good.decide(7)
	good.play(8)
	good.next()
	bad.rejoin(addr, "bad-token")
	got, _ = bad.next()
	require.Equal(t, 9, got)
	bad.decide(9)
	good.decide(9)

	for tick := 10; tick < ticks; tick++ {
		good.play(tick)
		bad.play(tick)
	}
	good.end(ticks, "agent_001", "agent_002")
	bad.end(ticks, "agent_001", "agent_002")
	good.requireEveryTick(ticks)
	require.Equal(t, []int{0, 1, 2, 3, 4, 6, 7, 9, 10, 11}, bad.seen)
}

// socketBuffer is how many bytes a Unix socket queues toward a reader that
// does not read (the default send buffer; the kernel counts its own overhead
// against it, so fewer bytes of frames fit).
func socketBuffer() int {
	if b, err := os.ReadFile("/proc/sys/net/core/wmem_default"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return n
		}
	}
	return 1 << 20
}

// Clients that stop reading are disconnected with SLOW_CONSUMER: one whose
// queued messages (pongs) pile up, and an agent whose observations do. The
// other agent loses nothing, and the slow agent comes back.
func TestClientsThatStopReadingAreDisconnected(t *testing.T) {
	const queue, skipped = 4, 2
	// Enough ticks to fill the socket with observations of at least minObs
	// bytes (in practice they are about 2 kB, and a quarter of these ticks
	// do), then to replace the next ones.
	const minObs = 1000
	buffer := socketBuffer()
	blind := buffer/minObs + skipped + 10
	ticks := blind + 3
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{OpenSpectators: true, Seed: 1, Agents: 2, Ticks: ticks, DecisionTimeout: 5 * time.Second,
		Conn: ipc.ConnOptions{QueueSize: queue, MaxSkipped: skipped}, Log: log.logger()})
	defer cancel()
	good := newHandAgent(t, addr, "agent_001", "")
	slow := newHandAgent(t, addr, "agent_002", "")
	good.next()
	m, raw := slow.recv()
	for m["type"] != "observation" {
		m, raw = slow.recv()
	}
	require.Greater(t, len(raw), minObs)

	// Pings with a 200 kB id, never read: a few pongs fill the socket, the
	// queue fills behind them, and the next one is too many. The pings are
	// all read (the server never stops reading), so the writes complete.
	// (Frames this large are taken only after a hello.)
	flood := dial(t, addr)
	flood.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator"})
	m, _ = flood.recv()
	require.Equal(t, "welcome", m["type"], "%v", m)
	const idSize = 200_000
	bigPing := wire(pingWithID(concat([]byte{0x5a}, binary.BigEndian.AppendUint32(nil, idSize), make([]byte, idSize))))
	n := queue + 2*(buffer/idSize+2) + 4
	for i := 0; i < n; i++ {
		flood.writeRaw(bigPing)
	}
	pongs := 0
	for {
		m, _ := flood.recv()
		if m["type"] == "episode_start" || m["type"] == "frame" {
			continue
		}
		if m["type"] != "pong" {
			flood.requireError(m, ipc.CodeSlowConsumer, true, strconv.Itoa(queue)+" messages were waiting to be sent")
			break
		}
		pongs++
	}
	require.Less(t, pongs, n, "some pongs were never sent")
	flood.expectClosed()

	// agent_002 stops reading but goes on deciding, without waiting for its
	// observations: once the socket is full (or sooner, when the writer
	// falls behind such an agent) they are replaced before they are
	// written, and the second replacement in a row disconnects it. It
	// learns why when it reads again. Once the server has closed the
	// connection, its decisions can no longer be written.
	written := -1
	for tick := 0; tick < blind; tick++ {
		if tick > 0 {
			good.next()
		}
		if written == tick-1 {
			if _, err := slow.nc.Write(wire(clientCBOR(map[string]any{"type": "decision", "tick": tick, "tool": quietTool(tick)}))); err == nil {
				written = tick
			}
		}
		good.decide(tick)
	}
	var last map[string]any
	for {
		m, _ := slow.recv()
		if m["type"] != "observation" {
			last = m
			break
		}
	}
	slow.requireError(last, ipc.CodeSlowConsumer, true, strconv.Itoa(skipped)+" observations in a row were replaced before they could be sent")
	slow.expectClosed()
	log.wait(t, "agent disconnected agent_002")

	// The episode goes on without it, and it comes back.
	good.play(blind)
	good.next()
	slow.rejoin(addr, "")
	slow.decided = -1 // which of the decisions written last were read is not known
	got, obs := slow.next()
	require.Equal(t, blind+1, got)
	r := obs.LastActionResult
	require.NotNil(t, r)
	require.Equal(t, world.ActionResult{Tool: quietTool(r.Tick), Success: true, Tick: r.Tick, Data: r.Data}, *r,
		"its last result is that of one of its decisions, not a TIMEOUT")
	require.LessOrEqual(t, r.Tick, written)
	slow.decide(blind + 1)
	good.decide(blind + 1)
	good.play(blind + 2)
	slow.play(blind + 2)
	good.end(ticks, "agent_001", "agent_002")
	slow.end(ticks, "agent_001", "agent_002")
	good.requireEveryTick(ticks)
}

// Regressions: each test below failed before the fix its comment describes.

// Fixed (ipc/codec.go, Codec.Decode): a ping's or a query's id is kept as raw
// CBOR (cbor.RawMessage) to be echoed byte for byte, and raw values are only
// checked for well-formedness: the duplicate-key and UTF-8 checks, which run
// while decoding into Go values, never see them. Such an id is accepted, and
// the server echoes the invalid CBOR back in its pong or result.
func TestPingAndQueryIDsGetTheSameChecksAsTheRest(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 1})
	defer cancel()
	c := dial(t, addr)
	lenient, err := cbor.DecOptions{UTF8: cbor.UTF8DecodeInvalid}.DecMode()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"duplicate keys in a ping's id", pingWithID(hexCBOR(cborDupA)), "duplicate map key a"},
		{"invalid UTF-8 in a ping's id", pingWithID(hexCBOR("62 fffe")), "invalid UTF-8 string"},
		{"duplicate keys in a query's id",
			concat(hexCBOR("a3 64 74797065 65 7175657279 64 746f6f6c 6f 71756572795f696e76656e746f7279"+cborID), hexCBOR(cborDupA)),
			"duplicate map key a"},
	} {
		c.writeRaw(wire(tc.msg))
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		raw, err := ipc.ReadFrame(c.nc, ipc.DefaultMaxFrame, nil)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, lenient.Unmarshal(raw, &m))
		require.Equal(t, "error", m["type"], "%s: answered with % x", tc.name, raw)
		c.requireError(m, ipc.CodeBadMessage, false, tc.want)
	}
}

// pauseWorld has the spectator pause the world, and waits until it has.
func pauseWorld(spec *client) {
	spec.t.Helper()
	spec.send(map[string]any{"type": "control", "command": "pause"})
	for f := spec.nextFrame(); !f.Paused; f = spec.nextFrame() {
	}
}

// Fixed (server/handle.go, decide; server/server.go, Gather): in lockstep a
// decision point stays open after the world has moved past it. Gather
// clears a slot's decision only when the next decision point begins, so
// until then (while the loop handles messages between two ticks:
// afterTick's drain, a pause, the pacing wait of a spectator's speed) a
// decision for the tick just stepped has tick == sentTick and decided ==
// false: it is accepted without an answer, then cleared by the next Gather.
// The agent is neither applied nor told: a late decision must be refused
// with UNKNOWN_TICK. A spectator's pause holds that window open.
func TestALateLockstepDecisionIsRefusedNotDropped(t *testing.T) {
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 2, Ticks: 3, DecisionTimeout: 200 * time.Millisecond, SpectatorToken: "eye"})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	good := newHandAgent(t, addr, "agent_001", "")
	late := newHandAgent(t, addr, "agent_002", "")
	good.next()
	late.next()
	pauseWorld(spec)
	good.decide(0)
	// late misses the deadline: tick 0 is stepped without it, and the
	// paused server waits before tick 1.
	for f := spec.nextFrame(); f.Tick < 1; f = spec.nextFrame() {
	}
	late.send(map[string]any{"type": "decision", "tick": 0, "tool": "query_inventory"})
	before := late.queryBarrier("handled")
	spec.send(map[string]any{"type": "control", "command": "resume"})
	tick, obs := late.observe()
	require.Equal(t, 1, tick)
	r := obs.LastActionResult
	refused := len(before) == 1 && before[0].m["code"] == ipc.CodeUnknownTick
	applied := r != nil && r.Tool == "query_inventory" && r.Tick == 0
	require.True(t, refused || applied,
		"a decision for tick 0 sent after its deadline must be refused with UNKNOWN_TICK (or applied); "+
			"it was accepted without an answer and dropped: answers %v, then last_action_result %+v", before, r)
}

// Fixed (server/handle.go, hello and decide): same cause. A client that
// rejoins its slot between two lockstep ticks is sent again the observation
// of the tick just stepped (sentTick > decidedTick still holds), with what is
// left of a deadline the world no longer waits for, and its answer is
// accepted without a word and dropped (if it lands after the next tick
// began, it is refused with UNKNOWN_TICK instead). Whatever it is sent, the
// answer to it must be applied or refused, never dropped in silence.
func TestRejoiningBetweenTicksIsNotSentAStaleObservation(t *testing.T) {
	log := newServerLog()
	addr, _, cancel := start(t, server.Options{Seed: 1, Agents: 2, Ticks: 4, DecisionTimeout: 5 * time.Second, Log: log.logger(), SpectatorToken: "eye"})
	defer cancel()
	spec := dial(t, addr)
	spec.send(map[string]any{"type": "hello", "protocol": 1, "role": "spectator", "token": "eye"})
	good := newHandAgent(t, addr, "agent_001", "")
	back := newHandAgent(t, addr, "agent_002", "")
	good.next()
	back.next()
	back.nc.Close()
	log.wait(t, "agent disconnected agent_002")
	pauseWorld(spec)
	good.decide(0)
	for f := spec.nextFrame(); f.Tick < 1; f = spec.nextFrame() {
	}
	// Tick 0 has been stepped; the paused server waits before tick 1.
	back.rejoin(addr, "")
	answered, refused := -1, false
	for _, msg := range back.queryBarrier("welcomed") {
		if msg.m["type"] == "observation" {
			var o ipc.ObservationMsg
			require.NoError(t, cbor.Unmarshal(msg.raw, &o))
			answered = o.Tick
			back.decideWith(o.Tick, "query_inventory")
		}
	}
	if answered >= 0 {
		for _, msg := range back.queryBarrier("handled") {
			refused = refused || msg.m["code"] == ipc.CodeUnknownTick
		}
	}
	spec.send(map[string]any{"type": "control", "command": "resume"})
	if answered < 0 {
		answered, _ = back.observe()
		back.decideWith(answered, "query_inventory")
	}
	good.play(1)
	var next ipc.ObservationMsg
	for next.Observation == nil {
		m, raw := back.recv()
		switch m["type"] {
		case "error":
			refused = refused || m["code"] == ipc.CodeUnknownTick
		case "observation":
			require.NoError(t, cbor.Unmarshal(raw, &next))
		default:
			require.Fail(t, "unexpected message", "%v", m)
		}
	}
	r := next.Observation.LastActionResult
	applied := r != nil && r.Tool == "query_inventory" && r.Tick == answered
	require.True(t, applied || refused,
		"rejoining after tick 0 was stepped, agent_002 was sent the observation of tick %d and answered it; "+
			"the decision was neither refused nor applied: last_action_result %+v", answered, r)
}
