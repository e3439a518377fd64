package world

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Add appends a line to the panel, formatted as by fmt.Sprintf. The line is
// made one line of valid text (control characters such as line breaks become
// spaces) and clipped to PanelWidth characters; once the panel has
// PanelLines lines, further lines are dropped.
func (p *Panel) Add(format string, args ...any) {
	if p.Room() == 0 {
		return
	}
	p.Lines = append(p.Lines, Clip(oneLine(fmt.Sprintf(format, args...)), PanelWidth))
}

// Room is how many more lines the panel takes.
func (p *Panel) Room() int { return max(0, PanelLines-len(p.Lines)) }

// AddList packs items into lines of at most PanelWidth characters, separated
// by ", ": the first line starts with prefix, the others with an indent. It
// adds at most maxLines lines (and no more than the panel's room); items that
// do not fit are counted at the end of the last line as "+N more". An item
// longer than a line is clipped. Without items it adds nothing.
func (p *Panel) AddList(prefix string, items []string, maxLines int) {
	const sep, indent = ", ", "  "
	limit := min(maxLines, p.Room())
	if limit <= 0 || len(items) == 0 {
		return
	}
	prefix = oneLine(prefix)
	clean := make([]string, len(items))
	for i, it := range items {
		clean[i] = Clip(oneLine(it), PanelWidth-utf8.RuneCountInString(indent))
	}
	// join renders the line of items [from, to), the first line with prefix.
	join := func(first bool, from, to int) string {
		s := indent
		if first {
			s = prefix
		}
		return s + strings.Join(clean[from:to], sep)
	}
	var starts []int // the first item of each line
	for i := range clean {
		if len(starts) == 0 {
			starts = append(starts, i)
			continue
		}
		last := starts[len(starts)-1]
		if width(join(len(starts) == 1, last, i+1)) > PanelWidth {
			starts = append(starts, i)
		}
	}
	if len(starts) > limit {
		starts = starts[:limit]
		first := len(starts) == 1
		from := starts[limit-1]
		to := from
		for to < len(clean) && width(join(first, from, to+1)+sep+more(len(clean)-to-1)) <= PanelWidth {
			to++
		}
		var line string
		if to > from {
			line = join(first, from, to) + sep + more(len(clean)-to)
		} else {
			line = join(first, from, from) + more(len(clean)-to)
		}
		for i := 0; i < limit-1; i++ {
			p.Add("%s", join(i == 0, starts[i], starts[i+1]))
		}
		p.Add("%s", line)
		return
	}
	for i, s := range starts {
		end := len(clean)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		p.Add("%s", join(i == 0, s, end))
	}
}

func more(n int) string { return "+" + strconv.Itoa(n) + " more" }

func width(s string) int { return utf8.RuneCountInString(s) }

// Clip cuts s to at most n characters, marking a cut with "…" (n < 1 gives
// "").
func Clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// oneLine makes s valid UTF-8 with every control character a space.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
