package tools

import "github.com/arena-sim/arena/world"

// DoNothingName is the name of the do_nothing tool.
const DoNothingName = "do_nothing"

// DoNothingDescription is do_nothing's description. A component that offers
// do_nothing with this description and no parameters offers the same tool as
// every other one: Register keeps the first of identical tools, so a world
// with several such components has exactly one do_nothing.
const DoNothingDescription = "Do nothing this round."

// DoNothing returns the shared do_nothing tool (the reference's environments
// all offer one). Like idle, it changes nothing: a move or craft in progress
// goes on.
func DoNothing() Tool {
	return Tool{
		Name:        DoNothingName,
		Description: DoNothingDescription,
		Parameters:  Object(nil),
		Handler:     func(*Call) world.ActionResult { return world.OK(DoNothingName, nil) },
	}
}
