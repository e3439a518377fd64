// Package world owns the simulated state of an Arena episode: the ground and its
// height field, obstacles, resources, crafting stations, hazards, capture points,
// agents with their health, inventories and teams, messages between agents, the
// per-tick event log, seeded random streams, objectives and the state hash.
//
// A World is stepped by exactly one goroutine (the engine's tick loop). Nothing in
// this package is safe for concurrent use; readers outside the loop work from the
// Observation values the world builds for them.
//
// The world knows nothing about transports or tool schemas. The tools package
// validates a decision's parameters and calls the action methods here (MoveTo,
// Collect, Craft, ...), which apply the game rules and answer with an ActionResult
// carrying one of the protocol's error codes. Subsystems that are not spatial (a
// social feed, a market, a role game) plug in as Components.
package world
