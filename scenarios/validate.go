package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/arena-sim/arena/bots"
	"github.com/arena-sim/arena/components"
	"github.com/arena-sim/arena/world"
)

// validate checks everything the world would refuse, and more, and names the
// field that is wrong. It also fills in defaults.
func (s *Scenario) validate() error {
	v := &validator{file: s.File}
	if s.Name == "" {
		v.add("name", "is required")
	}
	if s.Bounds != nil {
		if s.Size != [2]float64{} {
			v.add("bounds", "give either size or bounds, not both")
		}
		if !(s.Bounds.Max[0] > s.Bounds.Min[0]) || !(s.Bounds.Max[1] > s.Bounds.Min[1]) {
			v.add("bounds", "max must be greater than min on both axes")
		}
	} else if !(s.Size[0] > 0) || !(s.Size[1] > 0) {
		v.add("size", fmt.Sprintf("must be two positive numbers [width, depth], got [%g, %g]", s.Size[0], s.Size[1]))
	}
	if s.CellSize == 0 {
		s.CellSize = 0.5
	}
	if s.CellSize < 0.05 {
		v.add("cell_size", fmt.Sprintf("must be at least 0.05, got %g", s.CellSize))
	}
	if s.TickRate == 0 {
		s.TickRate = 10
	}
	if s.TickRate < 0.1 || s.TickRate > 1000 {
		v.add("tick_rate", fmt.Sprintf("must be between 0.1 and 1000 ticks per second, got %g", s.TickRate))
	}
	if len(v.errs) > 0 {
		return v.err()
	}
	b := s.bounds()
	span := max(b.Width(), b.Depth())
	if b.Width() > MaxWorldSide || b.Depth() > MaxWorldSide {
		v.add("size", fmt.Sprintf("the world may be at most %g units on a side, got %gx%g", float64(MaxWorldSide), b.Width(), b.Depth()))
		return v.err()
	}
	if s.CellSize > min(b.Width(), b.Depth())/4 {
		v.add("cell_size", fmt.Sprintf("%g is too coarse for a %gx%g world: at least 4 cells must fit across each side", s.CellSize, b.Width(), b.Depth()))
		return v.err()
	}
	if cells := (b.Width() / s.CellSize) * (b.Depth() / s.CellSize); cells > MaxCells {
		v.add("cell_size", fmt.Sprintf("a %gx%g world with cell size %g has %.0f navigation cells; the limit is %d (use a larger cell_size)",
			b.Width(), b.Depth(), s.CellSize, cells, MaxCells))
		return v.err()
	}
	v.terrain(s.Terrain)
	v.rules(s.Rules)

	names := map[string]string{}
	claim := func(field, name string) {
		if name == "" {
			v.add(field+".name", "is required")
			return
		}
		if prev, ok := names[name]; ok {
			v.add(field+".name", fmt.Sprintf("%q is already used by %s; names must be unique", name, prev))
			return
		}
		names[name] = field
	}
	items := map[string]bool{}
	for i, it := range s.Items {
		f := fmt.Sprintf("items[%d]", i)
		if it.Name == "" {
			v.add(f+".name", "is required")
		}
		if items[it.Name] {
			v.add(f+".name", fmt.Sprintf("item %q is defined twice", it.Name))
		}
		items[it.Name] = true
	}
	stationTypes := map[string]bool{}
	for i, st := range s.Stations {
		f := fmt.Sprintf("stations[%d]", i)
		claim(f, st.Name)
		if st.Type == "" {
			v.add(f+".type", "is required (workbench, anvil, furnace, ...)")
		}
		stationTypes[st.Type] = true
		if v.position(f+".position", st.Position, b) {
			v.clearOf(f+".position", st.Position, s.Obstacles)
		}
	}
	outputs := map[string]bool{}
	for i, r := range s.Recipes {
		f := fmt.Sprintf("recipes[%d]", i)
		if r.Output == "" {
			v.add(f+".output", "is required")
		}
		if outputs[r.Output] {
			v.add(f+".output", fmt.Sprintf("a recipe for %q is already defined", r.Output))
		}
		outputs[r.Output] = true
		if len(r.Inputs) == 0 {
			v.add(f+".inputs", "must list at least one input")
		}
		for _, k := range slices.Sorted(maps.Keys(r.Inputs)) {
			if r.Inputs[k] <= 0 {
				v.add(f+".inputs."+k, fmt.Sprintf("must be a positive count, got %d", r.Inputs[k]))
			}
		}
		if r.OutputCount < 0 {
			v.add(f+".output_count", "must not be negative")
		}
		if r.Ticks < 0 {
			v.add(f+".ticks", "must not be negative")
		}
		if r.StationType == "" {
			v.add(f+".station_type", "is required")
		} else if !stationTypes[r.StationType] {
			v.add(f+".station_type", fmt.Sprintf("no station of type %q is placed, so this recipe can never be crafted", r.StationType))
		}
	}
	for i, o := range s.Obstacles {
		f := fmt.Sprintf("obstacles[%d]", i)
		claim(f, o.Name)
		v.position(f+".position", o.Position, b)
		switch o.Shape {
		case "", "circle":
			if !(o.Radius >= 0.05) || o.Radius > span {
				v.add(f+".radius", fmt.Sprintf("must be between 0.05 and %g (the world's larger side) for a circle, got %g", span, o.Radius))
			}
		case "box":
			if !(o.Size[0] >= 0.05) || !(o.Size[1] >= 0.05) || o.Size[0] > 2*span || o.Size[1] > 2*span {
				v.add(f+".size", fmt.Sprintf("must be two numbers [x, z] between 0.05 and %g for a box, got [%g, %g]", 2*span, o.Size[0], o.Size[1]))
			}
		default:
			v.add(f+".shape", fmt.Sprintf("must be \"circle\" or \"box\", got %q", o.Shape))
		}
	}
	for i, r := range s.Resources {
		f := fmt.Sprintf("resources[%d]", i)
		claim(f, r.Name)
		if r.Type == "" {
			v.add(f+".type", "is required (berry, wood, stone, ...)")
		}
		if r.Amount < 0 || r.RespawnTicks < 0 {
			v.add(f, "amount and respawn_ticks must not be negative")
		}
		if v.position(f+".position", r.Position, b) {
			v.clearOf(f+".position", r.Position, s.Obstacles)
		}
	}
	for i, h := range s.Hazards {
		f := fmt.Sprintf("hazards[%d]", i)
		claim(f, h.Name)
		v.position(f+".position", h.Position, b)
		if !(h.Radius > 0) || h.Radius > span {
			v.add(f+".radius", fmt.Sprintf("must be greater than 0 and at most %g, got %g", span, h.Radius))
		}
		if h.EntryDamage < 0 || h.DamagePerSecond < 0 || h.EntryDamage > maxAmount || h.DamagePerSecond > maxAmount {
			v.add(f, fmt.Sprintf("entry_damage and damage_per_second must be between 0 and %g", maxAmount))
		}
	}
	for i, p := range s.Points {
		f := fmt.Sprintf("capture_points[%d]", i)
		claim(f, p.Name)
		if v.position(f+".position", p.Position, b) {
			v.clearOf(f+".position", p.Position, s.Obstacles)
		}
		if p.Radius < 0 || p.Radius > span {
			v.add(f+".radius", fmt.Sprintf("must be between 0 and %g", span))
		}
	}
	a := &s.Agents
	if a.Count == 0 {
		a.Count = 1
	}
	if a.Max == 0 {
		a.Max = max(a.Count, 64)
	}
	if a.Prefix == "" {
		a.Prefix = "agent_"
	}
	if a.Count < 0 || a.Max < a.Count {
		v.add("agents", fmt.Sprintf("count %d must be between 1 and max %d", a.Count, a.Max))
	}
	if a.Max > MaxAgents {
		v.add("agents.max", fmt.Sprintf("must be at most %d", MaxAgents))
	}
	if a.Speed < 0 || a.Speed > 100 {
		v.add("agents.speed", fmt.Sprintf("must be between 0 and 100, got %g", a.Speed))
	}
	for i, sp := range a.Spawns {
		f := fmt.Sprintf("agents.spawns[%d]", i)
		if v.position(f, sp, b) {
			v.clearOf(f, sp, s.Obstacles)
		}
	}
	if a.SpawnArea != nil {
		sa := a.SpawnArea
		if !(sa.Max[0] > sa.Min[0]) || !(sa.Max[1] > sa.Min[1]) || !b.Contains(sa.Min[0], sa.Min[1]) || !b.Contains(sa.Max[0], sa.Max[1]) {
			v.add("agents.spawn_area", "must be a non-empty rectangle inside the world")
		}
	}
	v.teams(s, b)
	if s.Limits.MaxTicks == 0 {
		s.Limits.MaxTicks = 1000
	}
	if s.Limits.MaxTicks < 0 {
		v.add("limits.max_ticks", "must not be negative")
	}
	if s.Objective.TimeLimit < 0 {
		v.add("objective.time_limit", "must not be negative")
	}
	if s.Rules.ToolCallLimit == 0 {
		s.Rules.ToolCallLimit = 10
	}
	if a.Bot == "" {
		a.Bot = "forager"
	}
	if !slices.Contains(bots.Kinds(), a.Bot) {
		v.add("agents.bot", fmt.Sprintf("unknown built-in bot %q (known: %s)", a.Bot, strings.Join(bots.Kinds(), ", ")))
	}
	if s.Limits.DecisionPeriod == 0 {
		s.Limits.DecisionPeriod = 1
	}
	if s.Limits.DecisionPeriod < 0 {
		v.add("limits.decision_period", "must be at least 1")
	}
	known := map[string]bool{}
	for _, m := range world.StandardMetrics() {
		known[m] = true
	}
	componentMetrics := s.componentMetrics()
	for _, m := range componentMetrics {
		known[m] = true
	}
	capture := map[string]bool{}
	for _, m := range world.CaptureMetrics() {
		capture[m] = true
	}
	for _, name := range s.Objective.MetricNames() {
		m := s.Objective.SuccessMetrics[name]
		f := "objective.success_metrics." + name
		if capture[name] {
			if s.Capture == nil {
				v.add(f, "is a capture game metric: the scenario needs a capture section")
			}
		} else if !known[name] && !strings.HasPrefix(name, "collected.") && !strings.HasPrefix(name, "crafted.") && !strings.HasPrefix(name, "inventory.") {
			names := world.StandardMetrics()
			if s.Capture != nil {
				names = append(names, world.CaptureMetrics()...)
			}
			names = append(names, componentMetrics...)
			v.add(f, fmt.Sprintf("unknown metric; known: %s, collected.<type>, crafted.<item>, inventory.<item>", strings.Join(names, ", ")))
		}
		if m.Weight < 0 {
			v.add(f+".weight", "must not be negative")
		}
		if !finite(m.Target) {
			v.add(f+".target", "must be a number")
		}
	}
	s.validateComponents(v)
	return v.err()
}

