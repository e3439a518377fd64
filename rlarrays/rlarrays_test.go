package rlarrays

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/arena-sim/arena/world"
	"github.com/stretchr/testify/require"
)

func TestCompileRefusesWhatItCannotUse(t *testing.T) {
	ok := func() Layout {
		return Layout{K: 2, Self: []string{"x"}, Kinds: []Kind{{Kind: "stations", Slots: 2, Features: []string{"in_use"}}},
			Params: []Param{{Kind: "ones", Size: 3}}}
	}
	_, err := Compile(&Layout{K: 1})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		edit func(l *Layout)
		want string
	}{
		{"no k", func(l *Layout) { l.K = 0 }, "k = 0"},
		{"huge k", func(l *Layout) { l.K = MaxSlots + 1 }, "k = 1025"},
		{"unknown self feature", func(l *Layout) { l.Self = append(l.Self, "secret_role") }, `unknown self feature "secret_role"`},
		{"unknown kind", func(l *Layout) { l.Kinds[0].Kind = "roles" }, `unknown entity kind "roles"`},
		{"unknown entity feature", func(l *Layout) { l.Kinds[0].Features = []string{"team"} }, `unknown feature "team"`},
		{"negative slots", func(l *Layout) { l.Kinds[0].Slots = -1 }, "-1 slots"},
		{"too many slots", func(l *Layout) { l.Kinds[0].Slots = MaxSlots + 1 }, "1025 slots"},
		{"unknown mask part", func(l *Layout) { l.Params[0].Kind = "everything" }, `unknown mask part "everything"`},
		{"negative ones", func(l *Layout) { l.Params[0].Size = -3 }, "size -3"},
		{"too many names", func(l *Layout) { l.Tools = make([]string, MaxNames+1) }, "16385 names"},
		{"too many values", func(l *Layout) {
			for range 5 {
				l.Params = append(l.Params, Param{Kind: "ones", Size: MaxNames})
			}
		}, "at most 65536"},
		{"empty parts by the million", func(l *Layout) {
			l.Params = make([]Param, MaxParts+1)
			for i := range l.Params {
				l.Params[i].Kind = "ones"
			}
		}, "1025 mask parts"},
		{"empty kinds", func(l *Layout) { l.Kinds = make([]Kind, MaxParts+1) }, "1025 entity kinds"},
		{"NaN range", func(l *Layout) { l.CraftRange = math.NaN() }, "are numbers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := ok()
			_, err := Compile(&l)
			require.NoError(t, err)
			tc.edit(&l)
			_, err = Compile(&l)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err = Compile(nil)
	require.Error(t, err)
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func i64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// TestEncodeAStationAndItsRecipe: one observation by hand, every value
// checked. The anvil in range and free makes "sword" craftable; the forge
// is busy; the berry is out of reach because the inventory is full.
func TestEncodeAStationAndItsRecipe(t *testing.T) {
	busy, free := true, false
	o := &world.Observation{Tick: 7, AgentID: "a1", Team: "red", Position: world.Vec3{1, 0, 2}, Facing: 0, Alive: true,
		Inventory: map[string]int{"iron": 2, "wood": 1}, InventoryUsed: 3, InventoryCap: 3,
		NearbyResources: []world.EntityView{{Name: "Berry1", ResourceType: "berry", Position: world.Vec3{2, 0, 2}, Distance: 1, Amount: 4}},
		NearbyStations: []world.EntityView{
			{Name: "Anvil1", StationType: "anvil", Position: world.Vec3{1, 0, 4}, Distance: 2, InUse: &free},
			{Name: "Forge1", StationType: "forge", Position: world.Vec3{1, 0, 3}, Distance: 1, InUse: &busy}},
		NearbyAgents: []world.EntityView{{Name: "a2", Team: "blue", Position: world.Vec3{4, 0, 6}, Distance: 5, Health: 80}},
		AvailableRecipes: map[string]world.RecipeView{
			"sword": {Inputs: map[string]int{"iron": 2}, StationType: "anvil"},
			"pick":  {Inputs: map[string]int{"iron": 1, "wood": 2}, StationType: "anvil"},
			"ingot": {Inputs: map[string]int{}, StationType: "forge"}},
		AgentIDs:         []string{"a1", "a2"},
		CurrentAction:    world.ActionStatus{Status: "moving"},
		LastActionResult: &world.ActionResult{Tool: "craft", ErrorCode: "BUSY"},
		CurrentProgress:  map[string]float64{"score": 0.5},
		Score:            3,
	}
	l := Layout{
		Self: []string{"x", "z", "cos_facing", "alive", "inventory_used", "tick", "score"}, Inventory: []string{"iron", "wood", "berry"},
		Progress: []string{"score"}, Statuses: []string{"idle", "moving"}, ErrorCodes: []string{"NOT_FOUND"},
		Tools: []string{"idle", "move_to", "collect", "craft", "send_message", "query_world"},
		Kinds: []Kind{
			{Kind: "resources", Slots: 2, Features: []string{"amount"}, Types: []string{"berry"}},
			{Kind: "stations", Slots: 2, Features: []string{"in_use"}, Types: []string{"forge", "anvil"}},
			{Kind: "agents", Slots: 1, Features: []string{"health", "ally"}, Types: []string{"a1", "a2"}},
		},
		K: 2, Recipes: []string{"ingot", "pick", "sword"}, CollectRange: 2, CraftRange: 2.5, Queries: []string{"query_world"},
		Params: []Param{{Kind: "slot_resources"}, {Kind: "slot_stations"}, {Kind: "craft", Values: []string{"ingot", "pick", "sword"}},
			{Kind: "agents", Values: []string{"all", "team", "a1", "a2", "a3"}}, {Kind: "ones", Size: 2}},
	}
	e, err := Compile(&l)
	require.NoError(t, err)
	var a Arrays
	e.Encode(o, &a)
	require.Equal(t, []float32{
		1, 2, 1, 1, 3, 7, 3, // self
		2, 1, 0, // inventory
		0.5,                          // progress
		1, 0, 0, 1, 4, 0, 0, 0, 0, 0, // resources: dx dy dz distance amount; an empty slot
		0, 0, 2, 2, 0, 0, 0, 1, 1, 1, // stations: the anvil, free; the forge, busy
		3, 0, 4, 5, 80, -1, // the agent of another team
	}, f32s(a.F32))
	require.Equal(t, []int64{2, 4, 2, 2, 1, 0, 2, 1, 2}, i64s(a.I64), "moving; craft failed with an unlisted code; types")
	require.Equal(t, []byte{1, 0, 1, 1, 1}, a.I8)
	require.Equal(t, []byte{
		1, 1, 0, 1, 1, 0, // tools: collect (inventory full) and the query are out
		0, 0, // no resource in reach: the inventory is full
		1, 0, // the anvil is free and in range; the forge is in use
		0, 0, 1, // only the sword: the pick needs wood, the ingot a free forge
		1, 1, 0, 1, 0, // all, team, not itself, a2, not a stranger
		1, 1,
	}, a.Mask)

	// The same arrays again (buffers reused), and a dead agent has nothing.
	e.Encode(o, &a)
	require.Len(t, a.F32, 4*37)
	o.Alive = false
	e.Encode(o, &a)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0}, a.Mask[:6])
}
