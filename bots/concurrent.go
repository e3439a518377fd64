package bots

// Every built-in bot reads only its observation and its own state, and draws
// any randomness from its own stream (seeded by the seed and its agent id), so
// the engine may run the Decide of different agents' bots at the same time
// (engine.ConcurrentController). The observation's shared parts (roster,
// recipes, objective, variables) are only read.

// DecidesConcurrently implements engine.ConcurrentController.
func (*CaptureTeam) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Crafter) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Debater) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Economist) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Forager) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Trader) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*RolesPlayer) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Social) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (*Townsfolk) DecidesConcurrently() bool { return true }

// DecidesConcurrently implements engine.ConcurrentController.
func (idleBot) DecidesConcurrently() bool { return true }
