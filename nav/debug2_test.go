package nav

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

func TestDebugShow(t *testing.T) {
	name := os.Getenv("DBG_MAP")
	idx, err := strconv.Atoi(os.Getenv("DBG_IDX"))
	if name == "" || err != nil {
		t.Skip()
	}
	dir, _ := movingAIDir()
	g, probs := loadMovingAIFiles(t, dir+"/"+name+".map", dir+"/"+name+".map.scen")
	p := NewPlanner(g, Options{})
	pr := probs[idx]
	route, _ := p.FindCells(pr.Start, pr.Goal)
	path, _ := p.FindPath(pr.Start.Center(), pr.Goal.Center())
	fmt.Println(path, PathLength(path), pr.Optimal)
	on := map[Cell]bool{}
	for _, c := range route {
		on[c] = true
	}
	x0, x1 := min(pr.Start.X, pr.Goal.X)-4, max(pr.Start.X, pr.Goal.X)+4
	y0, y1 := min(pr.Start.Y, pr.Goal.Y)-4, max(pr.Start.Y, pr.Goal.Y)+4
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			c := Cell{x, y}
			ch := "."
			if g.At(c) == Blocked {
				ch = "#"
			}
			if on[c] {
				ch = "o"
			}
			if c == pr.Start {
				ch = "S"
			}
			if c == pr.Goal {
				ch = "G"
			}
			fmt.Print(ch)
		}
		fmt.Println()
	}
}
