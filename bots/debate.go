package bots

import (
	"context"
	"fmt"
	"strings"

	"github.com/arena-sim/arena/world"
)

// Debater is the "debater" bot: a participant of the debate component
// (components.debate), debater or judge as its section says. Each turn it
// does what the phase asks of it, from templates over the task, its role and
// the contributions its section shows:
//
//   - proposal: proposes its role's approach to the task;
//   - critique: critiques the first debater it still owes a critique, naming
//     what that proposal leaves to its own role;
//   - refinement: once per phase, when its tools include context_search,
//     first searches the debate for its role's keyword; then refines its
//     proposal, answering each critic by id;
//   - evaluation (judge): a confidence that rises with the round (50 + 20 per
//     round, at most 100);
//   - synthesis (judge): merges the refinements it is shown, with confidence
//     60 + 10 per round (at most 100);
//   - otherwise do_nothing.
//
// Its choices depend only on its observations, so it is deterministic and
// plays alike in process and over the wire.
type Debater struct {
	info     Info
	searched string // the round and phase of its last search
}

// NewDebater creates a debater bot.
func NewDebater(info Info) *Debater { return &Debater{info: info} }

// roleFocus is what each role cares about.
var roleFocus = map[string][2]string{
	"architect":    {"modular components behind clear interfaces", "interface"},
	"security":     {"authentication, input validation and least privilege", "validation"},
	"performance":  {"caching, batching and a latency budget", "latency"},
	"testing":      {"automated tests and failure injection", "tests"},
	"generalist":   {"a balanced trade-off between cost and quality", "trade-off"},
	"kiss":         {"the simplest design that could possibly work", "simplest"},
	"datamodeling": {"a clean data model with versioned schemas", "schema"},
}

func focusOf(role string) (string, string) {
	if f, ok := roleFocus[role]; ok {
		return f[0], f[1]
	}
	return "what a " + role + " would insist on", role
}

// Decide implements Bot.
func (b *Debater) Decide(_ context.Context, obs *world.Observation) world.Decision {
	sec := SectionOf(obs, "debate")
	if sec == nil || !obs.Alive {
		return world.Idle("no debate here")
	}
	if p, _ := sec["participant"].(bool); !p {
		return world.Decision{Tool: "do_nothing", Reasoning: "not taking part in the debate"}
	}
	phase, role, task := StrOf(sec["phase"]), StrOf(sec["role"]), shortTask(StrOf(sec["task"]))
	round := int(NumOf(sec["round"]))
	owed := ListOf(sec["owed"])
	judge, _ := sec["is_judge"].(bool)
	if len(owed) == 0 {
		return world.Decision{Tool: "do_nothing", Reasoning: "nothing owed in the " + phase + " phase"}
	}
	contribs := ListOf(sec["contributions"])
	focus, keyword := focusOf(role)
	if judge {
		switch phase {
		case "evaluation":
			return world.Decision{Tool: "evaluate", Params: map[string]any{"confidence": float64(min(100, 50+20*round))},
				Reasoning: fmt.Sprintf("round %d's refinements are converging", round)}
		case "synthesis":
			// The refinements (the proposals when there are none), each clipped.
			var parts []string
			for _, typ := range []string{"refinement", "proposal"} {
				for _, c := range contribs {
					if m := MapOf(c); StrOf(m["type"]) == typ {
						parts = append(parts, fmt.Sprintf("from %s (%s): %s", StrOf(m["agent_id"]), StrOf(m["agent_role"]), clip(StrOf(m["content"]), 200)))
					}
				}
				if len(parts) > 0 {
					break
				}
			}
			text := clip(fmt.Sprintf("Synthesis for %s after %d round(s). ", task, round)+strings.Join(parts, " | "), 1500)
			return world.Decision{Tool: "synthesize", Params: map[string]any{"content": text, "confidence": float64(min(100, 60+10*round))},
				Reasoning: "merging the refinements"}
		}
		return world.Decision{Tool: "do_nothing", Reasoning: "waiting"}
	}
	me := obs.AgentID
	if me == "" {
		me = b.info.AgentID
	}
	switch phase {
	case "proposal":
		return world.Decision{Tool: "propose", Params: map[string]any{"content": fmt.Sprintf(
			"As the %s, I propose we approach %s through %s. The first step is to agree on the %s, then build the rest around it.",
			role, task, focus, keyword)}, Reasoning: "my role's proposal"}
	case "critique":
		target := StrOf(owed[0])
		their := ""
		for _, c := range contribs {
			m := MapOf(c)
			if StrOf(m["agent_id"]) == target && StrOf(m["type"]) == "proposal" {
				their = StrOf(m["content"])
			}
		}
		return world.Decision{Tool: "critique", Params: map[string]any{"target_agent_id": target, "content": fmt.Sprintf(
			"Critique of %s's proposal (%q): it is a reasonable start for %s, but from the %s's side it says too little about %s.",
			target, clip(their, 80), task, role, focus)}, Reasoning: "critiquing " + target}
	case "refinement":
		key := fmt.Sprintf("%d/%s", round, phase)
		if hasTool(sec, "context_search") && NumOf(sec["tool_calls_left"]) > 0 && b.searched != key {
			b.searched = key
			return world.Decision{Tool: "context_search", Params: map[string]any{"term": keyword},
				Reasoning: "checking what the debate said about " + keyword}
		}
		var critics []string
		mine := ""
		for _, c := range contribs {
			m := MapOf(c)
			switch {
			case StrOf(m["type"]) == "critique" && StrOf(m["target_agent_id"]) == me:
				critics = append(critics, StrOf(m["agent_id"]))
			case StrOf(m["type"]) == "proposal" && StrOf(m["agent_id"]) == me:
				mine = StrOf(m["content"])
			}
		}
		answer := "No critiques reached me, so I keep my approach."
		if len(critics) > 0 {
			answer = "Answering " + strings.Join(critics, " and ") + ": I now cover their concerns explicitly."
		}
		return world.Decision{Tool: "refine", Params: map[string]any{"content": fmt.Sprintf(
			"Refined (round %d), as the %s: %s %s Core: %s", round, role, answer,
			"I keep "+focus+" and add the other roles' points as constraints.", clip(firstSentence(mine), 200))},
			Reasoning: "refining my proposal"}
	}
	return world.Decision{Tool: "do_nothing", Reasoning: "waiting"}
}

func hasTool(sec map[string]any, name string) bool {
	for _, t := range ListOf(sec["tools"]) {
		if StrOf(t) == name {
			return true
		}
	}
	return false
}

func shortTask(t string) string {
	t = strings.TrimSpace(t)
	if t == "" {
		return "the task"
	}
	return clip(strings.TrimRight(t, ".?!"), 120)
}

// clip keeps the first n characters.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
