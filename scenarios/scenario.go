// Package scenarios owns scenario files: their format, the built-in scenarios
// embedded in the binary, loading a user's own file, validation with errors that
// name the file, the field and what is wrong, and turning a scenario into a
// world.Config for a given seed and number of agents.
package scenarios

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/arena-sim/arena/components"
	"github.com/arena-sim/arena/world"
)

//go:embed builtin/*.json
var builtin embed.FS

// Scenario is a parsed and validated scenario file.
type Scenario struct {
	File string `json:"-"`
	// Raw is the file's bytes, kept so that journals can carry the exact scenario.
	Raw []byte `json:"-"`

	Name        string          `json:"name"`
	Description string          `json:"description"`
	Size        [2]float64      `json:"size"`   // width (x) and depth (z); the world is centred on 0
	Bounds      *BoundsSpec     `json:"bounds"` // alternative to size
	CellSize    float64         `json:"cell_size"`
	TickRate    float64         `json:"tick_rate"`
	Terrain     TerrainSpec     `json:"terrain"`
	Rules       RulesSpec       `json:"rules"`
	Items       []world.ItemDef `json:"items"`
	Recipes     []RecipeSpec    `json:"recipes"`
	Obstacles   []ObstacleSpec  `json:"obstacles"`
	Resources   []EntitySpec    `json:"resources"`
	Stations    []StationSpec   `json:"stations"`
	Hazards     []HazardSpec    `json:"hazards"`
	Points      []PointSpec     `json:"capture_points"`
	Capture     *CaptureSpec    `json:"capture"`
	Agents      AgentsSpec      `json:"agents"`
	Limits      LimitsSpec      `json:"limits"`
	Objective   world.Objective `json:"objective"`
	// Components switches world components on, in order (see docs/components.md).
	Components []ComponentSpec `json:"components"`
	// Variables are scenario variables every agent sees; components may
	// change them.
	Variables map[string]any `json:"variables"`
	// Schedule lists events published at given ticks (source "scheduled").
	Schedule []world.ScheduledEvent `json:"schedule"`
}

// ComponentSpec switches on one world component: its kind and its config.
type ComponentSpec struct {
	Type   string          `json:"type"`
	Config json.RawMessage `json:"config"`
}

// BoundsSpec gives the world rectangle explicitly: min [x, z] and max [x, z].
type BoundsSpec struct {
	Min [2]float64 `json:"min"`
	Max [2]float64 `json:"max"`
}

// TerrainSpec is the height field: flat at base, or a grid of heights.
type TerrainSpec struct {
	Base    float64     `json:"base"`
	Heights [][]float64 `json:"heights"`
}

// RulesSpec overrides world.Rules; zero fields keep the defaults.
type RulesSpec struct {
	PerceptionRadius   float64 `json:"perception_radius"`
	CollectRange       float64 `json:"collect_range"`
	CraftRange         float64 `json:"craft_range"`
	CommRange          float64 `json:"comm_range"`
	MessageDropProb    float64 `json:"message_drop_probability"`
	MaxMessageLen      int     `json:"max_message_length"`
	QueryRadius        float64 `json:"query_radius"`
	MaxQueryRadius     float64 `json:"max_query_radius"`
	InventoryCapacity  int     `json:"inventory_capacity"`
	MaxHealth          float64 `json:"max_health"`
	AgentRadius        float64 `json:"agent_radius"`
	BaseSpeed          float64 `json:"base_speed"`
	MaxSpeedMultiplier float64 `json:"max_speed_multiplier"`
	ArrivalTolerance   float64 `json:"arrival_tolerance"`
	StuckSeconds       float64 `json:"stuck_seconds"`
	HazardCost         int     `json:"hazard_cost"`
	ClusterSize        int     `json:"cluster_size"`
	MaxNearbyAgents    int     `json:"max_nearby_agents"`
	ToolCallLimit      int     `json:"tool_call_limit"`
}

