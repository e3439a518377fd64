package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var tagTools = []string{"get_role_details", "get_investigation_results", "check_will", "speak"}

func TestFindTagComplete(t *testing.T) {
	p := NewTagParser(tagTools)
	cases := []struct {
		text, tool, arg string
	}{
		{"I wonder. <get_role_details>Investigator</get_role_details> then", "get_role_details", "Investigator"},
		{"<get_investigation_results />", "get_investigation_results", ""},
		{"<get_investigation_results/>", "get_investigation_results", ""},
		{"<thinking>hmm <check_will> Player 3 </check_will></thinking>", "check_will", "Player 3"},
		{"a < b and <b>bold</b> <check_will>Player 1</check_will>", "check_will", "Player 1"},
	}
	for _, c := range cases {
		tag := p.Find(c.text)
		if tag.Status != TagComplete || tag.Tool != c.tool || tag.Arg != c.arg {
			t.Errorf("Find(%q) = %+v, want %s(%q)", c.text, tag, c.tool, c.arg)
			continue
		}
		if !strings.HasPrefix(c.text[tag.Start:], "<"+c.tool) || !strings.HasSuffix(c.text[:tag.End], ">") {
			t.Errorf("Find(%q): span %d:%d = %q", c.text, tag.Start, tag.End, c.text[tag.Start:tag.End])
		}
	}
}

// TestFindTagFragments feeds text one byte at a time, as a stream arrives:
// every prefix before the tag closes is incomplete (or none before it
// starts), and the first complete tag appears exactly when its last byte does.
func TestFindTagFragments(t *testing.T) {
	p := NewTagParser(tagTools)
	for _, text := range []string{
		"Let me check. <check_will>Player 3</check_will> and more",
		"ok <get_investigation_results /> done",
	} {
		start := strings.IndexByte(text, '<')
		end := strings.IndexByte(text[start:], '>')
		if text[start+1] == 'c' {
			end = strings.Index(text, "</check_will>") + len("</check_will>")
		} else {
			end += start + 1
		}
		for n := 0; n <= len(text); n++ {
			tag := p.Find(text[:n])
			switch {
			case n <= start:
				if tag.Status != TagNone {
					t.Fatalf("%q: %+v, want none", text[:n], tag)
				}
			case n < end:
				if tag.Status != TagIncomplete {
					t.Fatalf("%q: %+v, want incomplete", text[:n], tag)
				}
			default:
				if tag.Status != TagComplete || tag.End != end {
					t.Fatalf("%q: %+v, want complete ending at %d", text[:n], tag, end)
				}
			}
		}
	}
	// A fragment that cannot become a tool tag is not incomplete.
	if tag := p.Find("<b"); tag.Status != TagNone {
		t.Errorf("<b: %+v", tag)
	}
	if tag := p.Find("x <"); tag.Status != TagIncomplete {
		t.Errorf("trailing <: %+v", tag)
	}
}

func TestFindTagMalformed(t *testing.T) {
	p := NewTagParser(tagTools)
	cases := []struct{ text, want string }{
		{"<check_will>Player 3 <get_role_details>Doctor</get_role_details></check_will>", "cannot be nested"},
		{"<check_will>Player 3<get_role_details>Doctor</get_role_details>", "cannot be nested"},
		{"<check_will>Player 3</get_role_details>", "close it with </check_will>"},
		{"</check_will>", "never opened"},
		{`<check_will player="3">x</check_will>`, "no attributes"},
		{"<get_investigation_results /x", "self-closing"},
		{"<get_role_detail>Doctor</get_role_detail>", "did you mean <get_role_details>"},
	}
	for _, c := range cases {
		tag := p.Find(c.text)
		if tag.Status != TagMalformed || !strings.Contains(tag.Diagnostic, c.want) {
			t.Errorf("Find(%q) = %+v, want malformed with %q", c.text, tag, c.want)
		}
	}
}

func TestFindTagUnknownIgnored(t *testing.T) {
	p := NewTagParser(tagTools)
	for _, text := range []string{"<thinking>I think</thinking>", "<observation>x</observation>", "<launch_missiles>now</launch_missiles>", "plain text"} {
		if tag := p.Find(text); tag.Status != TagNone {
			t.Errorf("Find(%q) = %+v, want none", text, tag)
		}
	}
	// An unknown tag before a tool tag does not hide it.
	if tag := p.Find("<foo>x</foo><check_will>P</check_will>"); tag.Status != TagComplete || tag.Tool != "check_will" {
		t.Errorf("got %+v", tag)
	}
}

func TestFormatObservation(t *testing.T) {
	if got := FormatObservation(" Player 3's Will: hi "); got != "<observation>\nPlayer 3's Will: hi\n</observation>" {
		t.Errorf("got %q", got)
	}
}

// tagTable is sdk/testdata/xmltags.json: the parser contract both SDKs
// share.
type tagTable struct {
	Tools []string `json:"tools"`
	Cases []struct {
		Text, Status, Tool, Arg, Diagnostic string
		Span                                *string
	} `json:"cases"`
}

func loadTagTable(t testing.TB) tagTable {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "xmltags.json"))
	require.NoError(t, err)
	var tt tagTable
	require.NoError(t, json.Unmarshal(b, &tt))
	require.NotEmpty(t, tt.Cases)
	return tt
}

func TestTagTable(t *testing.T) {
	tt := loadTagTable(t)
	p := NewTagParser(tt.Tools)
	for _, c := range tt.Cases {
		tag := p.Find(c.Text)
		require.Equal(t, c.Status, tag.Status.String(), "%q: %+v", c.Text, tag)
		require.Equal(t, c.Tool, tag.Tool, "%q", c.Text)
		require.Equal(t, c.Arg, tag.Arg, "%q", c.Text)
		require.Contains(t, tag.Diagnostic, c.Diagnostic, "%q", c.Text)
		if c.Span != nil {
			require.Equal(t, *c.Span, c.Text[tag.Start:tag.End], "%q", c.Text)
		}
	}
}

// nested is n tool tags opened inside each other, then closed.
func nested(n int) string {
	return strings.Repeat("<check_will>", n) + "Player 3" + strings.Repeat("</check_will>", n)
}

// TestDeepNesting: 20,000 nested tags (and as many unknown tags) are read
// without recursion; BenchmarkDeepNesting measures the time.
func TestDeepNesting(t *testing.T) {
	p := NewTagParser(tagTools)
	tag := p.Find(nested(20000))
	require.Equal(t, TagMalformed, tag.Status)
	require.Contains(t, tag.Diagnostic, "cannot be nested")
	tag = p.Find(strings.Repeat("<get_rol_detailz>", 20000) + "<check_will>x</check_will>")
	require.Equal(t, TagMalformed, tag.Status, "the first look-alike is reported")
	tag = p.Find(strings.Repeat("<b>", 20000) + "<check_will>x" + strings.Repeat("</b>", 20000) + "</check_will>")
	require.Equal(t, TagComplete, tag.Status)
}

func BenchmarkDeepNesting(b *testing.B) {
	p := NewTagParser(tagTools)
	texts := []string{nested(20000), "<check_will>" + strings.Repeat("<b>", 20000) + strings.Repeat("</b>", 20000) + "</check_will>"}
	b.ResetTimer()
	for range b.N {
		for _, s := range texts {
			if p.Find(s).Status == TagNone {
				b.Fatal("no tag")
			}
		}
	}
}