// teams checks agents.teams, team_ids, team_spawn_areas and the capture section.
func (v *validator) teams(s *Scenario, b world.Bounds) {
	a := &s.Agents
	seen := map[string]bool{}
	for i, t := range a.Teams {
		if t == "" || seen[t] {
			v.add(fmt.Sprintf("agents.teams[%d]", i), fmt.Sprintf("team names must be unique and not empty, got %q", t))
		}
		seen[t] = true
	}
	if a.TeamIDs && len(a.Teams) == 0 {
		v.add("agents.team_ids", "needs agents.teams")
	}
	for _, t := range slices.Sorted(maps.Keys(a.TeamSpawnAreas)) {
		f, sa := "agents.team_spawn_areas."+t, a.TeamSpawnAreas[t]
		if !seen[t] {
			v.add(f, fmt.Sprintf("%q is not one of agents.teams (%s)", t, strings.Join(a.Teams, ", ")))
		}
		if !(sa.Max[0] > sa.Min[0]) || !(sa.Max[1] > sa.Min[1]) || !b.Contains(sa.Min[0], sa.Min[1]) || !b.Contains(sa.Max[0], sa.Max[1]) {
			v.add(f, "must be a non-empty rectangle inside the world")
		}
	}
	c := s.Capture
	if c == nil {
		return
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"capture_ticks", c.CaptureTicks}, {"points_per_capture", c.PointsPerCapture}, {"points_per_hold_tick", c.PointsPerHoldTick}, {"win_score", c.WinScore}} {
		if n.v < 0 || n.v > maxAmount {
			v.add("capture."+n.name, fmt.Sprintf("must be between 0 and %g, got %d", maxAmount, n.v))
		}
	}
	if len(s.Points) == 0 {
		v.add("capture", "a capture game needs at least one entry in capture_points")
	}
	if len(a.Teams) < 2 {
		v.add("agents.teams", "a capture game needs at least two teams")
		return
	}
	if k := len(a.Teams); a.Count%k != 0 || a.Max%k != 0 {
		v.add("agents", fmt.Sprintf("a capture game plays teams of equal size: count %d and max %d must be multiples of the %d teams", a.Count, a.Max, k))
	}
}