// RecipeSpec is a recipe: inputs at a station type make output_count of output.
type RecipeSpec struct {
	Output      string         `json:"output"`
	OutputCount int            `json:"output_count"`
	Inputs      map[string]int `json:"inputs"`
	StationType string         `json:"station_type"`
	Ticks       int            `json:"ticks"`
}

// StationSpec places a crafting station: name, type and position.
type StationSpec struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Position []float64 `json:"position"`
}

// EntitySpec places a resource: name, type, position, the items one collection
// gives (default 1) and the ticks until it comes back (0: never).
type EntitySpec struct {
	Name         string    `json:"name"`
	Type         string    `json:"type"`
	Position     []float64 `json:"position"`
	Amount       int       `json:"amount"`
	RespawnTicks int       `json:"respawn_ticks"`
}

// ObstacleSpec places an obstacle: a circle (radius) or a box (size [x, z]).
type ObstacleSpec struct {
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	Position   []float64  `json:"position"`
	Shape      string     `json:"shape"`
	Radius     float64    `json:"radius"`
	Size       [2]float64 `json:"size"`
	Height     float64    `json:"height"`
	SeeThrough bool       `json:"see_through"`
}

// HazardSpec places a hazard.
type HazardSpec struct {
	Name            string    `json:"name"`
	Type            string    `json:"type"`
	Position        []float64 `json:"position"`
	Radius          float64   `json:"radius"`
	EntryDamage     float64   `json:"entry_damage"`
	DamagePerSecond float64   `json:"damage_per_second"`
}

// PointSpec places a capture point.
type PointSpec struct {
	Name     string    `json:"name"`
	Position []float64 `json:"position"`
	Radius   float64   `json:"radius"`
}

// CaptureSpec makes the capture points a team game (world.CaptureRules); zero
// fields keep the defaults.
type CaptureSpec struct {
	CaptureTicks      int `json:"capture_ticks"`
	PointsPerCapture  int `json:"points_per_capture"`
	PointsPerHoldTick int `json:"points_per_hold_tick"`
	WinScore          int `json:"win_score"`
}

// AgentsSpec describes the agent slots.
type AgentsSpec struct {
	Count     int         `json:"count"`  // default number of agents
	Max       int         `json:"max"`    // most agents the scenario allows
	Prefix    string      `json:"prefix"` // ids are prefix + 001, 002, ...
	Teams     []string    `json:"teams"`  // assigned in turn, if any
	Spawns    [][]float64 `json:"spawns"` // agent i starts at spawns[i] when given
	SpawnArea *BoundsSpec `json:"spawn_area"`
	Bot       string      `json:"bot"` // built-in controller for in-process agents
	Speed     float64     `json:"speed"`
	// TeamIDs names agents <team>_<n> (red_1, blue_1, red_2, ...) instead of prefix + number.
	TeamIDs bool `json:"team_ids"`
	// TeamSpawnAreas: agents of a team without a spawns entry start at a random
	// point of their team's rectangle.
	TeamSpawnAreas map[string]BoundsSpec `json:"team_spawn_areas"`
}

// LimitsSpec bounds the episode.
type LimitsSpec struct {
	// MaxTicks ends the episode when the objective sets no time limit; default 1000.
	MaxTicks int `json:"max_ticks"`
	// DecisionPeriod: agents decide every this many ticks; default 1.
	DecisionPeriod int `json:"decision_period"`
}

