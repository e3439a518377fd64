package tools

import (
	"fmt"

	"github.com/arena-sim/arena/world"
)

// Limits on coordinates that no world reaches; anything beyond is refused before
// the world even looks at it.
const coordLimit = 1e6

// minSpeed is the slowest speed multiplier move_to accepts.
const minSpeed = 0.1

func coord(desc string) *Schema {
	return &Schema{Type: "number", Description: desc, Minimum: Ptr(-coordLimit), Maximum: Ptr(coordLimit)}
}

// Universal returns the seven universal tools, the same in every scenario. The
// rules give the ranges, speeds and limits their descriptions and schemas state.
func Universal(r world.Rules) []Tool {
	return []Tool{
		{
			Name: "move_to",
			Description: "Walk toward a target position along a planned path that goes around obstacles and avoids hazards. " +
				"Give either target_x/target_y/target_z or target [x, y, z] (y is up and follows the ground). " +
				"Succeeds when movement starts; current_action in later observations shows progress, arrival, or a blocked move. " +
				"A new move_to replaces the current one. Fails with NO_PATH (naming the nearest reachable point) when the target cannot be reached.",
			Parameters: Object(map[string]*Schema{
				"target_x": coord("Target X coordinate"),
				"target_y": coord("Target Y coordinate (vertical; the agent stays on the ground)"),
				"target_z": coord("Target Z coordinate"),
				"target": {Type: "array", Description: "Target position [x, y, z], instead of target_x/target_y/target_z",
					Items: coord(""), MinItems: Ptr(3), MaxItems: Ptr(3)},
				"speed": {Type: "number", Description: fmt.Sprintf("Speed multiplier of the base speed (%g units/s), capped at %g (default 1)", r.BaseSpeed, r.MaxSpeedMultiplier),
					Minimum: Ptr(minSpeed), Maximum: Ptr(coordLimit), Default: 1.0},
			}),
			Check: checkMoveTarget,
			Handler: func(c *Call) world.ActionResult {
				return c.World.MoveTo(c.Agent, moveTarget(c), c.Float("speed", 1))
			},
			Prepare: func(c *Call, k *world.Worker) { k.PlanMove(c.Agent, moveTarget(c), c.Float("speed", 1)) },
		},
		{
			Name:        "collect",
			Description: fmt.Sprintf("Pick up a resource within collection range (%.1f units) and add it to the inventory. target_name is the resource's name from nearby_resources.", r.CollectRange),
			Parameters: Object(map[string]*Schema{
				"target_name": {Type: "string", Description: "Name of the resource to collect, e.g. Berry1", MinLength: Ptr(1), MaxLength: Ptr(200)},
			}, "target_name"),
			Handler: func(c *Call) world.ActionResult {
				return c.World.Collect(c.Agent, c.String("target_name", ""))
			},
		},
		{
			Name: "craft",
			Description: fmt.Sprintf("Craft an item at a station within crafting range (%.1f units) from materials in the inventory. ", r.CraftRange) +
				"available_recipes lists inputs and station types; some recipes take several ticks, during which the agent is BUSY.",
			Parameters: Object(map[string]*Schema{
				"item_name":    {Type: "string", Description: "Item to craft, a key of available_recipes", MinLength: Ptr(1), MaxLength: Ptr(200)},
				"station_name": {Type: "string", Description: "Name of the station to use, from nearby_stations", MinLength: Ptr(1), MaxLength: Ptr(200)},
			}, "item_name", "station_name"),
			Handler: func(c *Call) world.ActionResult {
				return c.World.Craft(c.Agent, c.String("item_name", ""), c.String("station_name", ""))
			},
		},
		{
			Name: "query_world",
			Description: fmt.Sprintf("Scan for entities within a radius (default %g, at most %g), regardless of line of sight, optionally only of one type. ", r.QueryRadius, r.MaxQueryRadius) +
				"As a decision the answer arrives in the next observation's query_result; as a mid-turn query it is returned at once.",
			Parameters: Object(map[string]*Schema{
				"radius":      {Type: "number", Description: fmt.Sprintf("Search radius in units (default %g)", r.QueryRadius), ExclusiveMinimum: Ptr(0.0), Maximum: Ptr(r.MaxQueryRadius), Default: r.QueryRadius},
				"filter_type": {Type: "string", Description: "Only this entity type", Enum: []string{"resource", "hazard", "agent", "station", "obstacle", "capture_point"}},
			}),
			Query: true,
			Handler: func(c *Call) world.ActionResult {
				q, res := c.World.QueryWorld(c.Agent, c.Float("radius", c.World.Rules().QueryRadius), c.String("filter_type", ""))
				if !res.Success {
					return res
				}
				if c.Query {
					res.Data = map[string]any{"query_result": q}
				} else {
					c.World.SetQueryResult(c.Agent, q)
				}
				return res
			},
		},
		{
			Name: "query_inventory",
			Description: "List inventory items with their counts and types, and the capacity. " +
				"As a decision the answer arrives in the next observation's inventory_details; as a mid-turn query it is returned at once.",
			Parameters: Object(nil),
			Query:      true,
			Handler: func(c *Call) world.ActionResult {
				d, res := c.World.QueryInventory(c.Agent)
				if !res.Success {
					return res
				}
				if c.Query {
					res.Data = map[string]any{"inventory_details": d}
				} else {
					c.World.SetInventoryDetails(c.Agent, d)
				}
				return res
			},
		},
		{
			Name: "send_message",
			Description: fmt.Sprintf("Send a message to other agents within communication range (%g units), delivered on the next tick. ", r.CommRange) +
				"target_agent is \"all\" (default), \"team\" (own team only) or an agent id. Delivery is not guaranteed in every scenario.",
			Parameters: Object(map[string]*Schema{
				"message":      {Type: "string", Description: "Message content", MinLength: Ptr(1), MaxLength: Ptr(r.MaxMessageLen)},
				"target_agent": {Type: "string", Description: "\"all\", \"team\" or an agent id", MinLength: Ptr(1), MaxLength: Ptr(200), Default: "all"},
			}, "message"),
			Handler: func(c *Call) world.ActionResult {
				return c.World.SendMessageTo(c.Agent, c.String("target_agent", "all"), c.String("message", ""), c.Audience)
			},
		},
		{
			Name:        "idle",
			Description: "Take no new action this tick. A move in progress continues and crafting continues; an agent doing nothing stays in place. To stop walking, move_to your own position.",
			Parameters:  Object(nil),
			Private:     true,
			Handler: func(c *Call) world.ActionResult {
				return c.World.IdleAction(c.Agent)
			},
		},
	}
}

// checkMoveTarget accepts exactly one of the two target forms.
func checkMoveTarget(p map[string]any) string {
	_, hasArr := p["target"]
	_, hx := p["target_x"]
	_, hy := p["target_y"]
	_, hz := p["target_z"]
	switch {
	case hasArr && (hx || hy || hz):
		return "give either target [x, y, z] or target_x/target_y/target_z, not both"
	case hasArr:
		return ""
	case hx && hz:
		return ""
	case hx || hy || hz:
		return "target_x and target_z are both required (target_y is optional)"
	}
	return "a target is required: target [x, y, z] or target_x/target_y/target_z"
}

// moveTarget is a validated move_to call's target.
func moveTarget(c *Call) world.Vec3 {
	if arr, ok := c.Params["target"].([]any); ok {
		var t world.Vec3
		for i := range t {
			t[i] = arr[i].(float64)
		}
		return t
	}
	return world.Vec3{c.Float("target_x", 0), c.Float("target_y", 0), c.Float("target_z", 0)}
}
