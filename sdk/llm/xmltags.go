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
	tools   []string
	known   map[string]bool
	longest int // the longest tool name's length
}

// NewTagParser returns a parser for the given tool names.
func NewTagParser(tools []string) *TagParser {
	p := &TagParser{known: map[string]bool{}}
	for _, t := range tools {
		if t != "" && !p.known[t] {
			p.known[t] = true
			p.tools = append(p.tools, t)
			p.longest = max(p.longest, len(t))
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
// mean, or "". Names much longer than every tool's are not compared, so the
// edit distance costs no more than the tool names' lengths.
func (p *TagParser) lookalike(name string) string {
	if !strings.Contains(name, "_") || len(name) > p.longest+max(2, p.longest/5) {
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
//
// Find reads the text once, left to right, without recursion: its time is
// linear in the text's length (and in the tool names' lengths), however
// deeply tags nest. The Python SDK's TagParser follows the same contract;
// sdk/testdata/xmltags.json holds the cases both must agree on.
func (p *TagParser) Find(text string) Tag {
	for i := 0; i < len(text); {
		lt := strings.IndexByte(text[i:], '<')
		if lt < 0 {
			break
		}
		at := i + lt
		closing, name, k := tagName(text, at)
		if k == len(text) {
			// The text ends inside the name: it may become a tool tag.
			if (name == "" && !closing) || p.couldBeTool(name) {
				return Tag{Status: TagIncomplete, Start: at, End: len(text), Tool: name,
					Diagnostic: "your tool tag is not finished; close it, e.g. <tool>argument</tool> or <tool />"}
			}
			return Tag{Status: TagNone}
		}
		i = max(k, at+1)
		if name == "" {
			continue // "a < b"
		}
		if !p.known[name] {
			if best := p.lookalike(name); best != "" {
				return Tag{Status: TagMalformed, Tool: name, Start: at, End: k,
					Diagnostic: fmt.Sprintf("<%s> is not a tool; did you mean <%s>? Tools: %s", fuzzy.Clip(name), best, strings.Join(p.tools, ", "))}
			}
			continue
		}
		if closing {
			return Tag{Status: TagMalformed, Tool: name, Start: at, End: min(k+1, len(text)),
				Diagnostic: fmt.Sprintf("</%s> closes a tag that was never opened; write <%s>argument</%s>", name, name, name)}
		}
		return p.complete(text, at, k, name)
	}
	return Tag{Status: TagNone}
}

// tagName reads the name of the tag that opens at text[at] ('<'): whether
// it is a closing tag, the name, and the index just past the name.
func tagName(text string, at int) (closing bool, name string, end int) {
	j := at + 1
	if j < len(text) && text[j] == '/' {
		closing = true
		j++
	}
	k := j
	for k < len(text) && isNameByte(text[k]) {
		k++
	}
	return closing, text[j:k], k
}

// skipSpace returns the index of the first byte at or after i that is not
// white space (space, tab, newline, carriage return, form feed, vertical tab).
func skipSpace(text string, i int) int {
	for i < len(text) && strings.IndexByte(space, text[i]) >= 0 {
		i++
	}
	return i
}

// space is what an argument is trimmed of, in both SDKs: ASCII white space
// only, never other control characters.
const space = " \t\n\r\f\v"

// complete reads the rest of the tag whose name ends at k.
func (p *TagParser) complete(text string, start, k int, name string) Tag {
	usage := fmt.Sprintf("<%s>argument</%s> or <%s />", name, name, name)
	m := skipSpace(text, k)
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
	unclosed := Tag{Status: TagIncomplete, Tool: name, Start: start, End: len(text),
		Diagnostic: fmt.Sprintf("<%s> was never closed; write %s", name, usage)}
	// Scan the argument for its closing tag; any other tool tag on the way
	// is an error (tags do not nest).
	for i := body; i < len(text); {
		lt := strings.IndexByte(text[i:], '<')
		if lt < 0 {
			break
		}
		at := i + lt
		closing, inner, k := tagName(text, at)
		i = max(k, at+1)
		if k == len(text) || !p.known[inner] {
			if k == len(text) {
				break // the text ends inside a name: still being written
			}
			continue // prose, or a tag that is not a tool
		}
		switch {
		case closing && inner == name:
			e := skipSpace(text, k)
			if e == len(text) {
				return unclosed
			}
			if text[e] == '>' {
				return Tag{Status: TagComplete, Tool: name, Arg: strings.Trim(text[body:at], space), Start: start, End: e + 1}
			}
		case closing:
			return Tag{Status: TagMalformed, Tool: name, Start: start, End: min(k+1, len(text)),
				Diagnostic: fmt.Sprintf("<%s> is closed by </%s>; close it with %s", name, inner, closeTag)}
		default:
			end := len(text)
			if c := strings.Index(text[at:], closeTag); c >= 0 {
				end = at + c + len(closeTag)
			}
			return Tag{Status: TagMalformed, Tool: name, Start: start, End: end,
				Diagnostic: fmt.Sprintf("tool tags cannot be nested: close <%s> with %s before opening <%s>, and call one tool at a time", name, closeTag, inner)}
		}
	}
	return unclosed
}

// FormatObservation wraps a tool's result, or an error message, as the text
// injected back into the model's context.
func FormatObservation(s string) string {
	return "<observation>\n" + strings.Trim(s, space) + "\n</observation>"
}
