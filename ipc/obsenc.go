package ipc

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/arena-sim/arena/world"
)

// obsEncoder encodes world.Observation's own fields without reflection, for
// the observations a server sends (with SharedEncodings): the struct plan
// reads every field that is not a number or a string through
// reflect.Value.Field and checks each omitempty one the same way, which was
// most of encoding an observation once its entities in view were kept. The
// current action and the last action's result are written out too; what is
// rare or nested (a query's answer, components' sections, events, messages,
// the result's data) still goes to the field's compiled plan.
//
// It is built from the struct's fields as reflect sees them, in the order
// of their encoded names; a field it does not know, or one whose omitempty
// it has wrong, leaves it unbuilt, and observations then take the struct
// plan (TestObservationEncoderKnowsEveryField fails first).
type obsEncoder struct {
	fields []obsField
}

// obsField is one field of world.Observation: empty, set for omitempty
// fields only, reports whether it is left out; enc appends its value.
type obsField struct {
	key      []byte
	agentIDs bool // the roster, left out of observations without it
	empty    func(o *world.Observation) bool
	enc      func(b []byte, o *world.Observation, sh *SharedEncodings) ([]byte, error)
}

// newObsEncoder builds the encoder, or returns nil if world.Observation has
// fields it does not know.
func (e *fastEncoder) newObsEncoder() *obsEncoder {
	t := reflect.TypeFor[world.Observation]()
	views := e.planFor(reflect.TypeFor[world.EntityView]()).views
	if views == nil {
		return nil
	}
	type known struct {
		omitEmpty bool
		empty     func(o *world.Observation) bool
		enc       func(b []byte, o *world.Observation, sh *SharedEncodings) ([]byte, error)
	}
	plain := func(f func(b []byte, o *world.Observation) []byte) func([]byte, *world.Observation, *SharedEncodings) ([]byte, error) {
		return func(b []byte, o *world.Observation, _ *SharedEncodings) ([]byte, error) { return f(b, o), nil }
	}
	list := func(get func(o *world.Observation) []world.EntityView) func([]byte, *world.Observation, *SharedEncodings) ([]byte, error) {
		return func(b []byte, o *world.Observation, s *SharedEncodings) ([]byte, error) {
			return appendViews(b, get(o), views, s), nil
		}
	}
	// planned encodes a field with its compiled plan (field is the
	// field's address), and a part the observations share (sharedFields)
	// once per decision point.
	planned := func(name string, field func(o *world.Observation) any) func([]byte, *world.Observation, *SharedEncodings) ([]byte, error) {
		var f reflect.StructField
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name {
				f = t.Field(i)
			}
		}
		if f.Type == nil {
			return nil // no such field: newObsEncoder gives up
		}
		p, index, shared := e.planFor(f.Type), f.Index[0], sharedFields[t][name]
		return func(b []byte, o *world.Observation, s *SharedEncodings) ([]byte, error) {
			v := reflect.ValueOf(field(o)).Elem()
			if shared {
				return s.appendShared(b, index, p, v)
			}
			return p.append(b, v)
		}
	}
	result := e.newResultEncoder()
	if result == nil || !knowsFields(reflect.TypeFor[world.ActionStatus](), actionStatusFields) {
		return nil
	}
	fields := map[string]known{
		"tick":               {enc: plain(func(b []byte, o *world.Observation) []byte { return appendInt(b, int64(o.Tick)) })},
		"agent_id":           {enc: plain(func(b []byte, o *world.Observation) []byte { return appendText(b, o.AgentID) })},
		"team":               {omitEmpty: true, empty: func(o *world.Observation) bool { return o.Team == "" }, enc: plain(func(b []byte, o *world.Observation) []byte { return appendText(b, o.Team) })},
		"position":           {enc: plain(func(b []byte, o *world.Observation) []byte { return appendVec3(b, &o.Position) })},
		"velocity":           {enc: plain(func(b []byte, o *world.Observation) []byte { return appendVec3(b, &o.Velocity) })},
		"facing":             {enc: plain(func(b []byte, o *world.Observation) []byte { return appendFloat(b, o.Facing, true) })},
		"health":             {enc: plain(func(b []byte, o *world.Observation) []byte { return appendFloat(b, o.Health, true) })},
		"max_health":         {enc: plain(func(b []byte, o *world.Observation) []byte { return appendFloat(b, o.MaxHealth, true) })},
		"alive":              {enc: plain(func(b []byte, o *world.Observation) []byte { return appendBool(b, o.Alive) })},
		"perception_radius":  {enc: plain(func(b []byte, o *world.Observation) []byte { return appendFloat(b, o.PerceptionRadius, true) })},
		"inventory":          {enc: plain(func(b []byte, o *world.Observation) []byte { return appendStringMap(b, o.Inventory, appendInt64[int]) })},
		"inventory_used":     {enc: plain(func(b []byte, o *world.Observation) []byte { return appendInt(b, int64(o.InventoryUsed)) })},
		"inventory_capacity": {enc: plain(func(b []byte, o *world.Observation) []byte { return appendInt(b, int64(o.InventoryCap)) })},
		"nearby_resources":   {enc: list(func(o *world.Observation) []world.EntityView { return o.NearbyResources })},
		"nearby_hazards":     {enc: list(func(o *world.Observation) []world.EntityView { return o.NearbyHazards })},
		"nearby_stations":    {enc: list(func(o *world.Observation) []world.EntityView { return o.NearbyStations })},
		"nearby_agents":      {enc: list(func(o *world.Observation) []world.EntityView { return o.NearbyAgents })},
		"nearby_agents_more": {omitEmpty: true, empty: func(o *world.Observation) bool { return o.NearbyAgentsMore == 0 },
			enc: plain(func(b []byte, o *world.Observation) []byte { return appendInt(b, int64(o.NearbyAgentsMore)) })},
		"nearby_obstacles": {enc: list(func(o *world.Observation) []world.EntityView { return o.NearbyObstacles })},
		"capture_points": {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.CapturePoints) == 0 },
			enc: list(func(o *world.Observation) []world.EntityView { return o.CapturePoints })},
		"teammates": {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.Teammates) == 0 },
			enc: list(func(o *world.Observation) []world.EntityView { return o.Teammates })},
		"team_scores": {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.TeamScores) == 0 },
			enc: plain(func(b []byte, o *world.Observation) []byte { return appendStringMap(b, o.TeamScores, appendInt64[int]) })},
		"available_recipes": {enc: planned("available_recipes", func(o *world.Observation) any { return &o.AvailableRecipes })},
		"messages":          {enc: planned("messages", func(o *world.Observation) any { return &o.Messages })},
		"agent_ids": {enc: plain(func(b []byte, o *world.Observation) []byte {
			if o.AgentIDs == nil {
				return append(b, 0xf6)
			}
			b = appendHead(b, 0x80, uint64(len(o.AgentIDs)))
			for _, id := range o.AgentIDs {
				b = appendText(b, id)
			}
			return b
		})},
		"current_action":     {enc: plain(func(b []byte, o *world.Observation) []byte { return appendActionStatus(b, &o.CurrentAction) })},
		"last_action_result": {enc: result},
		"query_result":       {omitEmpty: true, empty: func(o *world.Observation) bool { return o.QueryResult == nil }, enc: planned("query_result", func(o *world.Observation) any { return &o.QueryResult })},
		"inventory_details":  {omitEmpty: true, empty: func(o *world.Observation) bool { return o.InventoryDetails == nil }, enc: planned("inventory_details", func(o *world.Observation) any { return &o.InventoryDetails })},
		"objective":          {omitEmpty: true, empty: func(o *world.Observation) bool { return o.Objective == nil }, enc: planned("objective", func(o *world.Observation) any { return &o.Objective })},
		"current_progress": {enc: plain(func(b []byte, o *world.Observation) []byte {
			return appendStringMap(b, o.CurrentProgress, appendFloat64)
		})},
		"score":      {enc: plain(func(b []byte, o *world.Observation) []byte { return appendFloat(b, o.Score, true) })},
		"components": {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.Components) == 0 }, enc: planned("components", func(o *world.Observation) any { return &o.Components })},
		"events":     {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.Events) == 0 }, enc: planned("events", func(o *world.Observation) any { return &o.Events })},
		"variables":  {omitEmpty: true, empty: func(o *world.Observation) bool { return len(o.Variables) == 0 }, enc: planned("variables", func(o *world.Observation) any { return &o.Variables })},
		"variables_text": {omitEmpty: true, empty: func(o *world.Observation) bool { return o.VariablesText == "" },
			enc: plain(func(b []byte, o *world.Observation) []byte { return appendText(b, o.VariablesText) })},
	}
	oe := &obsEncoder{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		k, ok := fields[name]
		if !ok || k.enc == nil || k.omitEmpty != (opts == "omitempty") || f.Tag.Get("cbor") != "" {
			return nil
		}
		delete(fields, name)
		oe.fields = append(oe.fields, obsField{key: appendText(nil, name), agentIDs: name == "agent_ids", empty: k.empty, enc: k.enc})
	}
	if len(fields) > 0 {
		return nil
	}
	slices.SortFunc(oe.fields, func(a, b obsField) int { return bytes.Compare(a.key, b.key) })
	return oe
}

