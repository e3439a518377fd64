package roles

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/arena-sim/arena/internal/fuzzy"
)

//go:embed data/*.json
var dataFS embed.FS

// Card is one role card of the data store.
type Card struct {
	Name            string   `json:"name"`
	Faction         string   `json:"faction"`   // Town, Mafia or Neutral
	Alignment       string   `json:"alignment"` // e.g. "Town Investigative"
	Abilities       []string `json:"abilities"`
	Attributes      []string `json:"attributes"`
	Attack          int      `json:"attack"`   // 0 None, 1 Basic, 2 Powerful, 3 Unstoppable
	Defense         int      `json:"defense"`  // 0 None, 1 Basic, 2 Powerful, 3 Invincible
	Priority        int      `json:"priority"` // night priority, 1 first; 0 for no night action
	Unique          bool     `json:"unique"`
	RoleblockImmune bool     `json:"roleblock_immune,omitempty"`
	DetectionImmune bool     `json:"detection_immune,omitempty"`
	ControlImmune   bool     `json:"control_immune,omitempty"` // a Witch cannot control it
	DayAction       string   `json:"day_action,omitempty"`     // the role's day tool (jail, reveal, seance); "" for none
	NightAction     string   `json:"night_action,omitempty"`   // what night_action does; "" for none
	Goal            string   `json:"goal"`
}

var (
	cards      []Card
	cardByName map[string]*Card
	cardNames  []string
	invGroups  [][]string
)

func init() {
	raw, err := dataFS.ReadFile("data/roles.json")
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(raw, &cards); err != nil {
		panic(fmt.Sprintf("roles: data/roles.json: %v", err))
	}
	cardByName = map[string]*Card{}
	for i := range cards {
		cardByName[cards[i].Name] = &cards[i]
		cardNames = append(cardNames, cards[i].Name)
	}
	raw, err = dataFS.ReadFile("data/investigator.json")
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(raw, &invGroups); err != nil {
		panic(fmt.Sprintf("roles: data/investigator.json: %v", err))
	}
	if err := checkStore(); err != nil {
		panic(err)
	}
}

// checkStore checks the data store: every role in an investigator group
// exists, every role is in exactly one group, and every category and setup
// names only roles of the store.
func checkStore() error {
	seen := map[string]int{}
	for i, g := range invGroups {
		for _, r := range g {
			if _, ok := cardByName[r]; !ok {
				return fmt.Errorf("roles: investigator group %d names %q, which is not in the data store", i+1, r)
			}
			seen[r]++
		}
	}
	for _, c := range cards {
		if seen[c.Name] != 1 {
			return fmt.Errorf("roles: %s is in %d investigator groups, want exactly 1", c.Name, seen[c.Name])
		}
	}
	return checkSetups()
}

// Cards returns every role card of the data store.
func Cards() []Card { return slices.Clone(cards) }

// Lookup returns a role card by its exact, case-sensitive name.
func Lookup(name string) (Card, bool) {
	c, ok := cardByName[name]
	if !ok {
		return Card{}, false
	}
	return *c, true
}

// ClosestNames lists up to n role names nearest to name (case-insensitive edit
// distance, then alphabetical), for an error message.
func ClosestNames(name string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	l := strings.ToLower(name)
	for _, c := range cardNames {
		d := fuzzy.Distance(l, strings.ToLower(c))
		if strings.Contains(strings.ToLower(c), l) && l != "" {
			d = min(d, 1)
		}
		cs = append(cs, cand{c, d})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// InvestigatorGroups returns the classic investigator result groups.
func InvestigatorGroups() [][]string {
	out := make([][]string, len(invGroups))
	for i := range invGroups {
		out[i] = slices.Clone(invGroups[i])
	}
	return out
}

// groupOf returns the investigator group holding a role, or just the role.
func groupOf(role string) []string {
	for _, g := range invGroups {
		if slices.Contains(g, role) {
			return g
		}
	}
	return []string{role}
}

// Text renders a card as seed 001's get_role_details observation: role,
// alignment, abilities, attributes and goal, one bold-labelled line each.
// Attack, defense and uniqueness are in the tool's structured result.
func (c Card) Text() string {
	return fmt.Sprintf("**Role: %s**\n- **Alignment:** %s\n- **Abilities:** %s\n- **Attributes:** %s\n- **Goal:** %s",
		c.Name, c.Alignment, strings.Join(c.Abilities, " "), strings.Join(c.Attributes, " "), c.Goal)
}

var (
	attackNames  = []string{"None", "Basic", "Powerful", "Unstoppable"}
	defenseNames = []string{"None", "Basic", "Powerful", "Invincible"}
)
