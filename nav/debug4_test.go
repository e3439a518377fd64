package nav

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

func TestDebugPull(t *testing.T) {
	name := os.Getenv("DBG_MAP")
	idx, err := strconv.Atoi(os.Getenv("DBG_IDX"))
	if name == "" || err != nil {
		t.Skip()
	}
	dir, _ := movingAIDir()
	g, probs := loadMovingAIFiles(t, dir+"/"+name+".map", dir+"/"+name+".map.scen")
	p := NewPlanner(g, Options{})
	pr := probs[idx]
	path, _ := p.FindPath(pr.Start.Center(), pr.Goal.Center())
	for i := 1; i < len(path); i++ {
		fmt.Printf("%d %#v -> %#v los=%v\n", i, path[i-1], path[i], g.LineOfSight(path[i-1], path[i], Costly))
	}
}
