package roles

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// categories are the classic role-list categories and the roles each may draw.
var categories = withRandom(map[string][]string{
	"Town Investigative": {"Investigator", "Lookout", "Sheriff", "Spy"},
	"Town Protective":    {"Bodyguard", "Doctor"},
	"Town Killing":       {"Jailor", "Vampire Hunter", "Veteran", "Vigilante"},
	"Town Support":       {"Escort", "Mayor", "Medium", "Retributionist", "Transporter"},
	"Mafia Deception":    {"Disguiser", "Forger", "Framer", "Janitor"},
	"Mafia Killing":      {"Godfather", "Mafioso"},
	"Mafia Support":      {"Blackmailer", "Consigliere", "Consort"},
	"Neutral Benign":     {"Amnesiac", "Survivor"},
	"Neutral Evil":       {"Executioner", "Jester", "Witch"},
	"Neutral Killing":    {"Arsonist", "Serial Killer", "Werewolf"},
	"Neutral Chaos":      {"Vampire"},
})

// withRandom adds the Random and Any categories, unions of the alignments.
func withRandom(categories map[string][]string) map[string][]string {
	cat := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, categories[n]...)
		}
		slices.Sort(out)
		return out
	}
	categories["Random Town"] = cat("Town Investigative", "Town Protective", "Town Killing", "Town Support")
	categories["Random Mafia"] = cat("Mafia Deception", "Mafia Killing", "Mafia Support")
	categories["Random Neutral"] = cat("Neutral Benign", "Neutral Evil", "Neutral Killing", "Neutral Chaos")
	categories["Any"] = cat("Random Town", "Random Mafia", "Random Neutral")
	return categories
}

// setupList is a role list: a game of n players takes the first n slots, and
// needs at least min players. A slot is a role or a category.
type setupList struct {
	min   int
	slots []string
}

// setupLists are the selectable role lists (config setup_list).
var setupLists = map[string]setupList{
	// The 7-to-15-player list of earlier versions, over the full classic categories.
	"default": {7, []string{
		"Town Investigative", "Town Protective", "Godfather", "Town Investigative", "Mafioso", "Town Support",
		"Neutral Evil", "Random Town", "Random Mafia", "Town Killing", "Neutral Killing", "Random Town",
		"Random Neutral", "Random Town", "Random Mafia",
	}},
	// Town of Salem's Classic list.
	"classic": {15, []string{
		"Sheriff", "Doctor", "Investigator", "Jailor", "Medium", "Godfather", "Framer", "Executioner",
		"Escort", "Mafioso", "Lookout", "Serial Killer", "Town Killing", "Jester", "Random Town",
	}},
	// Town of Salem's Ranked Practice list.
	"ranked_practice": {15, []string{
		"Jailor", "Town Investigative", "Town Investigative", "Town Protective", "Town Killing", "Town Support",
		"Random Town", "Random Town", "Random Town", "Godfather", "Mafioso", "Random Mafia", "Random Mafia",
		"Neutral Evil", "Neutral Killing",
	}},
	// Town of Salem's All Any list.
	"all_any": {15, slices.Repeat([]string{"Any"}, 15)},
}

// SetupLists names the selectable role lists, sorted.
func SetupLists() []string { return slices.Sorted(maps.Keys(setupLists)) }

// SetupSlots returns a role list's slots, or nil for an unknown list.
func SetupSlots(list string) []string { return slices.Clone(setupLists[list].slots) }

// Category returns the roles a category may draw, or nil.
func Category(name string) []string { return slices.Clone(categories[name]) }

// checkSetups checks that every category names only roles of the data store,
// every slot of every list is a role or a category, and every role can be
// dealt by some list.
func checkSetups() error {
	for _, name := range slices.Sorted(maps.Keys(categories)) {
		for _, r := range categories[name] {
			if _, ok := cardByName[r]; !ok {
				return fmt.Errorf("roles: category %q names %q, which is not in the data store", name, r)
			}
		}
	}
	reach := map[string]bool{}
	for _, name := range SetupLists() {
		for i, s := range setupLists[name].slots {
			switch {
			case cardByName[s] != nil:
				reach[s] = true
			case categories[s] != nil:
				for _, r := range categories[s] {
					reach[r] = true
				}
			default:
				return fmt.Errorf("roles: setup list %q slot %d: %q is neither a role nor a category", name, i+1, s)
			}
		}
	}
	for _, c := range cards {
		if !reach[c.Name] {
			return fmt.Errorf("roles: no setup list can deal the %s", c.Name)
		}
	}
	return nil
}

// slotOrder is the order slots are drawn in: named roles first, then the
// narrow categories, then the Random ones, then Any, so that a random slot
// never takes a unique role a named slot needs.
func slotOrder(slots []string) []int {
	rank := func(s string) int {
		switch {
		case cardByName[s] != nil:
			return 0
		case s == "Any":
			return 3
		case strings.HasPrefix(s, "Random "):
			return 2
		}
		return 1
	}
	order := make([]int, len(slots))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(slots[a]) - rank(slots[b]) })
	return order
}

// draw deals n roles from the configured list with the component's random
// stream, then shuffles them over the seats. Unique roles are dealt once; a
// Vampire Hunter only with a Vampire (its slot is drawn again without it); a
// deal with fewer than two opposing sides (which would be over before it
// began, possible only in All Any) is drawn again.
func (g *Game) draw(n int) ([]string, error) {
	list := setupLists[g.cfg.SetupList]
	if n < list.min || n > len(list.slots) {
		return nil, fmt.Errorf("roles: setup list %q is for %d to %d players, the scenario has %d agents", g.cfg.SetupList, list.min, len(list.slots), n)
	}
	slots := list.slots[:n]
	for attempt := 0; ; attempt++ {
		out := make([]string, n)
		used := map[string]bool{}
		pick := func(i int, without string) error {
			s := slots[i]
			if cardByName[s] != nil {
				out[i] = s
				used[s] = true
				return nil
			}
			var cands []string
			for _, r := range categories[s] {
				if r != without && !(cardByName[r].Unique && used[r]) {
					cands = append(cands, r)
				}
			}
			if len(cands) == 0 {
				return fmt.Errorf("roles: setup list %q: slot %d (%s) has no role left to deal", g.cfg.SetupList, i+1, s)
			}
			out[i] = cands[g.rng.IntN(len(cands))]
			used[out[i]] = true
			return nil
		}
		for _, i := range slotOrder(slots) {
			if err := pick(i, ""); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(out, "Vampire") {
			for i := range out {
				if out[i] == "Vampire Hunter" {
					if err := pick(i, "Vampire Hunter"); err != nil {
						return nil, err
					}
				}
			}
		}
		if sides(out) >= 2 || attempt >= 100 {
			g.rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
			return out, nil
		}
	}
}

// sides counts the opposing sides among roles.
func sides(roles []string) int {
	seen := map[string]bool{}
	for _, r := range roles {
		if s := sideOf(r); s != "" {
			seen[s] = true
		}
	}
	return len(seen)
}
