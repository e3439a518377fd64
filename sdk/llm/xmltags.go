package llm

import (
	"fmt"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
)

// TagStatus says what FindTag found in a model's text.
type TagStatus int

const (
	// TagNone: no tool tag, and none being written at the end of the text.
	TagNone TagStatus = iota
	// TagIncomplete: a tool tag has begun but the text ends before it is
	// closed; wait for more text (or, when the model has finished, see
	// Tag.Diagnostic).
	TagIncomplete
	// TagComplete: a whole tool tag, with its tool and argument.
	TagComplete
	// TagMalformed: something that is meant as a tool tag but cannot be
	// run; Tag.Diagnostic tells the model how to fix it.
	TagMalformed
)

func (s TagStatus) String() string {
	return [...]string{"none", "incomplete", "complete", "malformed"}[s]
}

// Tag is the first tool tag of a text.
type Tag struct {
	Status TagStatus
	Tool   string // the tool's name
	// Arg is the text between the opening and the closing tag, trimmed ("" for
	// a self-closing tag).
	Arg string
	// Start and End delimit the tag in the text (End is one past its last
	// byte); for an incomplete tag End is the text's length.
	Start, End int
	// Diagnostic is, for a malformed tag (and an incomplete one), a message
	// the model can act on.
	Diagnostic string
}

// TagParser finds tool tags in model text, such as
//
//	<get_role_details>Investigator</get_role_details>
//	<get_investigation_results />
//	<check_will>Player 3</check_will>
//
// Only the names of registered tools are tool tags. Other tags (<thinking>,
// <b>, <observation>) are prose and are ignored, with one exception: a
// snake_case name that is not a tool but is within a small edit distance of
// one (<get_role_detail>) is reported as malformed with a "did you mean"
// diagnostic, since the model clearly meant a tool and would otherwise wait
// for an observation that never comes.
type TagParser struct {
	tools []string
	known map[string]bool
}