// encode appends o, without agent_ids when omitAgentIDs.
func (oe *obsEncoder) encode(b []byte, o *world.Observation, omitAgentIDs bool, s *SharedEncodings) ([]byte, error) {
	n := 0
	for i := range oe.fields {
		f := &oe.fields[i]
		if (f.empty == nil || !f.empty(o)) && !(f.agentIDs && omitAgentIDs) {
			n++
		}
	}
	b = appendHead(b, 0xa0, uint64(n))
	var err error
	for i := range oe.fields {
		f := &oe.fields[i]
		if (f.empty != nil && f.empty(o)) || (f.agentIDs && omitAgentIDs) {
			continue
		}
		if b, err = f.enc(append(b, f.key...), o, s); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendViews appends a list of entities in view, each from its kept
// encoding (SharedEncodings.appendView).
func appendViews(b []byte, views []world.EntityView, vp *viewPlan, s *SharedEncodings) []byte {
	if views == nil {
		return append(b, 0xf6)
	}
	b = appendHead(b, 0x80, uint64(len(views)))
	for i := range views {
		b = s.appendView(b, vp, unsafe.Pointer(&views[i]))
	}
	return b
}

func appendVec3(b []byte, v *world.Vec3) []byte {
	return appendFloat(appendFloat(appendFloat(append(b, 0x83), v[0], true), v[1], true), v[2], true)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xf5)
	}
	return append(b, 0xf4)
}