// Limits on what a scenario may ask for.
const (
	MaxWorldSide = 8192    // units
	MaxCells     = 1 << 22 // navigation cells (2048×2048)
	MaxAgents    = 10000
)

type validator struct {
	file string
	errs []ValidationError
}

func (v *validator) add(field, msg string) {
	v.errs = append(v.errs, ValidationError{File: v.file, Field: field, Msg: msg})
}

// err reports the first problem, with a count and a list of the others.
func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	first := v.errs[0]
	if len(v.errs) > 1 {
		var rest []string
		for _, e := range v.errs[1:] {
			rest = append(rest, e.Field+": "+e.Msg)
		}
		first.Msg += fmt.Sprintf(" (and %d more: %s)", len(rest), strings.Join(rest, "; "))
	}
	return &first
}

// position checks a [x, z] or [x, y, z] position inside the bounds.
func (v *validator) position(field string, p []float64, b world.Bounds) bool {
	if len(p) != 2 && len(p) != 3 {
		v.add(field, fmt.Sprintf("must be [x, z] or [x, y, z], got %d numbers", len(p)))
		return false
	}
	x, z := p[0], zOf(p)
	if !finite(p...) {
		v.add(field, "must be finite numbers")
		return false
	}
	if !b.Contains(x, z) {
		v.add(field, fmt.Sprintf("(%g, %g) is outside the world (x in [%g, %g], z in [%g, %g])", x, z, b.MinX, b.MaxX, b.MinZ, b.MaxZ))
		return false
	}
	return true
}