// Builtin lists the built-in scenario names, sorted.
func Builtin() []string {
	entries, _ := fs.ReadDir(builtin, "builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(names)
	return names
}

// Load returns a built-in scenario by name, or reads a scenario file by path.
func Load(nameOrPath string) (*Scenario, error) {
	return LoadContext(context.Background(), nameOrPath)
}

// LoadContext is Load, giving up on reading a file when ctx ends. A file
// must be a regular file of at most MaxFileSize bytes, and its texts at most
// MaxText characters.
func LoadContext(ctx context.Context, nameOrPath string) (*Scenario, error) {
	if data, err := builtin.ReadFile(path.Join("builtin", nameOrPath+".json")); err == nil && !strings.ContainsAny(nameOrPath, "/\\") {
		return Parse(nameOrPath+".json", data)
	}
	data, err := readFile(ctx, nameOrPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load scenario %q: not a built-in scenario (%s) and no such file", nameOrPath, strings.Join(Builtin(), ", "))
		}
		return nil, fmt.Errorf("load scenario %q: %w", nameOrPath, err)
	}
	sc, err := Parse(nameOrPath, data)
	if ext := strings.ToLower(path.Ext(nameOrPath)); err != nil && (ext == ".yaml" || ext == ".yml") {
		// JSON is YAML, so a .yaml file written in JSON loads; other YAML does not.
		return nil, fmt.Errorf("%w (scenario files are JSON, see docs/scenarios.md; JSON is valid YAML, so a .yaml file may hold it)", err)
	}
	return sc, err
}

