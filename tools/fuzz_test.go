package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/arena-sim/arena/internal/testutil"
	"github.com/arena-sim/arena/tools"
	"github.com/arena-sim/arena/world"
)

// FuzzValidate throws arbitrary parameters at every tool: each call must come
// back with a success or a known error code, never a panic, and the world must
// still step afterwards.
func FuzzValidate(f *testing.F) {
	f.Add("move_to", []byte(`{"target":[1,0,1],"speed":1.5}`))
	f.Add("move_to", []byte(`{"target_x":1e308,"target_z":-1e308}`))
	f.Add("collect", []byte(`{"target_name":"Berry1"}`))
	f.Add("craft", []byte(`{"item_name":"meal","station_name":"Workbench1"}`))
	f.Add("query_world", []byte(`{"radius":20,"filter_type":"resource"}`))
	f.Add("send_message", []byte(`{"message":"hi","target_agent":"a2"}`))
	f.Add("nope", []byte(`{"x":[[[[]]]]}`))
	w := testutil.World(f, testutil.Config())
	reg, err := tools.ForWorld(w)
	if err != nil {
		f.Fatal(err)
	}
	codes := map[string]bool{"": true}
	for _, c := range []string{world.CodeOutOfRange, world.CodeNotFound, world.CodeMissingMaterials, world.CodeInvalidParams,
		world.CodeBusy, world.CodeUnknownTool, world.CodeNotAllowed, world.CodeNoPath, world.CodeInventoryFull,
		world.CodeLimitExceeded, world.CodeNotAQuery, world.CodeTimeout, world.CodeDead} {
		codes[c] = true
	}
	f.Fuzz(func(t *testing.T, tool string, raw []byte) {
		var params map[string]any
		if json.Unmarshal(raw, &params) != nil {
			params = map[string]any{"raw": string(raw)}
		}
		for _, asQuery := range []bool{false, true} {
			res := reg.Execute(w, "a1", tool, params, asQuery)
			if !codes[res.ErrorCode] {
				t.Fatalf("unknown error code %q", res.ErrorCode)
			}
			if !res.Success && (res.ErrorCode == "" || res.ErrorMessage == "") {
				t.Fatalf("a failure needs a code and a message: %+v", res)
			}
		}
		w.Step()
	})
}