// NewTagParser returns a parser for the given tool names.
func NewTagParser(tools []string) *TagParser {
	p := &TagParser{known: map[string]bool{}}
	for _, t := range tools {
		if t != "" && !p.known[t] {
			p.known[t] = true
			p.tools = append(p.tools, t)
		}
	}
	return p
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// couldBeTool says whether name, cut short by the end of the text, may be the
// beginning of a registered tool's name.
func (p *TagParser) couldBeTool(prefix string) bool {
	for _, t := range p.tools {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

// lookalike returns the registered tool that an unknown tag name seems to
// mean, or "".
func (p *TagParser) lookalike(name string) string {
	if !strings.Contains(name, "_") {
		return ""
	}
	best := fuzzy.Closest(name, p.tools)
	if best == "" || fuzzy.Distance(strings.ToLower(name), best) > max(2, len(best)/5) {
		return ""
	}
	return best
}

// Find returns the first tool tag of text: complete, incomplete (the text
// ends inside it: streamed text that has not arrived yet) or malformed. Text
// before it is free prose. Text after a complete tag is not looked at: the
// caller runs the tool, cuts the text at End, and injects the observation.
func (p *TagParser) Find(text string) Tag {
	for i := 0; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		j := i + 1
		closing := false
		if j < len(text) && text[j] == '/' {
			closing = true
			j++
		}
		k := j
		for k < len(text) && isNameByte(text[k]) {
			k++
		}
		name := text[j:k]
		if k == len(text) {
			// The text ends inside the name: it may become a tool tag.
			if (name == "" && !closing) || p.couldBeTool(name) {
				return Tag{Status: TagIncomplete, Start: i, End: len(text), Tool: name,
					Diagnostic: "your tool tag is not finished; close it, e.g. <tool>argument</tool> or <tool />"}
			}
			return Tag{Status: TagNone}
		}
		if name == "" {
			continue // "a < b"
		}
		if !p.known[name] {
			if best := p.lookalike(name); best != "" {
				return Tag{Status: TagMalformed, Tool: name, Start: i, End: k,
					Diagnostic: fmt.Sprintf("<%s> is not a tool; did you mean <%s>? Tools: %s", fuzzy.Clip(name), best, strings.Join(p.tools, ", "))}
			}
			continue
		}
		if closing {
			return Tag{Status: TagMalformed, Tool: name, Start: i, End: min(k+1, len(text)),
				Diagnostic: fmt.Sprintf("</%s> closes a tag that was never opened; write <%s>argument</%s>", name, name, name)}
		}
		return p.complete(text, i, k, name)
	}
	return Tag{Status: TagNone}
}

// complete reads the rest of the tag whose name ends at k.
func (p *TagParser) complete(text string, start, k int, name string) Tag {
	usage := fmt.Sprintf("<%s>argument</%s> or <%s />", name, name, name)
	m := k
	for m < len(text) && (text[m] == ' ' || text[m] == '\t' || text[m] == '\n' || text[m] == '\r') {
		m++
	}
	if m == len(text) {
		return Tag{Status: TagIncomplete, Tool: name, Start: start, End: len(text), Diagnostic: "the tag <" + name + " is not finished; write " + usage}
	}
	switch {
	case text[m] == '/':
		if m+1 == len(text) {
			return Tag{Status: TagIncomplete, Tool: name, Start: start, End: len(text), Diagnostic: "the tag <" + name + " / is not finished; write <" + name + " />"}
		}
		if text[m+1] == '>' {
			return Tag{Status: TagComplete, Tool: name, Start: start, End: m + 2}
		}
		return Tag{Status: TagMalformed, Tool: name, Start: start, End: m + 2, Diagnostic: "malformed self-closing tag; write <" + name + " />"}
	case text[m] == '>':
	default:
		// Attributes, or a stray character: <check_will player="3">.
		end := strings.IndexByte(text[m:], '>')
		if end < 0 {
			return Tag{Status: TagIncomplete, Tool: name, Start: start, End: len(text), Diagnostic: "the tag <" + name + " is not finished; write " + usage}
		}
		return Tag{Status: TagMalformed, Tool: name, Start: start, End: m + end + 1,
			Diagnostic: fmt.Sprintf("tool tags take no attributes; put the argument between the tags: %s", usage)}
	}
	body := m + 1
	closeTag := "</" + name + ">"
	rest := text[body:]
	c := strings.Index(rest, closeTag)
	limit := len(rest)
	if c >= 0 {
		limit = c
	}
	// Another tool tag inside the argument: nested or unclosed.
	inner := p.Find(rest[:limit])
	if inner.Status == TagComplete || inner.Status == TagMalformed || (inner.Status == TagIncomplete && c >= 0 && inner.Tool != "") {
		if inner.Tool != "" && p.known[inner.Tool] {
			at := body + inner.Start
			if strings.HasPrefix(text[at:], "</") {
				return Tag{Status: TagMalformed, Tool: name, Start: start, End: at + len(inner.Tool) + 3,
					Diagnostic: fmt.Sprintf("<%s> is closed by </%s>; close it with %s", name, inner.Tool, closeTag)}
			}
			return Tag{Status: TagMalformed, Tool: name, Start: start, End: min(body+limit+len(closeTag), len(text)),
				Diagnostic: fmt.Sprintf("tool tags cannot be nested: close <%s> with %s before opening <%s>, and call one tool at a time", name, closeTag, inner.Tool)}
		}
	}
	if c < 0 {
		// Still being written, unless it is only a prefix of the closing tag.
		return Tag{Status: TagIncomplete, Tool: name, Start: start, End: len(text),
			Diagnostic: fmt.Sprintf("<%s> was never closed; write %s", name, usage)}
	}
	return Tag{Status: TagComplete, Tool: name, Arg: strings.TrimSpace(rest[:c]), Start: start, End: body + c + len(closeTag)}
}

// FormatObservation wraps a tool's result, or an error message, as the text
// injected back into the model's context.
func FormatObservation(s string) string {
	return "<observation>\n" + strings.TrimSpace(s) + "\n</observation>"
}
