package ipc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// woken reports whether the inbox's owner would be woken within a moment.
func woken(q *Inbox) bool {
	select {
	case <-q.Ready():
		return true
	case <-time.After(20 * time.Millisecond):
		return false
	}
}

func TestInboxWakesItsOwnerForWhatItAwaits(t *testing.T) {
	decision := Incoming{Msg: &Decision{Type: "decision", Tool: "idle"}}
	query := Incoming{Msg: &Query{Type: "query"}}
	tests := []struct {
		name string
		run  func(t *testing.T, q *Inbox)
	}{
		{"awaited decisions wake it once all are in", func(t *testing.T, q *Inbox) {
			q.Arm(3)
			require.True(t, q.put(decision, true, nil))
			require.True(t, q.put(decision, true, nil))
			require.False(t, woken(q), "two of three")
			require.True(t, q.put(decision, true, nil))
			require.True(t, woken(q))
			require.Len(t, q.Take(nil), 3)
		}},
		{"anything else wakes it at once", func(t *testing.T, q *Inbox) {
			q.Arm(3)
			require.True(t, q.put(decision, true, nil))
			require.True(t, q.put(decision, false, nil)) // another tick's, say
			require.True(t, woken(q))
			q.Take(nil)
			q.Arm(3)
			require.True(t, q.Put(query, nil))
			require.True(t, woken(q))
			got := q.Take(nil)
			require.Len(t, got, 1)
			require.Equal(t, query, got[0])
		}},
		{"arming when it is there already", func(t *testing.T, q *Inbox) {
			require.True(t, q.put(decision, true, nil))
			require.True(t, q.put(decision, true, nil))
			require.False(t, woken(q), "not armed")
			q.Arm(2)
			require.True(t, woken(q))
			require.Len(t, q.Take(nil), 2)
			q.Arm(1)
			require.False(t, woken(q), "nothing left")
		}},
		{"a full inbox wakes it and holds the reader", func(t *testing.T, q *Inbox) {
			q.Arm(100)
			for range 4 {
				require.True(t, q.put(decision, true, nil))
			}
			put := make(chan bool)
			go func() { put <- q.put(decision, true, nil) }()
			require.True(t, woken(q), "the fifth finds it full")
			select {
			case <-put:
				t.Fatal("put into a full inbox")
			case <-time.After(20 * time.Millisecond):
			}
			require.Len(t, q.Take(nil), 4)
			require.True(t, <-put)
			require.Len(t, q.Take(nil), 1)
			// A reader whose connection ends gives up waiting.
			for range 4 {
				require.True(t, q.Put(query, nil))
			}
			done := make(chan struct{})
			go func() { put <- q.Put(query, done) }()
			time.Sleep(10 * time.Millisecond)
			close(done)
			require.False(t, <-put)
			require.Len(t, q.Take(nil), 4)
		}},
		{"messages keep their order", func(t *testing.T, q *Inbox) {
			for i := range 4 {
				require.True(t, q.put(Incoming{Msg: &Decision{Tick: float64(i)}}, i%2 == 0, nil))
			}
			for i, in := range q.Take(nil) {
				require.Equal(t, float64(i), in.Msg.(*Decision).Tick)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, NewInbox(4)) })
	}
}

// TestInboxHoldsOneConnectionsFlood: a connection with PerConn messages
// waiting waits to leave more (and wakes the owner), while another
// connection's messages still go in; a Take lets it go on.
func TestInboxHoldsOneConnectionsFlood(t *testing.T) {
	q := NewInbox(1000)
	flood, other := &Conn{}, &Conn{}
	for range PerConn {
		require.True(t, q.Put(Incoming{Conn: flood, Msg: &Query{Type: "query"}}, nil))
	}
	q.Arm(5)
	left := make(chan bool)
	go func() { left <- q.Put(Incoming{Conn: flood, Msg: &Query{Type: "query"}}, nil) }()
	select {
	case <-left:
		t.Fatal("a connection left more than PerConn messages")
	case <-time.After(50 * time.Millisecond):
	}
	require.True(t, woken(q), "the owner is woken to make room")
	require.True(t, q.Put(Incoming{Conn: other, Msg: &Query{Type: "query"}}, nil), "another connection is not held")
	require.Len(t, q.Take(nil), PerConn+1)
	require.True(t, <-left)
	require.Len(t, q.Take(nil), 1)
	done := make(chan struct{})
	for range PerConn {
		require.True(t, q.Put(Incoming{Conn: flood, Msg: &Query{Type: "query"}}, nil))
	}
	close(done)
	require.False(t, q.Put(Incoming{Conn: flood, Msg: &Query{Type: "query"}}, done), "a closed done gives up")
}

// BenchmarkInboxRound is a lockstep round of the inbox at 1,000
// connections: one awaited decision from each, then the owner's Take.
func BenchmarkInboxRound(b *testing.B) {
	conns := make([]*Conn, 1000)
	for i := range conns {
		conns[i] = &Conn{}
	}
	q := NewInbox(len(conns) * PerConn)
	var d Decision
	dst := make([]Incoming, 0, len(conns))
	b.ReportAllocs()
	for b.Loop() {
		q.Arm(len(conns))
		for _, c := range conns {
			q.put(Incoming{Conn: c, Msg: &d}, true, nil)
		}
		dst = q.Take(dst[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(conns)), "ns/message")
}