// ValidationError is a problem in a scenario file.
type ValidationError struct {
	File  string
	Field string // JSON path, e.g. resources[3].position
	Msg   string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("scenario %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("scenario %s: %s: %s", e.File, e.Field, e.Msg)
}

// Parse decodes and validates a scenario file's contents.
func Parse(file string, data []byte) (*Scenario, error) {
	s := &Scenario{File: file, Raw: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return nil, decodeError(file, data, err)
	}
	if dec.More() {
		return nil, &ValidationError{File: file, Msg: "unexpected data after the scenario object"}
	}
	if err := checkTexts(file, data); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// jsonType names a Go kind the way a scenario author thinks of it.
func jsonType(kind string) string {
	switch kind {
	case "float64", "float32":
		return "a number"
	case "int", "int64", "uint64":
		return "a whole number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	}
	return kind
}

func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

func decodeError(file string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		l, c := lineCol(data, syn.Offset)
		return &ValidationError{File: file, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: %v", l, c, syn)}
	case errors.As(err, &typ):
		l, _ := lineCol(data, typ.Offset)
		if typ.Field == "" {
			return &ValidationError{File: file, Msg: fmt.Sprintf("a scenario file holds one JSON object, got JSON %s (line %d)", typ.Value, l)}
		}
		return &ValidationError{File: file, Field: typ.Field, Msg: fmt.Sprintf("must be %s, got JSON %s (line %d)", jsonType(typ.Type.Kind().String()), typ.Value, l)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return &ValidationError{File: file, Msg: "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")}
	}
	return &ValidationError{File: file, Msg: err.Error()}
}

// bounds returns the world rectangle.
func (s *Scenario) bounds() world.Bounds {
	if s.Bounds != nil {
		return world.Bounds{MinX: s.Bounds.Min[0], MinZ: s.Bounds.Min[1], MaxX: s.Bounds.Max[0], MaxZ: s.Bounds.Max[1]}
	}
	return world.Bounds{MinX: -s.Size[0] / 2, MinZ: -s.Size[1] / 2, MaxX: s.Size[0] / 2, MaxZ: s.Size[1] / 2}
}

// TimeLimit is the number of ticks an episode runs at most.
func (s *Scenario) TimeLimit() int {
	if s.Objective.TimeLimit > 0 {
		return s.Objective.TimeLimit
	}
	return s.Limits.MaxTicks
}

// ToolCallLimit is the number of mid-turn queries an agent may make per
// observation (failed calls included); default 10.
func (s *Scenario) ToolCallLimit() int { return s.Rules.ToolCallLimit }

// Options choose the variable parts of a world built from a scenario.
type Options struct {
	Seed uint64
	// SecretSeed seeds hidden information (world.Config.SecretSeed); zero
	// derives it from Seed.
	SecretSeed uint64
	Agents     int // 0: the scenario's default count
	// Ticks, when positive, replaces the scenario's time limit.
	Ticks int
	// Variables override the scenario's variables of the same names (a sweep
	// sets them); naming a variable the scenario does not declare is an error.
	Variables map[string]any
}

// AgentIDs returns the slot ids for n agents (0: the default count).
func (s *Scenario) AgentIDs(n int) []string {
	if n <= 0 {
		n = s.Agents.Count
	}
	ids := make([]string, n)
	for i := range ids {
		if t := s.Agents.Teams; s.Agents.TeamIDs && len(t) > 0 {
			ids[i] = fmt.Sprintf("%s_%d", t[i%len(t)], i/len(t)+1)
			continue
		}
		ids[i] = fmt.Sprintf("%s%03d", s.Agents.Prefix, i+1)
	}
	return ids
}

// Config builds the world config for a seed and a number of agents.
func (s *Scenario) Config(opt Options) (world.Config, error) {
	n := opt.Agents
	if n <= 0 {
		n = s.Agents.Count
	}
	if n > s.Agents.Max {
		return world.Config{}, fmt.Errorf("scenario %s allows at most %d agents, %d requested", s.Name, s.Agents.Max, n)
	}
	if t := s.Agents.Teams; s.Capture != nil && len(t) > 0 && n%len(t) != 0 {
		return world.Config{}, fmt.Errorf("scenario %s plays teams of equal size: %d agents cannot be split evenly between %d teams (%s); use a multiple of %d, at most %d",
			s.Name, n, len(t), strings.Join(t, ", "), len(t), s.Agents.Max)
	}
	b := s.bounds()
	cfg := world.Config{
		Name: s.Name, Seed: opt.Seed, SecretSeed: opt.SecretSeed, Bounds: b, TickRate: s.TickRate, CellSize: s.CellSize,
		Terrain: world.Terrain{Base: s.Terrain.Base, Heights: s.Terrain.Heights},
		Items:   s.Items, Objective: s.Objective,
		Rules: world.Rules{
			PerceptionRadius: s.Rules.PerceptionRadius, CollectRange: s.Rules.CollectRange, CraftRange: s.Rules.CraftRange,
			CommRange: s.Rules.CommRange, MessageDropProb: s.Rules.MessageDropProb, MaxMessageLen: s.Rules.MaxMessageLen,
			QueryRadius: s.Rules.QueryRadius, MaxQueryRadius: s.Rules.MaxQueryRadius, InventoryCapacity: s.Rules.InventoryCapacity,
			MaxHealth: s.Rules.MaxHealth, AgentRadius: s.Rules.AgentRadius, BaseSpeed: s.Rules.BaseSpeed,
			MaxSpeedMultiplier: s.Rules.MaxSpeedMultiplier, ArrivalTolerance: s.Rules.ArrivalTolerance,
			StuckSeconds: s.Rules.StuckSeconds, HazardCost: uint8(s.Rules.HazardCost), ClusterSize: s.Rules.ClusterSize,
			MaxNearbyAgents: s.Rules.MaxNearbyAgents,
		},
	}
	cfg.Variables, cfg.Schedule = s.Variables, s.Schedule
	if len(opt.Variables) > 0 {
		cfg.Variables = maps.Clone(s.Variables)
		for _, name := range slices.Sorted(maps.Keys(opt.Variables)) {
			if _, ok := s.Variables[name]; !ok {
				return world.Config{}, fmt.Errorf("scenario %s has no variable %q (it has: %s)", s.Name, name, strings.Join(slices.Sorted(maps.Keys(s.Variables)), ", "))
			}
			cfg.Variables[name] = opt.Variables[name]
		}
	}
	for _, c := range s.Components {
		comp, err := components.New(c.Type, c.Config)
		if err != nil {
			return world.Config{}, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		cfg.Components = append(cfg.Components, comp)
	}
	cfg.Objective.TimeLimit = s.TimeLimit()
	if opt.Ticks > 0 {
		cfg.Objective.TimeLimit = opt.Ticks
	}
	for _, r := range s.Recipes {
		cfg.Recipes = append(cfg.Recipes, world.Recipe{Output: r.Output, OutputCount: r.OutputCount, Inputs: r.Inputs, StationType: r.StationType, Ticks: r.Ticks})
	}
	for _, o := range s.Obstacles {
		cfg.Obstacles = append(cfg.Obstacles, world.ObstacleSpec{Name: o.Name, ObstacleType: o.Type, X: o.Position[0], Z: zOf(o.Position),
			Shape: o.Shape, Radius: o.Radius, SizeX: o.Size[0], SizeZ: o.Size[1], Height: o.Height, SeeThrough: o.SeeThrough})
	}
	for _, r := range s.Resources {
		cfg.Resources = append(cfg.Resources, world.ResourceSpec{Name: r.Name, ResourceType: r.Type, X: r.Position[0], Z: zOf(r.Position),
			Amount: r.Amount, RespawnTicks: r.RespawnTicks})
	}
	for _, st := range s.Stations {
		cfg.Stations = append(cfg.Stations, world.StationSpec{Name: st.Name, StationType: st.Type, X: st.Position[0], Z: zOf(st.Position)})
	}
	for _, h := range s.Hazards {
		cfg.Hazards = append(cfg.Hazards, world.HazardSpec{Name: h.Name, HazardType: h.Type, X: h.Position[0], Z: zOf(h.Position),
			Radius: h.Radius, EntryDamage: h.EntryDamage, DamagePerSecond: h.DamagePerSecond})
	}
	for _, p := range s.Points {
		cfg.Points = append(cfg.Points, world.CapturePointSpec{Name: p.Name, X: p.Position[0], Z: zOf(p.Position), Radius: p.Radius})
	}
	if c := s.Capture; c != nil {
		cfg.Capture = &world.CaptureRules{CaptureTicks: c.CaptureTicks, PointsPerCapture: c.PointsPerCapture,
			PointsPerHoldTick: c.PointsPerHoldTick, WinScore: c.WinScore}
	}
	rng := rand.New(rand.NewPCG(world.DeriveSeed(opt.Seed, "spawn"), 1))
	area := b
	if s.Agents.SpawnArea != nil {
		area = world.Bounds{MinX: s.Agents.SpawnArea.Min[0], MinZ: s.Agents.SpawnArea.Min[1], MaxX: s.Agents.SpawnArea.Max[0], MaxZ: s.Agents.SpawnArea.Max[1]}
	}
	for i, id := range s.AgentIDs(n) {
		spec := world.AgentSpec{ID: id, Speed: s.Agents.Speed}
		if len(s.Agents.Teams) > 0 {
			spec.Team = s.Agents.Teams[i%len(s.Agents.Teams)]
		}
		if i < len(s.Agents.Spawns) {
			spec.X, spec.Z = s.Agents.Spawns[i][0], zOf(s.Agents.Spawns[i])
		} else if ta, ok := s.Agents.TeamSpawnAreas[spec.Team]; ok && spec.Team != "" {
			spec.X = ta.Min[0] + rng.Float64()*(ta.Max[0]-ta.Min[0])
			spec.Z = ta.Min[1] + rng.Float64()*(ta.Max[1]-ta.Min[1])
		} else {
			spec.X = area.MinX + rng.Float64()*area.Width()
			spec.Z = area.MinZ + rng.Float64()*area.Depth()
		}
		cfg.Agents = append(cfg.Agents, spec)
	}
	return cfg, nil
}

// NewWorld builds a world from the scenario.
func (s *Scenario) NewWorld(opt Options) (*world.World, error) {
	cfg, err := s.Config(opt)
	if err != nil {
		return nil, err
	}
	w, err := world.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	return w, nil
}

// zOf reads z from a position written [x, z] or [x, y, z].
func zOf(p []float64) float64 {
	if len(p) == 2 {
		return p[1]
	}
	return p[2]
}

func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