// knowsFields reports whether the exported fields of struct t are exactly
// fields, by their json names, with the same omitempty, and no cbor tags.
func knowsFields(t reflect.Type, fields map[string]bool) bool {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if omit, ok := fields[name]; !ok || omit != (opts == "omitempty") || f.Tag.Get("cbor") != "" {
			return false
		}
		n++
	}
	return n == len(fields)
}

// actionStatusFields are world.ActionStatus's, with their omitempty.
var actionStatusFields = map[string]bool{"tool": true, "status": false, "target": true, "path": true, "item": true,
	"ticks_remaining": true, "error_code": true, "detail": true, "speed": true}

// appendActionStatus appends a, its fields in the order of their encoded
// names (actionStatusFields).
func appendActionStatus(b []byte, a *world.ActionStatus) []byte {
	n := 1 // status
	for _, full := range [...]bool{a.Item != "", len(a.Path) > 0, a.Tool != "", a.Speed != 0, a.Detail != "",
		a.Target != nil, a.ErrorCode != "", a.Ticks != 0} {
		if full {
			n++
		}
	}
	b = append(b, 0xa0|byte(n))
	if a.Item != "" {
		b = appendText(append(b, "\x64item"...), a.Item)
	}
	if len(a.Path) > 0 {
		b = appendHead(append(b, "\x64path"...), 0x80, uint64(len(a.Path)))
		for i := range a.Path {
			b = appendVec3(b, &a.Path[i])
		}
	}
	if a.Tool != "" {
		b = appendText(append(b, "\x64tool"...), a.Tool)
	}
	if a.Speed != 0 {
		b = appendFloat(append(b, "\x65speed"...), a.Speed, true)
	}
	if a.Detail != "" {
		b = appendText(append(b, "\x66detail"...), a.Detail)
	}
	b = appendText(append(b, "\x66status"...), a.Status)
	if a.Target != nil {
		b = appendVec3(append(b, "\x66target"...), a.Target)
	}
	if a.ErrorCode != "" {
		b = appendText(append(b, "\x6aerror_code"...), a.ErrorCode)
	}
	if a.Ticks != 0 {
		b = appendInt(append(b, "\x6fticks_remaining"...), int64(a.Ticks))
	}
	return b
}

// newResultEncoder returns the encoder of world.Observation's
// last_action_result (a *world.ActionResult), or nil if it does not know
// the struct's fields. Its data, when it has any, goes to the map's plan.
func (e *fastEncoder) newResultEncoder() func([]byte, *world.Observation, *SharedEncodings) ([]byte, error) {
	if !knowsFields(reflect.TypeFor[world.ActionResult](), map[string]bool{"tool": false, "success": false,
		"error_code": true, "error_message": true, "data": true, "tick": false}) {
		return nil
	}
	data := e.planFor(reflect.TypeFor[map[string]any]())
	return func(b []byte, o *world.Observation, _ *SharedEncodings) ([]byte, error) {
		r := o.LastActionResult
		if r == nil {
			return append(b, 0xf6), nil
		}
		n := 3
		for _, full := range [...]bool{len(r.Data) > 0, r.ErrorCode != "", r.ErrorMessage != ""} {
			if full {
				n++
			}
		}
		b = append(b, 0xa0|byte(n))
		if len(r.Data) > 0 {
			var err error
			if b, err = data.append(append(b, "\x64data"...), reflect.ValueOf(&r.Data).Elem()); err != nil {
				return nil, err
			}
		}
		b = appendInt(append(b, "\x64tick"...), int64(r.Tick))
		b = appendText(append(b, "\x64tool"...), r.Tool)
		b = appendBool(append(b, "\x67success"...), r.Success)
		if r.ErrorCode != "" {
			b = appendText(append(b, "\x6aerror_code"...), r.ErrorCode)
		}
		if r.ErrorMessage != "" {
			b = appendText(append(b, "\x6derror_message"...), r.ErrorMessage)
		}
		return b, nil
	}
}
