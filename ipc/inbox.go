package ipc

import "sync"

// Inbox is where the readers of connections leave the messages they decode
// for the goroutine that owns the game, which takes them in batches. The
// owner says how many awaited decisions it is waiting for (Arm: decisions
// for the tick a connection was told to expect, Conn.Await) and is woken
// once that many have arrived, or at once by any other message (a query, a
// hello, a decision for another tick or a second one, a connection's end),
// which may need a prompt answer, or by a full inbox: in lockstep, about one
// wake-up per tick instead of one per decision, each of which cost the
// world's goroutine a park and a wake-up on a select over four channels.
//
// The inbox holds at most its size of messages, and at most PerConn of one
// connection; a reader that finds either full waits (and wakes the owner),
// so a flood from clients is held at their sockets, not in memory, and one
// client cannot take the room of the others.
type Inbox struct {
	mu      sync.Mutex
	queue   []Incoming
	size    int
	awaited int           // the awaited decisions in queue
	want    int           // armed: wake the owner at this many awaited decisions; 0: not armed
	ready   chan struct{} // signalled (1-buffered) to wake the owner
	space   chan struct{} // closed when readers waiting on a full inbox may go on
}

// PerConn is the most messages of one connection an inbox holds at once:
// a decision, the queries the tool-call limit allows and a ping fit.
const PerConn = 32

// NewInbox makes an inbox for at most size messages at once (at least 1).
func NewInbox(size int) *Inbox {
	return &Inbox{size: max(size, 1), ready: make(chan struct{}, 1)}
}

// Put leaves a message, which wakes an armed owner. A connection's
// messages go to one inbox, the one NewConn was given: the inbox counts
// them in the connection. While the inbox is full
// it waits, unless done is closed first, in which case the message is not
// left and Put reports false.
func (q *Inbox) Put(in Incoming, done <-chan struct{}) bool { return q.put(in, false, done) }

// put is Put; an awaited decision wakes the owner only with enough others.
func (q *Inbox) put(in Incoming, awaited bool, done <-chan struct{}) bool {
	for {
		space := q.offer(in, awaited)
		if space == nil {
			return true
		}
		select {
		case <-space:
		case <-done:
			return false
		}
	}
}

// offer leaves a message, as put does, unless the inbox or the connection's
// share of it is full: then it leaves nothing, wakes the owner (only the
// owner makes room) and returns a channel closed when there may be room.
func (q *Inbox) offer(in Incoming, awaited bool) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) >= q.size || (in.Conn != nil && in.Conn.inInbox >= PerConn) {
		if q.space == nil {
			q.space = make(chan struct{})
		}
		q.wake()
		return q.space
	}
	q.queue = append(q.queue, in)
	if in.Conn != nil {
		in.Conn.inInbox++
	}
	if awaited {
		q.awaited++
	}
	if !awaited || q.awaited >= q.want {
		q.wake()
	}
	return nil
}

// wake signals Ready if the owner armed it, and disarms; q.mu is held.
func (q *Inbox) wake() {
	if q.want == 0 {
		return
	}
	q.want = 0
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Take appends every message waiting to dst, in the order they were left
// (a connection's messages in the order it sent them), and disarms.
func (q *Inbox) Take(dst []Incoming) []Incoming {
	q.mu.Lock()
	dst = append(dst, q.queue...)
	for _, in := range q.queue {
		if in.Conn != nil {
			in.Conn.inInbox = 0
		}
	}
	clear(q.queue)
	q.queue, q.awaited, q.want = q.queue[:0], 0, 0
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	q.mu.Unlock()
	return dst
}

// Arm asks for Ready to be signalled once want awaited decisions are
// waiting (1 or less: once anything is), or any other message, or the inbox
// is full; at once if that is already so. Take disarms it.
func (q *Inbox) Arm(want int) {
	q.mu.Lock()
	q.want = max(want, 1)
	if n := len(q.queue); n >= q.size || q.awaited < n || (n > 0 && q.awaited >= q.want) {
		q.wake()
	}
	q.mu.Unlock()
}

// Ready is signalled when what Arm asked for has arrived. A signal may be
// stale (what arrived was taken already): the owner then finds nothing and
// arms again.
func (q *Inbox) Ready() <-chan struct{} { return q.ready }