// clearOf refuses a point placed inside an obstacle.
func (v *validator) clearOf(field string, p []float64, obstacles []ObstacleSpec) {
	x, z := p[0], zOf(p)
	for _, o := range obstacles {
		if len(o.Position) < 2 {
			continue
		}
		ox, oz := o.Position[0], zOf(o.Position)
		inside := false
		if o.Shape == "box" {
			inside = x > ox-o.Size[0]/2 && x < ox+o.Size[0]/2 && z > oz-o.Size[1]/2 && z < oz+o.Size[1]/2
		} else {
			inside = (x-ox)*(x-ox)+(z-oz)*(z-oz) < o.Radius*o.Radius
		}
		if inside {
			v.add(field, fmt.Sprintf("(%g, %g) is inside obstacle %q", x, z, o.Name))
			return
		}
	}
}

func (v *validator) terrain(t TerrainSpec) {
	if !finite(t.Base) || math.Abs(t.Base) > maxDistance {
		v.add("terrain.base", fmt.Sprintf("must be between -%g and %g, got %g", maxDistance, maxDistance, t.Base))
	}
	if len(t.Heights) == 0 {
		return
	}
	cols := len(t.Heights[0])
	for i, row := range t.Heights {
		if len(row) != cols || cols == 0 {
			v.add(fmt.Sprintf("terrain.heights[%d]", i), fmt.Sprintf("has %d values; every row must have the same non-zero length (%d)", len(row), cols))
			return
		}
		for _, h := range row {
			if !finite(h) || math.Abs(h) > maxDistance {
				v.add(fmt.Sprintf("terrain.heights[%d]", i), fmt.Sprintf("heights must be between -%g and %g, got %g", maxDistance, maxDistance, h))
				break
			}
		}
	}
}

// Upper limits on numbers in scenario files: far beyond any sensible world,
// low enough that no arithmetic on them overflows.
const (
	maxDistance = 1e4 // ranges, radii, sizes, speeds (units or units per second)
	maxAmount   = 1e6 // health, damage
)

func (v *validator) rules(r RulesSpec) {
	within := func(name string, x, hi float64) {
		if x < 0 || x > hi || !finite(x) {
			v.add("rules."+name, fmt.Sprintf("must be between 0 and %g, got %g", hi, x))
		}
	}
	within("perception_radius", r.PerceptionRadius, maxDistance)
	within("collect_range", r.CollectRange, maxDistance)
	within("craft_range", r.CraftRange, maxDistance)
	within("comm_range", r.CommRange, maxDistance)
	within("query_radius", r.QueryRadius, maxDistance)
	within("max_query_radius", r.MaxQueryRadius, maxDistance)
	within("max_health", r.MaxHealth, maxAmount)
	within("agent_radius", r.AgentRadius, 5)
	within("base_speed", r.BaseSpeed, 1000)
	within("max_speed_multiplier", r.MaxSpeedMultiplier, 100)
	within("arrival_tolerance", r.ArrivalTolerance, maxDistance)
	within("stuck_seconds", r.StuckSeconds, 3600)
	if r.QueryRadius > 0 && r.MaxQueryRadius > 0 && r.QueryRadius > r.MaxQueryRadius {
		v.add("rules.query_radius", fmt.Sprintf("the default query radius %g is larger than max_query_radius %g", r.QueryRadius, r.MaxQueryRadius))
	}
	if r.MessageDropProb < 0 || r.MessageDropProb > 1 {
		v.add("rules.message_drop_probability", fmt.Sprintf("must be between 0 and 1, got %g", r.MessageDropProb))
	}
	if r.MaxMessageLen < 0 || r.InventoryCapacity < 0 || r.ToolCallLimit < 0 {
		v.add("rules", "max_message_length, inventory_capacity and tool_call_limit must not be negative")
	}
	if r.HazardCost < 0 || r.HazardCost > 255 {
		v.add("rules.hazard_cost", fmt.Sprintf("must be between 1 and 255, got %d", r.HazardCost))
	}
	if r.MaxNearbyAgents < 0 || r.MaxNearbyAgents > 10000 {
		v.add("rules.max_nearby_agents", fmt.Sprintf("must be between 0 (the default, 16) and 10000, got %d", r.MaxNearbyAgents))
	}
	if r.ClusterSize < 0 || (r.ClusterSize > 0 && r.ClusterSize < 4) {
		v.add("rules.cluster_size", fmt.Sprintf("must be at least 4, got %d", r.ClusterSize))
	}
}

// componentMetrics lists the metrics the scenario's components define (those
// that list them with MetricNames), which its objective may name.
func (s *Scenario) componentMetrics() []string {
	var names []string
	for _, c := range s.Components {
		comp, err := components.New(c.Type, c.Config)
		if err != nil {
			continue // reported by validateComponents
		}
		if mn, ok := comp.(interface{ MetricNames() []string }); ok {
			names = append(names, mn.MetricNames()...)
		}
	}
	return names
}

// validateComponents checks the components (each is built once from its
// config), the variables and the schedule.
func (s *Scenario) validateComponents(v *validator) {
	seen := map[string]bool{}
	for i, c := range s.Components {
		field := fmt.Sprintf("components[%d]", i)
		if seen[c.Type] {
			v.add(field, fmt.Sprintf("component %q is switched on twice", c.Type))
			continue
		}
		seen[c.Type] = true
		if _, err := components.New(c.Type, c.Config); err != nil {
			v.add(field, err.Error())
		}
	}
	for name, val := range s.Variables {
		switch val.(type) {
		case float64, string, bool:
		default:
			v.add("variables."+name, "must be a number, text or a boolean")
		}
	}
	for i, e := range s.Schedule {
		field := fmt.Sprintf("schedule[%d]", i)
		if e.Type == "" {
			v.add(field+".type", "is required")
		}
		if e.Tick < 0 || (s.TimeLimit() > 0 && e.Tick >= s.TimeLimit()) {
			v.add(field+".tick", fmt.Sprintf("must be from 0 to the time limit (%d), got %d", s.TimeLimit(), e.Tick))
		}
	}
}
